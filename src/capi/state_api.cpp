// extern "C" shims of xffl/state.h: argument checks, handle unwrap, exceptions to statuses.
#include <memory>
#include <vector>

#include "capi/copy_out.h"
#include "capi/guard.h"
#include "state/distributed_state.h"
#include "state/from_env.h"
#include "xffl/state.h"

using xffl::capi::require_arg;

extern "C" {

XFFL_API xffl_status_t xffl_state_create(xffl_state_t **out) {
  XFFL_API_BEGIN
  require_arg(out, "out");
  *out = std::make_unique<xffl_state>().release();
  XFFL_API_END("xffl_state_create")
}

XFFL_API xffl_status_t xffl_state_from_env(xffl_state_t **out) {
  XFFL_API_BEGIN
  require_arg(out, "out");
  *out = xffl::state_from_environment().release();
  XFFL_API_END("xffl_state_from_env")
}

XFFL_API void xffl_state_destroy(xffl_state_t *st) {
  try {
    delete st;
  } catch (...) {  // destroy never fails and never throws into C
  }
}

XFFL_API xffl_status_t xffl_set_global(xffl_state_t *st, xffl_backend_t backend, xffl_device_t device_type,
                                       const char *master_addr, int master_port, int rank, int world_size) {
  XFFL_API_BEGIN
  require_arg(st, "st");
  XFFL_API_ENTER(st, "xffl_set_global");
  require_arg(master_addr, "master_addr");
  st->set_global(backend, device_type, master_addr, master_port, rank, world_size);
  XFFL_API_END("xffl_set_global")
}

XFFL_API xffl_status_t xffl_set_node(xffl_state_t *st, int node_local_rank, int node_local_size, int node_rank,
                                     int node_world_size) {
  XFFL_API_BEGIN
  require_arg(st, "st");
  XFFL_API_ENTER(st, "xffl_set_node");
  st->set_node(node_local_rank, node_local_size, node_rank, node_world_size);
  XFFL_API_END("xffl_set_node")
}

XFFL_API xffl_status_t xffl_set_exec_device(xffl_state_t *st, int device_index, int streams) {
  XFFL_API_BEGIN
  require_arg(st, "st");
  XFFL_API_ENTER(st, "xffl_set_exec_device");
  st->set_exec_device(device_index, streams);
  XFFL_API_END("xffl_set_exec_device")
}

XFFL_API xffl_status_t xffl_get_stream(const xffl_state_t *st, int index, void **stream) {
  XFFL_API_BEGIN
  require_arg(st, "st");
  XFFL_API_ENTER_READ(st, "xffl_get_stream");
  require_arg(stream, "stream");
  *stream = st->stream(index);
  XFFL_API_END("xffl_get_stream")
}

XFFL_API xffl_status_t xffl_set_init_device(xffl_state_t *st, xffl_device_t init_device, int meta_initialization) {
  XFFL_API_BEGIN
  require_arg(st, "st");
  XFFL_API_ENTER(st, "xffl_set_init_device");
  st->set_init_device(init_device, meta_initialization != 0);
  XFFL_API_END("xffl_set_init_device")
}

XFFL_API xffl_status_t xffl_set_fsdp(xffl_state_t *st) {
  XFFL_API_BEGIN
  require_arg(st, "st");
  XFFL_API_ENTER(st, "xffl_set_fsdp");
  st->set_fsdp();
  XFFL_API_END("xffl_set_fsdp")
}

XFFL_API xffl_status_t xffl_set_fsdp_mesh(xffl_state_t *st, const int *ranks, size_t n) {
  XFFL_API_BEGIN
  require_arg(st, "st");
  XFFL_API_ENTER(st, "xffl_set_fsdp_mesh");
  require_arg(ranks, "ranks");
  if (n == 0) xffl::fail(XFFL_EINVAL, "n is 0; the fsdp mesh holds at least this rank");
  st->set_fsdp_mesh(std::vector<int>(ranks, ranks + n));
  XFFL_API_END("xffl_set_fsdp_mesh")
}

XFFL_API xffl_status_t xffl_set_hsdp_manual(xffl_state_t *st, int replica_local_rank, int replica_local_size,
                                            int replica_rank, const int *replica_world_size, size_t n) {
  XFFL_API_BEGIN
  require_arg(st, "st");
  XFFL_API_ENTER(st, "xffl_set_hsdp_manual");
  require_arg(replica_world_size, "replica_world_size");
  if (n == 0) xffl::fail(XFFL_EINVAL, "n is 0; replica_world_size has one entry without federated scaling");
  st->set_hsdp_manual(replica_local_rank, replica_local_size, replica_rank,
                      std::vector<int>(replica_world_size, replica_world_size + n));
  XFFL_API_END("xffl_set_hsdp_manual")
}

XFFL_API xffl_status_t xffl_get_communicating_processes(const xffl_state_t *st, int federated_rank, int *ranks,
                                                        size_t cap, size_t *len) {
  XFFL_API_BEGIN
  require_arg(st, "st");
  XFFL_API_ENTER_READ(st, "xffl_get_communicating_processes");
  require_arg(len, "len");
  xffl::capi::copy_out(st->communicating_processes(federated_rank), ranks, cap, len, "the senders", "ranks");
  XFFL_API_END("xffl_get_communicating_processes")
}

XFFL_API xffl_status_t xffl_set_hsdp(xffl_state_t *st, int hsdp) {
  XFFL_API_BEGIN
  require_arg(st, "st");
  XFFL_API_ENTER(st, "xffl_set_hsdp");
  st->set_hsdp(hsdp);
  XFFL_API_END("xffl_set_hsdp")
}

XFFL_API xffl_status_t xffl_federated_scaling(xffl_state_t *st, const int *sizes, size_t n_sizes, int hsdp) {
  XFFL_API_BEGIN
  require_arg(st, "st");
  XFFL_API_ENTER(st, "xffl_federated_scaling");
  require_arg(sizes, "sizes");
  if (n_sizes == 0) xffl::fail(XFFL_EINVAL, "n_sizes is 0; give one size or one per group");
  st->federated_scaling(std::vector<int>(sizes, sizes + n_sizes), hsdp);
  XFFL_API_END("xffl_federated_scaling")
}

XFFL_API xffl_status_t xffl_unset_fsdp(xffl_state_t *st) {
  XFFL_API_BEGIN
  require_arg(st, "st");
  XFFL_API_ENTER(st, "xffl_unset_fsdp");
  st->unset_fsdp();
  XFFL_API_END("xffl_unset_fsdp")
}

XFFL_API xffl_status_t xffl_unset_hsdp(xffl_state_t *st) {
  XFFL_API_BEGIN
  require_arg(st, "st");
  XFFL_API_ENTER(st, "xffl_unset_hsdp");
  st->unset_hsdp();
  XFFL_API_END("xffl_unset_hsdp")
}

XFFL_API xffl_status_t xffl_unset_federated_scaling(xffl_state_t *st) {
  XFFL_API_BEGIN
  require_arg(st, "st");
  XFFL_API_ENTER(st, "xffl_unset_federated_scaling");
  st->unset_federated_scaling();
  XFFL_API_END("xffl_unset_federated_scaling")
}

XFFL_API int xffl_is_node_setup(const xffl_state_t *st) { return st && st->is_node_setup() ? 1 : 0; }
XFFL_API int xffl_is_fsdp_setup(const xffl_state_t *st) { return st && st->is_fsdp_setup() ? 1 : 0; }
XFFL_API int xffl_is_hsdp_setup(const xffl_state_t *st) { return st && st->is_hsdp_setup() ? 1 : 0; }
XFFL_API int xffl_is_federated_scaling_setup(const xffl_state_t *st) {
  return st && st->is_federated_scaling_setup() ? 1 : 0;
}

XFFL_API xffl_status_t xffl_get_int(const xffl_state_t *st, xffl_attr_t attr, int *value) {
  XFFL_API_BEGIN
  require_arg(st, "st");
  XFFL_API_ENTER_READ(st, "xffl_get_int");
  require_arg(value, "value");
  *value = st->get_int(attr);
  XFFL_API_END("xffl_get_int")
}

XFFL_API xffl_status_t xffl_get_ints(const xffl_state_t *st, xffl_attr_t attr, int *buf, size_t cap, size_t *len) {
  XFFL_API_BEGIN
  require_arg(st, "st");
  XFFL_API_ENTER_READ(st, "xffl_get_ints");
  require_arg(len, "len");
  xffl::capi::copy_out(st->get_ints(attr), buf, cap, len, "the attribute");
  XFFL_API_END("xffl_get_ints")
}

XFFL_API xffl_status_t xffl_get_master_addr(const xffl_state_t *st, char *buf, size_t cap, size_t *len) {
  XFFL_API_BEGIN
  require_arg(st, "st");
  XFFL_API_ENTER_READ(st, "xffl_get_master_addr");
  require_arg(len, "len");
  xffl::capi::copy_out(st->master_addr(), buf, cap, len, "the master address");
  XFFL_API_END("xffl_get_master_addr")
}

XFFL_API xffl_status_t xffl_set_option(xffl_state_t *st, xffl_option_t option, int value) {
  XFFL_API_BEGIN
  require_arg(st, "st");
  XFFL_API_ENTER(st, "xffl_set_option");
  st->set_option(option, value);
  XFFL_API_END("xffl_set_option")
}

XFFL_API xffl_status_t xffl_get_option(const xffl_state_t *st, xffl_option_t option, int *value) {
  XFFL_API_BEGIN
  require_arg(st, "st");
  XFFL_API_ENTER_READ(st, "xffl_get_option");
  require_arg(value, "value");
  *value = st->options().get(option);
  XFFL_API_END("xffl_get_option")
}

XFFL_API xffl_status_t xffl_set_option_string(xffl_state_t *st, xffl_option_t option, const char *text) {
  XFFL_API_BEGIN
  require_arg(st, "st");
  XFFL_API_ENTER(st, "xffl_set_option_string");
  require_arg(text, "text");
  st->set_option_string(option, text);
  XFFL_API_END("xffl_set_option_string")
}

XFFL_API xffl_status_t xffl_get_option_string(const xffl_state_t *st, xffl_option_t option, char *buf, size_t cap,
                                              size_t *len) {
  XFFL_API_BEGIN
  require_arg(st, "st");
  XFFL_API_ENTER_READ(st, "xffl_get_option_string");
  require_arg(len, "len");
  xffl::capi::copy_out(st->options().get_string(option), buf, cap, len, "the option");
  XFFL_API_END("xffl_get_option_string")
}

XFFL_API xffl_status_t xffl_state_describe(const xffl_state_t *st, xffl_format_t format, char *buf, size_t cap,
                                           size_t *len) {
  XFFL_API_BEGIN
  require_arg(st, "st");
  XFFL_API_ENTER_READ(st, "xffl_state_describe");
  require_arg(len, "len");
  xffl::capi::copy_out(st->describe(format), buf, cap, len, "the description");
  XFFL_API_END("xffl_state_describe")
}

}  // extern "C"
