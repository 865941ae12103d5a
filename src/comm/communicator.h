// The one internal communication interface (DESIGN.md section 4). A Backend is chosen once in
// set_global; it makes a Communicator for each group instance. comm/ never includes state/.
#ifndef XFFL_SRC_COMM_COMMUNICATOR_H
#define XFFL_SRC_COMM_COMMUNICATOR_H

#include <cstddef>
#include <cstring>
#include <functional>
#include <new>
#include <memory>
#include <string>
#include <vector>

#include "comm/algorithms/windows.h"
#include "comm/dtype.h"
#include "comm/exchange.h"
#include "comm/scale.h"
#include "common/error.h"
#include "topology/rank_list.h"
#include "xffl/types.h"

namespace xffl::comm {

class Communicator;

// Offered by a communicator whose buffers are device memory but whose collectives run on a host-memory
// communicator (NCCL's crossing groups over a host crossing backend, UCX or any other:
// nccl/host_staged_communicator.h), to host code that must read and write the values itself: the WAN
// hop's codecs (federated/wire/wan_hop.h) quantise on the host, then talk over host().
class HostStaging {
 public:
  virtual ~HostStaging() = default;
  // The group on the host-memory backend: the same members in the same order; host buffers, no stream.
  virtual Communicator &host() = 0;
  // Host memory of at least `bytes` (pinned where the backend can), owned by the communicator and valid
  // until its next call other than these three.
  virtual void *host_scratch(size_t bytes) = 0;
  // Copies between the device buffer and host memory, ordered on `stream`, complete when they return.
  virtual void to_host(void *host, const void *device, size_t bytes, void *stream) = 0;
  virtual void to_device(void *device, const void *host, size_t bytes, void *stream) = 0;
};

// One group instance's communicator. Arguments arrive validated (capi/ checks pointers, enums,
// membership of root). Errors are thrown as xffl::Error.
class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual void allreduce(const void *send, void *recv, size_t count, xffl_dtype_t dtype, xffl_redop_t op,
                         void *stream) = 0;
  // root_index: the root's index among the members.
  virtual void broadcast(void *buf, size_t count, xffl_dtype_t dtype, int root_index, void *stream) = 0;
  virtual void allgather(const void *send, void *recv, size_t send_count, xffl_dtype_t dtype, void *stream) = 0;
  virtual void reduce_scatter(const void *send, void *recv, size_t recv_count, xffl_dtype_t dtype, xffl_redop_t op,
                              void *stream) = 0;
  virtual void barrier() = 0;

  // In place: op-reduce over the members of each member's premul * buf, premul being this member's own
  // factor (1: none; otherwise a floating-point dtype and op SUM or AVG). Federated averaging's weights
  // (FedAvg) are such factors. Backends that fuse the product into the reduction do (NCCL's PreMulSum);
  // the default scales the (host) buffer first.
  virtual void allreduce_scaled(void *buf, size_t count, xffl_dtype_t dtype, xffl_redop_t op, double premul,
                                void *stream) {
    if (premul != 1.0) scale(buf, count, dtype, premul);
    allreduce(buf, buf, count, dtype, op, stream);
  }

  // Scratch memory of the kind this communicator's collectives work on (host memory by default, device
  // memory with NCCL) and copies within it, ordered on `stream` before and after the collectives;
  // finish_copies then makes them as complete as a collective is when it returns (NCCL: waited for
  // unless stream-ordered), once for a whole series. release never throws.
  virtual void *allocate(size_t bytes, void *stream) {
    (void)stream;
    return ::operator new(bytes);
  }
  virtual void release(void *ptr, void *stream) noexcept {
    (void)stream;
    ::operator delete(ptr);
  }
  virtual void copy(void *dst, const void *src, size_t bytes, void *stream) {
    (void)stream;
    if (bytes) std::memcpy(dst, src, bytes);
  }
  virtual void finish_copies(void *stream) { (void)stream; }
  // Returns once the copies and collectives enqueued on `stream` are complete, whatever
  // XFFL_OPT_ENQUEUE_ONLY says, bounded by the backend's timeout (NCCL: it fails naming the rank, the
  // group and the stream's work): for host code that reads host memory a copy wrote, or frees host
  // memory a copy reads (copy() takes host pointers too where the backend's memory is device memory:
  // cudaMemcpyAsync of any direction). Host-memory backends are complete on return (the default).
  virtual void synchronize(void *stream) { (void)stream; }

  // Device memory staged through a host communicator (HostStaging above); null (the default) when the
  // collectives run on the memory they are given.
  virtual HostStaging *host_staging() { return nullptr; }

  // Makes the root's elements [first, first + count) final: the producing side of broadcast_produced.
  using Produce = std::function<void(size_t first, size_t count)>;
  // A broadcast whose root writes its buffer while it is sent: on the root, produce(first, n) is called
  // for the consecutive windows of `window` elements (the last may be shorter), in order, each before
  // any byte of it leaves, so that a window travels while the next is produced (the compressed WAN
  // hop's relay: federated/wire/wan_hop.h). Every member passes the same count, dtype, root_index and
  // window (> 0); the other members pass an empty produce. Backends that can overlap do; the default
  // produces every window, then broadcasts.
  virtual void broadcast_produced(void *buf, size_t count, xffl_dtype_t dtype, int root_index, size_t window,
                                  const Produce &produce, void *stream) {
    if (produce)
      for (size_t first = 0; first < count; first += window)
        produce(first, count - first < window ? count - first : window);
    broadcast(buf, count, dtype, root_index, stream);
  }

  // Reads elements [first, first + count) of every member's block: the receiving side of allgather_streamed.
  using Consume = std::function<void(size_t first, size_t count)>;
  // An allgather whose own block is written while it is sent and whose gathered blocks are read while
  // they arrive (the compressed WAN hop: each window is encoded just before it leaves, and decoded as
  // soon as every member's bytes of it are in, so that the coding overlaps the crossing:
  // federated/wire/wan_hop.h). Each member's block is cut into the same consecutive windows of `window`
  // elements (> 0; the last may be shorter). produce(first, n) makes send's elements [first, first + n)
  // final before any of them leaves; consume(first, n) is called once elements [first, first + n) of
  // every member's block in recv are final; each is called for every window, in order, exactly once
  // (either may be empty). send is this member's block (in recv at index * send_count, or apart from
  // recv); neither buffer may be touched by the caller until the call returns, except by produce and
  // consume. Every member passes the same send_count, dtype and window; the messages are an
  // allgather's. A failure throws as allgather does; windows not consumed by then stay unconsumed.
  // Backends that can overlap do; the default produces every window, gathers, then consumes.
  virtual void allgather_streamed(void *send, void *recv, size_t send_count, xffl_dtype_t dtype, size_t window,
                                  const Produce &produce, const Consume &consume, void *stream) {
    algorithms::WindowProducer(produce, send_count, dtype_size(dtype), window).all();
    allgather(send, recv, send_count, dtype, stream);
    algorithms::WindowConsumer(consume, send_count, dtype_size(dtype), window).all();
  }

  // The root of a broadcast (or relay_receive, broadcast_produced) that will not send, because what it
  // would send failed: the members waiting in their matching call fail with `why`'s status and words,
  // naming this rank, instead of waiting for their timeout; this communicator is unusable afterwards
  // where the backend marks failures. Backends that cannot tell the members do nothing (the default).
  // Never throws.
  virtual void abort_broadcast(int root_index, size_t count, xffl_dtype_t dtype, const Error &why) noexcept {
    (void)root_index;
    (void)count;
    (void)dtype;
    (void)why;
  }

  // HIERARCHICAL federated averaging, sender side: allreduce_scaled over this (federated) group, then
  // pass the result to every member of `relay` (the sender's replica group; relay_root is the sender's
  // index there). Backends that can overlap the two do; the default runs one after the other, and a
  // failed allreduce aborts the relay (abort_broadcast).
  virtual void allreduce_and_relay(void *buf, size_t count, xffl_dtype_t dtype, xffl_redop_t op, double premul,
                                   Communicator &relay, int relay_root, void *stream) {
    try {
      allreduce_scaled(buf, count, dtype, op, premul, stream);
    } catch (const Error &error) {
      relay.abort_broadcast(relay_root, count, dtype, error);
      throw;
    }
    relay.broadcast(buf, count, dtype, relay_root, stream);
  }
  // The receiving side of allreduce_and_relay, called on the replica group by its other members.
  // federated_size and sender_index (the sender's index in its federated group) tell a backend that
  // overlaps in which order the chunks come.
  virtual void relay_receive(void *buf, size_t count, xffl_dtype_t dtype, xffl_redop_t op, int relay_root,
                             int federated_size, int sender_index, void *stream) {
    (void)op;
    (void)federated_size;
    (void)sender_index;
    broadcast(buf, count, dtype, relay_root, stream);
  }
};

// What a backend needs to know of a group to make its communicator.
struct GroupSpec {
  topology::RankList members;
  int my_index = 0;          // the caller's index among members
  std::string description;   // for messages: "federated group (instance 1)"
  // Below 2^20, identical on every member, and distinct from every other live group that shares a
  // member: the layout's groups get small numbers in [0, 2^19) from (generation, family, instance);
  // groups of xffl_create_process_group get 2^19 + the slot the job's authority gave them.
  unsigned long long tag = 0;
  // Unique for the whole job (0 for the layout's groups): keys what a backend publishes for the group.
  uint64_t serial = 0;
  // Members in more than one federated group (a FEDERATED family, or a process group spanning
  // federations): a backend may carry it over another transport (XFFL_OPT_CROSS_FACILITY_BACKEND).
  // Identical on every rank for every instance of a family.
  bool crosses_facilities = false;
};

// The memory a backend's collectives read and write: host memory (any pointer the CPU may read), or
// device memory (CUDA's, with NCCL), which the state never touches itself.
enum class MemoryKind { kHost, kDevice };

// Settings that may change on a live backend (xffl_set_option after xffl_set_global).
struct LiveSettings {
  int timeout_ms = 0;
  xffl_log_level_t log_level = XFFL_LOG_WARN;
  // A collective returns once enqueued on its stream instead of once complete (XFFL_OPT_ENQUEUE_ONLY).
  bool stream_ordered = false;
};

// The execution device a backend chose (select_device) and how many it sees.
struct DeviceChoice {
  int device = 0;
  int count = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual xffl_backend_t kind() const = 0;
  // Local: never a collective round. May be called lazily, on a group's first collective.
  virtual std::unique_ptr<Communicator> create_communicator(const GroupSpec &group) = 0;
  // The identity of a group made by xffl_create_process_group (Exchange::claim_group): one round
  // trip to the job's store, bounded by the backend's timeout. A backend without a store (NONE)
  // counts locally: its groups never communicate.
  virtual GroupIdentity claim_group(const std::vector<int> &sorted_members, uint32_t creation) = 0;
  // Never blocks, never throws.
  virtual void release_group(uint32_t slot) noexcept = 0;

  // What the backend is: the state asks these instead of its kind. The defaults describe a host-memory
  // backend without devices or eager communicators (NONE, UCX); a device backend (NCCL) overrides them.
  virtual MemoryKind memory_kind() const { return MemoryKind::kHost; }
  // Whether collectives take a stream (a device stream: cudaStream_t). Without, only NULL is valid.
  virtual bool accepts_streams() const { return false; }
  // Local: applies the settings that may change on a live backend (each backend takes what it has).
  virtual void apply(const LiveSettings &settings) { (void)settings; }
  // Local: where this rank sits on its node (xffl_set_node). A device backend may pick its default
  // device from it, and may refuse (XFFL_EUNSUPPORTED) before the state changes.
  virtual void set_node_place(int node_local_rank, int node_local_size) {
    (void)node_local_rank;
    (void)node_local_size;
  }
  // Local, for device execution (xffl_set_exec_device): device_index -1 chooses node_local_rank
  // modulo the device count; the backend keeps `streams` streams on it. Default: XFFL_EUNSUPPORTED.
  virtual DeviceChoice select_device(int device_index, int node_local_rank, int streams);
  // The device's stream `index` (a cudaStream_t), for the caller's own kernels. Default: XFFL_EUNSUPPORTED.
  virtual void *stream(int index);
  // Local: which group is the world (a backend may keep a communicator of its own for it).
  virtual void register_world(const GroupSpec &world) { (void)world; }
  // Collective over the world for a backend that makes communicators eagerly (NCCL: one split per rank
  // per family), every rank the same families in the same order. Returns true when the group's
  // communicator must be made now, in layout order; the default makes them lazily (false).
  virtual bool prepare_family(const GroupSpec &group, int instance) {
    (void)group;
    (void)instance;
    return false;
  }
  // Local, before any layout, for a backend whose maker says takes_crossing (backend_table.h): groups
  // that cross facilities go over `host` instead. Default: XFFL_EINTERNAL (the factory never calls it).
  virtual void set_crossing_backend(std::shared_ptr<Backend> host);
  // Whether groups that cross facilities run on a host-memory backend through staging (a device backend
  // given set_crossing_backend): their communicators offer HostStaging. The same on every rank.
  virtual bool crossing_on_host() const { return false; }
};

}  // namespace xffl::comm

#endif
