# libsla_cuda: the CUDA backend (src/cuda, include/sla/cuda.h), a separate shared library on
# top of libsla. SLA_CUDA = AUTO (default): built when CMake finds nvcc and the CUDA toolkit
# (cuSPARSE, cuBLAS' runtime); ON: required; OFF: not built. A machine without a GPU builds it
# too: the library probes for a device at run time and says "no CUDA device" when there is
# none. Architectures: SLA_CUDA_ARCHITECTURES (default "90-real;90-virtual": H100/H200 code
# plus PTX that newer GPUs JIT-compile), kept short so that CI compiles quickly.
set(SLA_CUDA_BUILT OFF)
if(SLA_CUDA STREQUAL "OFF")
  return()
endif()
if(NOT CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX} AND EXISTS /usr/local/cuda/bin/nvcc)
  set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
endif()
include(CheckLanguage)
check_language(CUDA)
if(NOT CMAKE_CUDA_COMPILER)
  if(SLA_CUDA STREQUAL "ON")
    message(FATAL_ERROR "SLA_CUDA=ON but no CUDA compiler (nvcc) was found")
  endif()
  message(STATUS "sla: nvcc not found: libsla_cuda is not built")
  return()
endif()
if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
  set(CMAKE_CUDA_ARCHITECTURES "90-real;90-virtual")
endif()
set(SLA_CUDA_ARCHITECTURES "${CMAKE_CUDA_ARCHITECTURES}" CACHE STRING "CUDA architectures of libsla_cuda")
set(CMAKE_CUDA_ARCHITECTURES "${SLA_CUDA_ARCHITECTURES}")
enable_language(CUDA)
find_package(CUDAToolkit)
if(NOT CUDAToolkit_FOUND OR NOT TARGET CUDA::cusparse)
  if(SLA_CUDA STREQUAL "ON")
    message(FATAL_ERROR "SLA_CUDA=ON but the CUDA toolkit (cudart, cuSPARSE) was not found")
  endif()
  message(STATUS "sla: CUDA toolkit without cuSPARSE: libsla_cuda is not built")
  return()
endif()
set(SLA_CUDA_BUILT ON)
message(STATUS "sla: libsla_cuda with CUDA ${CUDAToolkit_VERSION}, architectures ${CMAKE_CUDA_ARCHITECTURES}")

file(GLOB SLA_CUDA_SOURCES CONFIGURE_DEPENDS "${CMAKE_CURRENT_SOURCE_DIR}/src/cuda/*.cu")
add_library(sla_cuda SHARED ${SLA_CUDA_SOURCES})
add_library(sla::sla_cuda ALIAS sla_cuda)
set_target_properties(sla_cuda PROPERTIES VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR}
                                          CUDA_STANDARD 17 CUDA_STANDARD_REQUIRED ON
                                          CUDA_VISIBILITY_PRESET hidden
                                          CUDA_RUNTIME_LIBRARY Shared)
target_compile_definitions(sla_cuda PRIVATE SLA_BUILDING_LIBRARY)
# The project's compile options (warnings; -fsanitize=... in SLA_SANITIZE builds) are host
# compiler options that nvcc itself refuses: hand each to the host compiler instead.
get_directory_property(_sla_dir_opts COMPILE_OPTIONS)
set_property(TARGET sla_cuda PROPERTY COMPILE_OPTIONS "")
foreach(_o ${_sla_dir_opts})
  # nvcc splits -Xcompiler at commas: -fsanitize=address,undefined goes as one flag per value
  set(_vals "${_o}")
  if(_o MATCHES "^(-f[a-z-]+=)(.*,.*)$")
    set(_prefix "${CMAKE_MATCH_1}")
    string(REPLACE "," ";" _vals "${CMAKE_MATCH_2}")
    list(TRANSFORM _vals PREPEND "${_prefix}")
  endif()
  foreach(_v ${_vals})
    target_compile_options(sla_cuda PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=${_v}>)
  endforeach()
endforeach()
target_include_directories(sla_cuda PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src)
target_link_libraries(sla_cuda PUBLIC sla PRIVATE CUDA::cudart CUDA::cusparse)

install(TARGETS sla_cuda EXPORT slaTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES include/sla/cuda.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/sla)
