# Bootstrap: the rendezvous store, the launcher-environment readers and the library's log lines.
# Included by src/CMakeLists.txt into the xffl_obj object library.
find_package(OpenSSL REQUIRED COMPONENTS Crypto)

target_sources(xffl_obj PRIVATE
  bootstrap/text.cpp
  bootstrap/wire.cpp
  bootstrap/protocol.cpp
  bootstrap/auth.cpp
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
