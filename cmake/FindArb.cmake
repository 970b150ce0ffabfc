# FindArb: locate Arb 2.x (Debian 12: package libflint-arb-dev, library flint-arb,
# headers arb.h, acb_poly.h ... directly in the include root). Exports Arb::Arb.
find_path(ARB_INCLUDE_DIR NAMES arb.h)
find_library(ARB_LIBRARY NAMES flint-arb arb)
if(ARB_INCLUDE_DIR AND EXISTS "${ARB_INCLUDE_DIR}/arb.h")
  file(STRINGS "${ARB_INCLUDE_DIR}/arb.h" _arb_ver REGEX "^#define __ARB_VERSION(_MINOR|_PATCHLEVEL)? [0-9]+")
  string(REGEX REPLACE ".*__ARB_VERSION ([0-9]+).*" "\\1" _a "${_arb_ver}")
  string(REGEX REPLACE ".*__ARB_VERSION_MINOR ([0-9]+).*" "\\1" _b "${_arb_ver}")
  string(REGEX REPLACE ".*__ARB_VERSION_PATCHLEVEL ([0-9]+).*" "\\1" _c "${_arb_ver}")
  set(Arb_VERSION "${_a}.${_b}.${_c}")
endif()
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(Arb REQUIRED_VARS ARB_LIBRARY ARB_INCLUDE_DIR VERSION_VAR Arb_VERSION)
if(Arb_FOUND AND NOT TARGET Arb::Arb)
  add_library(Arb::Arb UNKNOWN IMPORTED)
  set_target_properties(Arb::Arb PROPERTIES
    IMPORTED_LOCATION "${ARB_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${ARB_INCLUDE_DIR}"
    INTERFACE_LINK_LIBRARIES "FLINT::FLINT")
endif()
mark_as_advanced(ARB_INCLUDE_DIR ARB_LIBRARY)
