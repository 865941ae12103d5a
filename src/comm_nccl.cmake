# The NCCL backend (DESIGN.md section 4), included by src/CMakeLists.txt.
#
# XFFL_WITH_CUDA: AUTO (default) builds it when the CUDA toolkit and NCCL are found, ON requires
# them, OFF never looks. NCCL ships no CMake or pkg-config file: find_path / find_library with the
# toolkit as hint (NCCL_ROOT or NCCL_HOME point elsewhere). Only CUDA::cudart is linked, never the
# driver stub (CUDA::cuda_driver), so every binary starts on a machine without a GPU; there, CUDA
# calls answer with CUDA's own error and xffl returns XFFL_EUNSUPPORTED with those words.
#
# The backend's logic (split colours, sharing, stream pool, watchdog) has no CUDA dependency: it is
# the object library xffl_nccl_logic, built always so the unit tests with a fake NCCL run anywhere,
# and part of libxffl only when NCCL is found.
include_guard(GLOBAL)
set(XFFL_WITH_CUDA AUTO CACHE STRING "Build the NCCL backend: AUTO (when CUDA and NCCL are found), ON, OFF")
set_property(CACHE XFFL_WITH_CUDA PROPERTY STRINGS AUTO ON OFF)

# Paths from this file's folder: the file may be included from another directory's scope.
set(xffl_nccl_dir ${CMAKE_CURRENT_LIST_DIR}/comm/nccl)
set(xffl_nccl_logic_sources
  ${xffl_nccl_dir}/nccl_types.cpp
  ${xffl_nccl_dir}/watchdog.cpp
  ${xffl_nccl_dir}/device_streams.cpp
  ${xffl_nccl_dir}/family_plan.cpp
  ${xffl_nccl_dir}/nccl_communicator.cpp
  ${xffl_nccl_dir}/host_staged_communicator.cpp
  ${xffl_nccl_dir}/nccl_backend.cpp)
add_library(xffl_nccl_logic OBJECT EXCLUDE_FROM_ALL ${xffl_nccl_logic_sources})
target_include_directories(xffl_nccl_logic PUBLIC
  ${PROJECT_SOURCE_DIR}/include ${CMAKE_CURRENT_LIST_DIR})
target_compile_definitions(xffl_nccl_logic PRIVATE XFFL_BUILDING_LIBRARY)
target_compile_options(xffl_nccl_logic PRIVATE ${XFFL_WARNINGS})
target_link_libraries(xffl_nccl_logic PUBLIC Threads::Threads)

set(XFFL_HAVE_NCCL OFF CACHE INTERNAL "")
string(TOUPPER "${XFFL_WITH_CUDA}" xffl_with_cuda)
if(NOT xffl_with_cuda STREQUAL "OFF")
  if(xffl_with_cuda STREQUAL "ON")
    set(xffl_cuda_required REQUIRED)
  elseif(NOT xffl_with_cuda STREQUAL "AUTO")
    message(FATAL_ERROR "XFFL_WITH_CUDA is '${XFFL_WITH_CUDA}': use AUTO, ON or OFF")
  else()
    set(xffl_cuda_required "")
  endif()
  find_package(CUDAToolkit ${xffl_cuda_required})
  if(CUDAToolkit_FOUND)
    # Visible to tests/gpu and bench/gpu too (imported targets are otherwise local to this directory).
    set_target_properties(CUDA::cudart PROPERTIES IMPORTED_GLOBAL TRUE)
    set(xffl_nccl_hints $ENV{NCCL_ROOT} $ENV{NCCL_HOME} ${CUDAToolkit_LIBRARY_ROOT} ${CUDAToolkit_TARGET_DIR})
    find_path(XFFL_NCCL_INCLUDE_DIR nccl.h HINTS ${xffl_nccl_hints} ${CUDAToolkit_INCLUDE_DIRS} PATH_SUFFIXES include)
    find_library(XFFL_NCCL_LIBRARY nccl HINTS ${xffl_nccl_hints} ${CUDAToolkit_LIBRARY_DIR} PATH_SUFFIXES lib lib64)
  endif()
  if(CUDAToolkit_FOUND AND XFFL_NCCL_INCLUDE_DIR AND XFFL_NCCL_LIBRARY)
    target_sources(xffl_obj PRIVATE ${xffl_nccl_logic_sources} ${xffl_nccl_dir}/nccl_api_cuda.cpp
                                    ${xffl_nccl_dir}/nccl_maker.cpp)
    target_include_directories(xffl_obj PRIVATE ${XFFL_NCCL_INCLUDE_DIR})
    target_link_libraries(xffl_obj PUBLIC CUDA::cudart ${XFFL_NCCL_LIBRARY})
    target_compile_definitions(xffl_obj PRIVATE XFFL_HAVE_NCCL)
    set(XFFL_HAVE_NCCL ON CACHE INTERNAL "")
    message(STATUS "NCCL backend: CUDA ${CUDAToolkit_VERSION}, ${XFFL_NCCL_LIBRARY}")
  elseif(xffl_with_cuda STREQUAL "ON")
    message(FATAL_ERROR "XFFL_WITH_CUDA=ON but NCCL was not found (nccl.h: ${XFFL_NCCL_INCLUDE_DIR}, "
                        "libnccl: ${XFFL_NCCL_LIBRARY}); set NCCL_ROOT")
  else()
    message(STATUS "NCCL backend: CUDA or NCCL not found, skipped (XFFL_WITH_CUDA=AUTO)")
  endif()
endif()
