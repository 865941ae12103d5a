# The collective algorithms and reduction kernels (always built: they need no transport) and the
# UCX backend (with XFFL_WITH_UCX). Included by src/CMakeLists.txt.
set(xffl_comm_kernels comm/reduce.cpp comm/half.cpp comm/scale.cpp)
target_sources(xffl_obj PRIVATE
  ${xffl_comm_kernels}
  comm/huge_pages.cpp
  comm/streaming_copy.cpp
  comm/wide_vectors.cpp
  comm/algorithms/scratch.cpp
  comm/algorithms/chunks.cpp
  comm/algorithms/ring.cpp
  comm/algorithms/recursive_doubling.cpp
  comm/algorithms/halving_doubling.cpp
  comm/algorithms/broadcast.cpp
  comm/algorithms/allgather.cpp
  comm/algorithms/collectives.cpp
  comm/algorithms/relay.cpp
  comm/algorithms/single_copy.cpp)
# The reduction and conversion loops are the hot path of every large allreduce: -O3 vectorises them.
if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
  set_source_files_properties(${xffl_comm_kernels} PROPERTIES COMPILE_OPTIONS "-O3")
endif()

if(XFFL_WITH_UCX)
  find_package(ucx CONFIG REQUIRED)
  target_sources(xffl_obj PRIVATE
    comm/ucx/ucx_api.cpp
    comm/ucx/ucx_address.cpp
    comm/ucx/peer_addresses.cpp
    comm/ucx/peer_failure_detector.cpp
    comm/ucx/endpoint_cache.cpp
    comm/ucx/ucx_worker.cpp
    comm/ucx/ucx_transport.cpp
    comm/ucx/call_check.cpp
    comm/ucx/notice_receive.cpp
    comm/ucx/revocation.cpp
    comm/ucx/send_staging.cpp
    comm/ucx/process_memory.cpp
    comm/ucx/host_segment.cpp
    comm/ucx/host_collectives.cpp
    comm/ucx/ucx_communicator.cpp
    comm/ucx/ucx_backend.cpp)
  # UCX's headers only: libxffl loads libucp.so.0 at run time, when a UCX backend is made
  # (comm/ucx/ucx_api.h), so that a program that never chooses UCX keeps its signal handlers and its
  # memory functions. dlopen is in libc since glibc 2.34; CMAKE_DL_LIBS names libdl where it is not.
  # ucx::ucp is visible in this directory only: its include path is copied, not referenced.
  get_target_property(xffl_ucx_include_dirs ucx::ucp INTERFACE_INCLUDE_DIRECTORIES)
  target_include_directories(xffl_obj SYSTEM PUBLIC ${xffl_ucx_include_dirs})
  target_link_libraries(xffl_obj PUBLIC ${CMAKE_DL_LIBS})
  # state/ includes comm/ucx/ucx_backend.h only under this macro.
  target_compile_definitions(xffl_obj PRIVATE XFFL_HAVE_UCX=1)
  set(XFFL_HAVE_UCX ON CACHE INTERNAL "")
else()
  set(XFFL_HAVE_UCX OFF CACHE INTERNAL "")
endif()
