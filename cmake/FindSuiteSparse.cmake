# FindSuiteSparse: Debian 12 ships SuiteSparse 5.12 without CMake config files.
# Defines SuiteSparse_FOUND and the imported target SuiteSparse::SuiteSparse
# (CHOLMOD, UMFPACK, KLU, BTF, AMD, CAMD, COLAMD, CCOLAMD, RBio, SuiteSparse_config).
find_path(SuiteSparse_INCLUDE_DIR NAMES cholmod.h PATH_SUFFIXES suitesparse)
set(_ss_components cholmod umfpack klu btf amd camd colamd ccolamd rbio suitesparseconfig)
set(SuiteSparse_LIBRARIES "")
foreach(c ${_ss_components})
  find_library(SuiteSparse_${c}_LIBRARY NAMES ${c})
  if(SuiteSparse_${c}_LIBRARY)
    list(APPEND SuiteSparse_LIBRARIES ${SuiteSparse_${c}_LIBRARY})
  else()
    set(_ss_missing "${_ss_missing} ${c}")
  endif()
endforeach()
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(SuiteSparse
  REQUIRED_VARS SuiteSparse_INCLUDE_DIR SuiteSparse_cholmod_LIBRARY SuiteSparse_umfpack_LIBRARY
                SuiteSparse_klu_LIBRARY SuiteSparse_amd_LIBRARY SuiteSparse_suitesparseconfig_LIBRARY
  FAIL_MESSAGE "SuiteSparse not found (apt-get install libsuitesparse-dev)")
if(SuiteSparse_FOUND AND NOT TARGET SuiteSparse::SuiteSparse)
  add_library(SuiteSparse::SuiteSparse INTERFACE IMPORTED)
  set_target_properties(SuiteSparse::SuiteSparse PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${SuiteSparse_INCLUDE_DIR}"
    INTERFACE_LINK_LIBRARIES "${SuiteSparse_LIBRARIES}")
endif()
mark_as_advanced(SuiteSparse_INCLUDE_DIR)
