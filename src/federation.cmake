# The federation's membership store (src/federation/): the interface, the built-in server's core,
# protocol and client, and the etcd v3 client. Included by src/CMakeLists.txt into xffl_obj.
#
# libcurl is loaded at run time (federation/curl_api.h), as UCX and PMIx are: only its headers are
# needed here (Debian: libcurl4-openssl-dev). Without them an etcd:// endpoint reports that this build
# lacks it, and the xffl:// server still works.
target_sources(xffl_obj PRIVATE
  federation/endpoint.cpp
  federation/settings.cpp
  federation/membership_store.cpp
  federation/connect.cpp
  federation/json.cpp
  federation/federation_protocol.cpp
  federation/frame_io.cpp
  federation/federation_core.cpp
  federation/federation_requests.cpp
  federation/federation_server.cpp
  federation/xffl_store.cpp
  federation/curl_api.cpp
  federation/etcd_store.cpp
  federation/membership_exchange.cpp
  federation/facility_lease.cpp
  federation/epochs.cpp
  federation/model_seal.cpp
)
find_path(XFFL_CURL_INCLUDE_DIR curl/curl.h)
if(XFFL_CURL_INCLUDE_DIR)
  target_include_directories(xffl_obj SYSTEM PRIVATE ${XFFL_CURL_INCLUDE_DIR})
  target_compile_definitions(xffl_obj PRIVATE XFFL_HAVE_CURL)
  target_link_libraries(xffl_obj PUBLIC ${CMAKE_DL_LIBS})
  message(STATUS "xffl: libcurl headers in ${XFFL_CURL_INCLUDE_DIR} (libcurl.so.4 loaded at run time for etcd://)")
else()
  message(STATUS "xffl: no libcurl headers (libcurl4-openssl-dev): etcd:// federations unsupported in this build")
endif()
