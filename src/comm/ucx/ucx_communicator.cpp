#include "comm/ucx/ucx_communicator.h"

#include <functional>
#include <new>

#include "comm/algorithms/collectives.h"
#include "comm/algorithms/relay.h"
#include "comm/algorithms/single_copy.h"
#include "comm/algorithm_choice.h"
#include "comm/dtype.h"
#include "comm/ucx/process_memory.h"

namespace xffl::comm::ucx {

namespace {

// A pipelined call on one host, among `members`, that writes `output_bytes` into the caller's buffer.
RoundOptions round_options(const algorithms::Tuning &tuning, int members, size_t output_bytes) {
  const size_t stream_from =
      tuning.host_stream_output_from.value_or(algorithm_choice::host_stream_output_from(members));
  return RoundOptions{tuning.host_pipeline_chunk_bytes, output_bytes >= stream_from};
}

}  // namespace

UcxCommunicator::UcxCommunicator(std::shared_ptr<UcxWorker> worker, GroupView group)
    : worker_(std::move(worker)), group_(std::move(group)) {}

// The transports live inside the try block: when a schedule throws, their destructors cancel what is
// still in flight before the error is recorded and passed on.
CallContext UcxCommunicator::next_call(const CallSignature &signature) {
  CallContext call{signature, last_call_};
  last_call_ = signature;
  return call;
}

algorithms::Tuning UcxCommunicator::tuning() const {
  algorithms::Tuning tuning = worker_->settings().tuning;
  // A crossing's ring sends its next chunk a WAN round trip after its neighbour sent one: 8 chunks in
  // flight held the UCX crossing of bench/facilities at 2.1x its bound, 32 at 1.6x.
  if (group_.crosses_facilities) {
    tuning.window = tuning.crossing_window;
    // Halving-doubling's crossover was measured within a facility, not over a WAN: a crossing keeps the
    // ring from recursive doubling's sizes on, as before it.
    tuning.halving_allreduce_bytes = 0;
  }
  return tuning;
}

template <typename Schedule>
void UcxCommunicator::run_paired(const char *operation, const CallSignature &signature, UcxCommunicator *partner,
                                 const CallSignature &partner_signature, Schedule &&schedule) {
  if (failure_) throw *failure_;
  if (partner && partner->failure_) throw *partner->failure_;
  // The partner's call (the relay of allreduce_and_relay): when this call fails, its members waiting
  // for what this rank would relay fail with this error at once (abort_call), not by their timeout.
  std::optional<UcxTransport> second;
  auto record = [&](const Error &error) {
    failure_ = error;
    if (partner) partner->failure_ = error;
    if (second) second->abort_call(error.status(), error.what());
  };
  try {
    // The check outlives the transport that runs it, and the transport holds it by reference: no
    // allocation per call (a std::function holding this lambda itself would take one).
    auto check_elsewhere = [this, &signature](UcxTransport &call) { host_->check_elsewhere(call, signature); };
    UcxTransport transport(*worker_, group_, sequence_++, operation, next_call(signature));
    if (host_) transport.also_check(std::ref(check_elsewhere));
    if (partner)
      second.emplace(*worker_, partner->group_, partner->sequence_++, operation, partner->next_call(partner_signature));
    schedule(transport, second ? &*second : nullptr, tuning());
    transport.wait_all();
    if (second) second->wait_all();
  } catch (const Error &error) {
    record(error);
    worker_->log(XFFL_LOG_ERROR, error.what());
    throw;
  } catch (const std::bad_alloc &) {
    record(Error(XFFL_ENOMEM, "rank " + std::to_string(worker_->rank()) + ": out of memory in " + operation + " on " +
                                  group_.description));
    throw *failure_;
  } catch (const std::exception &error) {
    record(Error(XFFL_EINTERNAL, "rank " + std::to_string(worker_->rank()) + ": " + operation + " on " +
                                     group_.description + ": " + error.what()));
    throw *failure_;
  }
}

template <typename Schedule>
void UcxCommunicator::run(const char *operation, const CallSignature &signature, Schedule &&schedule) {
  run_paired(operation, signature, nullptr, signature,
             [&](UcxTransport &transport, UcxTransport *, const algorithms::Tuning &tuning) {
               schedule(transport, tuning);
             });
}

bool UcxCommunicator::members_share_host() { return members_share_host_for(nullptr); }

bool UcxCommunicator::members_share_host_for(const char *operation) {
  if (!members_share_host_) {
    PeerAddresses &addresses = worker_->addresses();
    const auto deadline = Clock::now() + std::chrono::milliseconds(worker_->settings().timeout_ms);
    auto look_up = [&](int rank) -> const PublishedAddress & {
      if (!operation) return addresses.look_up(rank, deadline);
      try {
        return addresses.look_up(rank, deadline);
      } catch (const Error &error) {
        fail(error.status(), "rank ", worker_->rank(), ": ", operation, " on ", group_.description,
             " could not look up the address of rank ", rank, ": ", error.what());
      }
    };
    const PublishedAddress mine = look_up(worker_->rank());
    // Published bytes only (the same on every member), never /proc now: a member that has exited
    // meanwhile must not make one member choose otherwise than the others.
    bool shared = ProcessMemory::available() && mine.process.known() && !mine.process.network_namespace.empty();
    for (size_t i = 0; shared && i < group_.members.size(); ++i) {
      const PublishedAddress &member = look_up(group_.members[i]);
      shared = member.host == mine.host && member.process.known() &&
               member.process.pid_namespace == mine.process.pid_namespace &&
               member.process.network_namespace == mine.process.network_namespace;
    }
    members_share_host_ = shared;
    worker_->log(XFFL_LOG_DEBUG, group_.description + (shared ? ": every member on this host, collectives from "
                                                                 "algorithm_choice.h's sizes read peers' memory directly"
                                                               : ": members on several hosts, UCX messages only"));
  }
  return *members_share_host_;
}

bool UcxCommunicator::single_copy(const algorithms::Tuning &tuning, size_t bytes, size_t from) {
  using algorithms::SingleCopy;
  if (tuning.single_copy_on_host == SingleCopy::never || group_.members.size() < 2 || bytes == 0) return false;
  return (tuning.single_copy_on_host == SingleCopy::always || bytes >= from) && members_share_host();
}

bool UcxCommunicator::host_segment(UcxTransport &p2p, const algorithms::Tuning &tuning, size_t bytes, size_t below,
                                   bool barrier) {
  const int n = static_cast<int>(group_.members.size());
  if (tuning.single_copy_on_host != algorithms::SingleCopy::by_size || n < 2 || (bytes == 0 && !barrier) ||
      bytes >= below || !members_share_host_for(p2p.operation()))
    return false;
  return host_ready(p2p);
}

bool UcxCommunicator::host_pipeline(UcxTransport &p2p, const algorithms::Tuning &tuning, size_t bytes, size_t from) {
  const int n = static_cast<int>(group_.members.size());
  if (tuning.single_copy_on_host != algorithms::SingleCopy::by_size || n < 2 || bytes == 0 || bytes < from ||
      !members_share_host_for(p2p.operation()))
    return false;
  return host_ready(p2p);
}

bool UcxCommunicator::host_ready(UcxTransport &p2p) {
  const int n = static_cast<int>(group_.members.size());
  if (!host_) host_ = std::make_unique<HostCollectives>(n, group_.my_index);
  std::string why;
  if (host_->ready(p2p, &why)) return true;
  if (!why.empty())
    worker_->log(XFFL_LOG_DEBUG, group_.description + ": no shared segment for the collectives on this host (" + why +
                                     "): UCX messages");
  return false;
}

void UcxCommunicator::allreduce(const void *send, void *recv, size_t count, xffl_dtype_t dtype, xffl_redop_t op,
                                void *) {
  const int n = static_cast<int>(group_.members.size());
  const CallSignature signature = CallSignature::of(CallKind::Allreduce, count, dtype, op);
  run("allreduce", signature, [&](UcxTransport &p2p, const algorithms::Tuning &tuning) {
    if (host_pipeline(p2p, tuning, count * dtype_size(dtype), algorithm_choice::host_pipeline_allreduce_from(n)))
      return host_->pipelined_allreduce(p2p, signature, send, recv, count, dtype, op,
                                        round_options(tuning, n, count * dtype_size(dtype)));
    if (single_copy(tuning, count * dtype_size(dtype), algorithm_choice::single_copy_allreduce_from(n))) {
      ProcessMemory memory(p2p);
      return algorithms::single_copy_allreduce(p2p, memory, send, recv, count, dtype, op);
    }
    if (host_segment(p2p, tuning, count * dtype_size(dtype), algorithm_choice::host_segment_allreduce_below(n)))
      return host_->allreduce(p2p, signature, send, recv, count, dtype, op);
    algorithms::allreduce(p2p, send, recv, count, dtype, op, tuning);
  });
}

void UcxCommunicator::broadcast(void *buf, size_t count, xffl_dtype_t dtype, int root_index, void *) {
  const int n = static_cast<int>(group_.members.size());
  const CallSignature signature = CallSignature::of(CallKind::Broadcast, count, dtype, -1, global_root(root_index));
  run("broadcast", signature, [&](UcxTransport &p2p, const algorithms::Tuning &tuning) {
    if (host_pipeline(p2p, tuning, count * dtype_size(dtype), algorithm_choice::host_pipeline_broadcast_from(n)))
      return host_->pipelined_broadcast(p2p, signature, buf, count * dtype_size(dtype), root_index,
                                        round_options(tuning, n, count * dtype_size(dtype)));
    if (single_copy(tuning, count * dtype_size(dtype), algorithm_choice::single_copy_broadcast_from(n))) {
      ProcessMemory memory(p2p);
      return algorithms::single_copy_broadcast(p2p, memory, buf, count * dtype_size(dtype), root_index);
    }
    if (host_segment(p2p, tuning, count * dtype_size(dtype), algorithm_choice::host_segment_broadcast_below(n)))
      return host_->broadcast(p2p, signature, buf, count * dtype_size(dtype), root_index);
    algorithms::broadcast(p2p, buf, count, dtype, root_index, tuning);
  });
}

void UcxCommunicator::abort_broadcast(int root_index, size_t count, xffl_dtype_t dtype, const Error &why) noexcept {
  if (failure_) return;
  try {
    const CallSignature signature = CallSignature::of(CallKind::Broadcast, count, dtype, -1, global_root(root_index));
    if (group_.members.size() > 1) {
      UcxTransport transport(*worker_, group_, sequence_++, "broadcast", next_call(signature));
      transport.abort_call(why.status(), why.what());
    }
    failure_ = why;
  } catch (...) {  // a notice of an earlier mismatch, or no memory: the members learn of it by their timeout
  }
}

void UcxCommunicator::broadcast_produced(void *buf, size_t count, xffl_dtype_t dtype, int root_index, size_t window,
                                         const Produce &produce, void *) {
  const int n = static_cast<int>(group_.members.size());
  const size_t bytes = count * dtype_size(dtype);
  // The signature of broadcast: the messages are a broadcast's, only the root's pace differs.
  const CallSignature signature = CallSignature::of(CallKind::Broadcast, count, dtype, -1, global_root(root_index));
  run("broadcast", signature, [&](UcxTransport &p2p, const algorithms::Tuning &tuning) {
    algorithms::WindowProducer producer(produce, count, dtype_size(dtype), window);
    // On one host the segment, as broadcast: in rounds, each part made final just before it is
    // staged; below the rounds, every window first (small buffers), then the slots.
    if (host_pipeline(p2p, tuning, bytes, algorithm_choice::host_pipeline_broadcast_from(n)))
      return host_->pipelined_broadcast(p2p, signature, buf, bytes, root_index, round_options(tuning, n, bytes),
                                        &producer);
    if (host_segment(p2p, tuning, bytes, algorithm_choice::host_segment_broadcast_below(n))) {
      producer.all();
      return host_->broadcast(p2p, signature, buf, bytes, root_index);
    }
    if (single_copy(tuning, bytes, algorithm_choice::single_copy_broadcast_from(n))) {
      ProcessMemory memory(p2p);
      return algorithms::single_copy_produced_broadcast(p2p, memory, buf, bytes, root_index, producer);
    }
    algorithms::produced_broadcast(p2p, buf, count, dtype, root_index, producer, tuning);
  });
}

bool UcxCommunicator::allgather_on_host(UcxTransport &p2p, const algorithms::Tuning &tuning,
                                        const CallSignature &signature, const void *send, void *recv,
                                        size_t send_count, xffl_dtype_t dtype, const std::function<void()> &before) {
  const int n = static_cast<int>(group_.members.size());
  const size_t bytes = send_count * static_cast<size_t>(n) * dtype_size(dtype);
  if (host_pipeline(p2p, tuning, bytes, algorithm_choice::host_pipeline_allgather_from(n))) {
    if (before) before();
    host_->pipelined_allgather(p2p, signature, send, recv, send_count, dtype, round_options(tuning, n, bytes));
    return true;
  }
  if (single_copy(tuning, bytes, algorithm_choice::single_copy_allgather_from(n))) {
    if (before) before();
    ProcessMemory memory(p2p);
    algorithms::single_copy_allgather(p2p, memory, send, recv, send_count, dtype);
    return true;
  }
  if (host_segment(p2p, tuning, bytes, algorithm_choice::host_segment_allgather_below(n))) {
    if (before) before();
    host_->allgather(p2p, signature, send, recv, send_count, dtype);
    return true;
  }
  return false;
}

void UcxCommunicator::allgather(const void *send, void *recv, size_t send_count, xffl_dtype_t dtype, void *) {
  const CallSignature signature = CallSignature::of(CallKind::Allgather, send_count, dtype);
  run("allgather", signature, [&](UcxTransport &p2p, const algorithms::Tuning &tuning) {
    if (!allgather_on_host(p2p, tuning, signature, send, recv, send_count, dtype, {}))
      algorithms::allgather(p2p, send, recv, send_count, dtype, tuning);
  });
}

void UcxCommunicator::allgather_streamed(void *send, void *recv, size_t send_count, xffl_dtype_t dtype, size_t window,
                                         const Produce &produce, const Consume &consume, void *) {
  const CallSignature signature = CallSignature::of(CallKind::Allgather, send_count, dtype);
  run("allgather", signature, [&](UcxTransport &p2p, const algorithms::Tuning &tuning) {
    // On one host the copies are memory-bound and short: every window first, then allgather's path.
    const auto produce_all = [&] {
      algorithms::WindowProducer producer(produce, send_count, dtype_size(dtype), window);
      producer.all();
    };
    if (allgather_on_host(p2p, tuning, signature, send, recv, send_count, dtype, produce_all)) {
      algorithms::WindowConsumer consumer(consume, send_count, dtype_size(dtype), window);
      consumer.all();
      return;
    }
    algorithms::streamed_allgather(p2p, send, recv, send_count, dtype, window, produce, consume, tuning);
  });
}

void UcxCommunicator::reduce_scatter(const void *send, void *recv, size_t recv_count, xffl_dtype_t dtype,
                                     xffl_redop_t op, void *) {
  const int n = static_cast<int>(group_.members.size());
  const CallSignature signature = CallSignature::of(CallKind::ReduceScatter, recv_count, dtype, op);
  run("reduce_scatter", signature, [&](UcxTransport &p2p, const algorithms::Tuning &tuning) {
    if (host_pipeline(p2p, tuning, recv_count * static_cast<size_t>(n) * dtype_size(dtype),
                      algorithm_choice::host_pipeline_reduce_scatter_from(n)))
      return host_->pipelined_reduce_scatter(p2p, signature, send, recv, recv_count, dtype, op,
                                             round_options(tuning, n, recv_count * dtype_size(dtype)));
    if (single_copy(tuning, recv_count * static_cast<size_t>(n) * dtype_size(dtype), algorithm_choice::single_copy_reduce_scatter_from(n))) {
      ProcessMemory memory(p2p);
      return algorithms::single_copy_reduce_scatter(p2p, memory, send, recv, recv_count, dtype, op);
    }
    if (host_segment(p2p, tuning, recv_count * static_cast<size_t>(n) * dtype_size(dtype),
                     algorithm_choice::host_segment_reduce_scatter_below(n)))
      return host_->reduce_scatter(p2p, signature, send, recv, recv_count, dtype, op);
    algorithms::reduce_scatter(p2p, send, recv, recv_count, dtype, op, tuning);
  });
}

void UcxCommunicator::allreduce_and_relay(void *buf, size_t count, xffl_dtype_t dtype, xffl_redop_t op,
                                          double premul, Communicator &relay, int relay_root, void *stream) {
  auto *chain = dynamic_cast<UcxCommunicator *>(&relay);
  if (!chain || group_.plain_relay || chain->worker_ != worker_ || relay_root != chain->group_.my_index)
    return Communicator::allreduce_and_relay(buf, count, dtype, op, premul, relay, relay_root, stream);
  if (premul != 1.0) scale(buf, count, dtype, premul);
  // The relay's members call relay_receive, whose messages carry a broadcast's signature.
  run_paired("federated average (sender)", CallSignature::of(CallKind::Allreduce, count, dtype, op), chain,
             CallSignature::of(CallKind::Broadcast, count, dtype, -1, chain->global_root(relay_root)),
             [&](algorithms::PointToPoint &federated, algorithms::PointToPoint *replica,
                 const algorithms::Tuning &tuning) {
               algorithms::allreduce_and_relay(federated, *replica, buf, count, dtype, op, tuning);
             });
}

void UcxCommunicator::relay_receive(void *buf, size_t count, xffl_dtype_t dtype, xffl_redop_t op, int relay_root,
                                    int federated_size, int sender_index, void *stream) {
  if (group_.plain_relay)
    return Communicator::relay_receive(buf, count, dtype, op, relay_root, federated_size, sender_index, stream);
  run("federated average (relay)", CallSignature::of(CallKind::Broadcast, count, dtype, -1, global_root(relay_root)),
      [&](UcxTransport &p2p, const algorithms::Tuning &tuning) {
    algorithms::relay_receive(p2p, relay_root, buf, count, dtype, op, federated_size, sender_index, tuning);
  });
}

void UcxCommunicator::barrier() {
  const CallSignature signature = CallSignature::barrier();
  run("barrier", signature, [&](UcxTransport &p2p, const algorithms::Tuning &tuning) {
    if (host_segment(p2p, tuning, 0, 1, true)) return host_->barrier(p2p, signature);
    algorithms::barrier(p2p);
  });
}

}  // namespace xffl::comm::ucx
