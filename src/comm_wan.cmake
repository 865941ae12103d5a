# The cross-facility transport (XFFL_BACKEND_WAN): plain sockets and OpenSSL, which the library links
# for the store's authentication already, so it is always built. Included by src/CMakeLists.txt.
target_sources(xffl_obj PRIVATE
  comm/wan/wan_crypto.cpp
  comm/wan/listen_address.cpp
  comm/wan/relay_hello.cpp
  comm/wan/wan_hub.cpp
  comm/wan/call_arguments.cpp
  comm/wan/striped_links.cpp
  comm/wan/wan_communicator.cpp
  comm/wan/wan_backend.cpp)
