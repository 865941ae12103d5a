# Bootstrap: the rendezvous store, the launcher-environment readers and the library's log lines.
# Included by src/CMakeLists.txt into the xffl_obj object library.
find_package(OpenSSL REQUIRED COMPONENTS Crypto)

target_sources(xffl_obj PRIVATE
  bootstrap/text.cpp
  bootstrap/wire.cpp
  bootstrap/protocol.cpp
  bootstrap/auth.cpp
  bootstrap/name_lookup.cpp
  bootstrap/socket.cpp
  bootstrap/group_registry.cpp
  bootstrap/store_core.cpp
  bootstrap/store_server.cpp
  bootstrap/store_client.cpp
  bootstrap/store.cpp
  bootstrap/env_values.cpp
  bootstrap/env_registry.cpp
  bootstrap/env_read.cpp
  bootstrap/slurm_lists.cpp
  bootstrap/launch_env.cpp
)
target_link_libraries(xffl_obj PUBLIC OpenSSL::Crypto)

# PMIx (launchers that offer it instead of a MASTER_ADDR: mpirun, srun --mpi=pmix): its headers only,
# as for UCX; libxffl loads libpmix.so.2 at run time, when a job's store address is exchanged through
# it (bootstrap/pmix_api.h). Without the headers the exchange reports that this build lacks it.
target_sources(xffl_obj PRIVATE bootstrap/pmix_store.cpp)
pkg_check_modules(PMIX QUIET pmix)
find_path(XFFL_PMIX_INCLUDE_DIR pmix.h HINTS ${PMIX_INCLUDE_DIRS} PATH_SUFFIXES pmix2/include)
if(XFFL_PMIX_INCLUDE_DIR)
  target_sources(xffl_obj PRIVATE bootstrap/pmix_api.cpp)
  target_include_directories(xffl_obj SYSTEM PRIVATE ${XFFL_PMIX_INCLUDE_DIR})
  target_compile_definitions(xffl_obj PRIVATE XFFL_HAVE_PMIX)
  target_link_libraries(xffl_obj PUBLIC ${CMAKE_DL_LIBS})
  message(STATUS "xffl: PMIx headers in ${XFFL_PMIX_INCLUDE_DIR} (libpmix.so.2 loaded at run time)")
else()
  message(STATUS "xffl: no PMIx headers (libpmix-dev): mpirun and srun --mpi=pmix need MASTER_ADDR")
endif()
