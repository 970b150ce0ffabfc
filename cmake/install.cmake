# Install rules (docs/library.md): public headers, libmhaq and libmhaq_check, the
# mhaq program, a relocatable CMake package and a pkg-config file.
#   find_package(mhaq 0.1 REQUIRED)   ->  mhaq::mhaq (learner, oracles, analysis, run drivers, evidence but the lemma checks), mhaq::check (certificate checker)
# The config finds GMP/MPFR, FLINT and Arb with the find modules installed
# next to it (Debian ships no CMake config for them), and nlohmann_json (and
# MPI for -DMHAQ_MPI=ON builds) with their own configs.
include(CMakePackageConfigHelpers)
set(MHAQ_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/mhaq)

install(TARGETS mhaq_lib mhaq_check EXPORT mhaqTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS mhaq RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# the lemma checks' header goes with their library, mhaq_evidence, which is not installed
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/mhaq DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} PATTERN "prove.hpp" EXCLUDE)
install(EXPORT mhaqTargets NAMESPACE mhaq:: DESTINATION ${MHAQ_CMAKE_DIR})
install(FILES ${PROJECT_SOURCE_DIR}/cmake/FindGMPMPFR.cmake ${PROJECT_SOURCE_DIR}/cmake/FindFLINT.cmake ${PROJECT_SOURCE_DIR}/cmake/FindArb.cmake
        DESTINATION ${MHAQ_CMAKE_DIR}/modules)

set(MHAQ_CONFIG_MPI ${MHAQ_MPI})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/mhaqConfig.cmake.in ${PROJECT_BINARY_DIR}/mhaqConfig.cmake
                              INSTALL_DESTINATION ${MHAQ_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/mhaqConfigVersion.cmake VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/mhaqConfig.cmake ${PROJECT_BINARY_DIR}/mhaqConfigVersion.cmake DESTINATION ${MHAQ_CMAKE_DIR})

# mhaq.pc, relocatable: the prefix is found from the file's own directory.
file(RELATIVE_PATH MHAQ_PC_UP "/root/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/root")
string(REGEX REPLACE "/$" "" MHAQ_PC_UP "${MHAQ_PC_UP}")
set(MHAQ_PC_LIBS "${ARB_LIBRARY} ${FLINT_LIBRARY} ${MPFR_LIBRARY} ${GMP_LIBRARY}")
if(MHAQ_MPI)
  string(JOIN " " _mpi_libs ${MPI_C_LIBRARIES})
  string(APPEND MHAQ_PC_LIBS " ${_mpi_libs}")
endif()
# FLINT's headers include each other as "flint.h": its folder goes on the path too.
set(MHAQ_PC_CFLAGS "-I${FLINT_INCLUDE_DIR}/flint")
configure_file(${PROJECT_SOURCE_DIR}/cmake/mhaq.pc.in ${PROJECT_BINARY_DIR}/mhaq.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/mhaq.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
