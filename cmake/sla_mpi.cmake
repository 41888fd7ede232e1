# libsla_mpi: distributed matrices over MPI (src/mpi, include/sla/mpi.h), a separate shared
# library on top of libsla, built when SLA_WITH_MPI is ON and an MPI for C is found. PT-Scotch
# (libptscotch-dev) is optional: without it the PT-Scotch partitioner says it is not compiled in.
set(SLA_MPI_BUILT OFF)
find_package(MPI COMPONENTS C)
if(NOT MPI_C_FOUND)
  message(STATUS "sla: MPI for C not found: libsla_mpi is not built (apt-get install libopenmpi-dev)")
  return()
endif()
set(SLA_MPI_BUILT ON)

find_path(SLA_PTSCOTCH_INCLUDE NAMES ptscotch.h PATH_SUFFIXES scotch)
find_library(SLA_PTSCOTCH_LIB NAMES ptscotch)
find_library(SLA_SCOTCH_LIB NAMES scotch)
set(SLA_HAVE_PTSCOTCH OFF)
if(SLA_PTSCOTCH_INCLUDE AND SLA_PTSCOTCH_LIB AND SLA_SCOTCH_LIB)
  set(SLA_HAVE_PTSCOTCH ON)
endif()
# hypre (libhypre-dev, MPI-enabled): BoomerAMG as a preconditioner of the distributed solvers;
# optional (without it precond boomeramg says it is not compiled in)
find_path(SLA_HYPRE_MPI_INCLUDE NAMES HYPRE_parcsr_ls.h PATH_SUFFIXES hypre)
find_library(SLA_HYPRE_MPI_LIB NAMES HYPRE)
set(SLA_HAVE_HYPRE OFF)
if(SLA_HYPRE_MPI_INCLUDE AND SLA_HYPRE_MPI_LIB)
  set(SLA_HAVE_HYPRE ON)
endif()
# SuperLU_DIST (libsuperlu-dist-dev): the distributed direct LU (src/mpi/lu_superlu.c); optional
find_path(SLA_SUPERLU_DIST_INCLUDE NAMES superlu_ddefs.h PATH_SUFFIXES superlu-dist superlu_dist)
find_library(SLA_SUPERLU_DIST_LIB NAMES superlu_dist)
set(SLA_HAVE_SUPERLU_DIST OFF)
if(SLA_SUPERLU_DIST_INCLUDE AND SLA_SUPERLU_DIST_LIB)
  set(SLA_HAVE_SUPERLU_DIST ON)
endif()
# Parallel MUMPS (libmumps-dev: libdmumps, MPI): the distributed log-determinant gradient's
# selected inverse (src/mpi/lu_logdet_mumps.c); optional. Not linked: its symbols (dmumps_c, the
# Fortran routines, the mumps_common ones) are the names of the sequential MUMPS libsla links,
# so it is dlopen'ed with RTLD_DEEPBIND at its installed path (src/mpi/pmumps.c). Not in a
# sanitizer build (the ASan runtime refuses RTLD_DEEPBIND and ends the process).
find_library(SLA_PMUMPS_LIB NAMES dmumps)
find_path(SLA_PMUMPS_INCLUDE NAMES dmumps_c.h)
set(SLA_HAVE_PMUMPS OFF)
if(SLA_PMUMPS_LIB AND SLA_PMUMPS_INCLUDE AND NOT SLA_SANITIZE AND CMAKE_DL_LIBS)
  get_filename_component(SLA_PMUMPS_PATH "${SLA_PMUMPS_LIB}" REALPATH)
  set(SLA_HAVE_PMUMPS ON)
endif()
message(STATUS "sla: libsla_mpi with MPI ${MPI_C_VERSION}, METIS ${SLA_HAVE_METIS}, PT-Scotch ${SLA_HAVE_PTSCOTCH}, SuperLU_DIST ${SLA_HAVE_SUPERLU_DIST}, hypre ${SLA_HAVE_HYPRE}, parallel MUMPS ${SLA_HAVE_PMUMPS}")
configure_file(cmake/mpi_config.h.in "${CMAKE_CURRENT_BINARY_DIR}/include/sla/mpi_config.h" @ONLY)

file(GLOB SLA_MPI_SOURCES CONFIGURE_DEPENDS "${CMAKE_CURRENT_SOURCE_DIR}/src/mpi/*.c")
add_library(sla_mpi SHARED ${SLA_MPI_SOURCES})
add_library(sla::sla_mpi ALIAS sla_mpi)
set_target_properties(sla_mpi PROPERTIES VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR}
                                         C_VISIBILITY_PRESET hidden)
target_compile_definitions(sla_mpi PRIVATE SLA_BUILDING_LIBRARY)
target_include_directories(sla_mpi PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src)
target_link_libraries(sla_mpi PUBLIC sla MPI::MPI_C PRIVATE OpenMP::OpenMP_C ${M_LIB})
if(SLA_HAVE_METIS)
  target_include_directories(sla_mpi PRIVATE ${SLA_METIS_INCLUDE})
  target_link_libraries(sla_mpi PRIVATE ${SLA_METIS_LIB})
endif()
if(SLA_HAVE_SUPERLU_DIST)
  target_include_directories(sla_mpi PRIVATE ${SLA_SUPERLU_DIST_INCLUDE})
  target_link_libraries(sla_mpi PRIVATE ${SLA_SUPERLU_DIST_LIB} SuiteSparse::SuiteSparse)   # btf
endif()
if(SLA_HAVE_PMUMPS)
  target_include_directories(sla_mpi PRIVATE ${SLA_PMUMPS_INCLUDE})
  target_compile_definitions(sla_mpi PRIVATE SLA_PMUMPS_PATH="${SLA_PMUMPS_PATH}")
  target_link_libraries(sla_mpi PRIVATE ${CMAKE_DL_LIBS})
endif()
if(SLA_HAVE_PTSCOTCH)
  target_include_directories(sla_mpi PRIVATE ${SLA_PTSCOTCH_INCLUDE})
  target_link_libraries(sla_mpi PRIVATE ${SLA_PTSCOTCH_LIB} ${SLA_SCOTCH_LIB})
endif()

if(SLA_HAVE_HYPRE)
  target_include_directories(sla_mpi PRIVATE ${SLA_HYPRE_MPI_INCLUDE})
  target_link_libraries(sla_mpi PRIVATE ${SLA_HYPRE_MPI_LIB})
endif()

install(TARGETS sla_mpi EXPORT slaTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES include/sla/mpi.h "${CMAKE_CURRENT_BINARY_DIR}/include/sla/mpi_config.h"
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/sla)

# sla_mpi.pc (called after sla.pc's variables are set): requires sla and the MPI's own .pc
# when pkg-config knows it (Debian: mpi-c), else carries the MPI flags CMake found.
function(sla_mpi_pkgconfig)
  pkg_check_modules(SLA_MPI_PC QUIET mpi-c)
  if(SLA_MPI_PC_FOUND)
    set(SLA_MPI_PC_REQUIRES "sla mpi-c")
    set(SLA_MPI_PC_CFLAGS "")
    set(SLA_MPI_PC_LIBS "")
  else()
    set(SLA_MPI_PC_REQUIRES "sla")
    list(TRANSFORM MPI_C_INCLUDE_DIRS PREPEND "-I" OUTPUT_VARIABLE incs)
    string(JOIN " " SLA_MPI_PC_CFLAGS ${incs})
    string(JOIN " " SLA_MPI_PC_LIBS ${MPI_C_LIBRARIES})
  endif()
  configure_file(cmake/sla_mpi.pc.in "${CMAKE_CURRENT_BINARY_DIR}/sla_mpi.pc" @ONLY)
  install(FILES "${CMAKE_CURRENT_BINARY_DIR}/sla_mpi.pc" DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endfunction()
