# FindFLINT: locate FLINT 2.x (Debian 12 ships no .pc file and no CMake config).
# Exports the imported target FLINT::FLINT and FLINT_VERSION.
find_path(FLINT_INCLUDE_DIR NAMES flint/flint.h)
find_library(FLINT_LIBRARY NAMES flint)
if(FLINT_INCLUDE_DIR AND EXISTS "${FLINT_INCLUDE_DIR}/flint/flint.h")
  file(STRINGS "${FLINT_INCLUDE_DIR}/flint/flint.h" _flint_ver REGEX "^#define FLINT_VERSION \"[0-9.]+\"")
  string(REGEX REPLACE ".*\"([0-9.]+)\".*" "\\1" FLINT_VERSION "${_flint_ver}")
endif()
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(FLINT REQUIRED_VARS FLINT_LIBRARY FLINT_INCLUDE_DIR VERSION_VAR FLINT_VERSION)
if(FLINT_FOUND AND NOT TARGET FLINT::FLINT)
  add_library(FLINT::FLINT UNKNOWN IMPORTED)
  # FLINT headers include each other as "flint.h", so expose the flint/ folder too.
  set_target_properties(FLINT::FLINT PROPERTIES
    IMPORTED_LOCATION "${FLINT_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${FLINT_INCLUDE_DIR};${FLINT_INCLUDE_DIR}/flint")
endif()
mark_as_advanced(FLINT_INCLUDE_DIR FLINT_LIBRARY)
