// One UCX context and worker for one process (or one thread-as-rank in the tests), the endpoints to
// peers made lazily from the addresses they published, what UCX said about failed peers, and the
// waiting primitive that spins briefly and then sleeps on the worker's event fd.
//
// Not thread-safe (UCS_THREAD_MODE_SINGLE): one thread drives a backend and its communicators.
// Shared by the backend and its communicators, so either may be destroyed first.
#ifndef XFFL_SRC_COMM_UCX_UCX_WORKER_H
#define XFFL_SRC_COMM_UCX_UCX_WORKER_H

#include <ucp/api/ucp.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "comm/exchange.h"
#include "comm/ucx/ucx_settings.h"

namespace xffl::comm::ucx {

using Clock = std::chrono::steady_clock;

std::string address_key(int rank);

// The blob published under address_key: the host it runs on and its UCX worker address.
struct PublishedAddress {
  std::string host;
  std::vector<uint8_t> worker_address;
};
std::string host_identity();
std::vector<uint8_t> encode_address(const std::string &host, const void *address, size_t length);
PublishedAddress decode_address(const std::vector<uint8_t> &value);  // empty worker_address if malformed

class UcxWorker {
 public:
  // Brings up context and worker and publishes this rank's worker address under address_key(rank).
  UcxWorker(int rank, int world_size, Exchange &exchange, const UcxSettings &settings);
  ~UcxWorker();
  UcxWorker(const UcxWorker &) = delete;
  UcxWorker &operator=(const UcxWorker &) = delete;

  int rank() const { return rank_; }
  int world_size() const { return world_size_; }
  UcxSettings &settings() { return settings_; }
  ucp_worker_h handle() const { return worker_; }

  // The endpoint to a global rank; fetches its address (waiting at most until deadline) on first use.
  ucp_ep_h endpoint(int peer_rank, Clock::time_point deadline);

  // Why a peer cannot be used any more (UCX reported it, or we gave up on it), or nullptr.
  const std::string *failure(int peer_rank) const;

  // Makes progress; if nothing happens within a short spin, sleeps on the event fd (at most 100 ms,
  // never past deadline). The caller checks its condition after every return.
  void progress_or_sleep(Clock::time_point deadline);

  // Force-closes the endpoint so that UCX releases outstanding sends (and the caller's buffers)
  // at once; the peer counts as failed from then on.
  void abandon_peer(int peer_rank, const std::string &why);

  void log(xffl_log_level_t level, const std::string &text) const;

 private:
  struct Peer {
    UcxWorker *owner = nullptr;
    int rank = 0;
    ucp_ep_h endpoint = nullptr;
    bool failed = false;
    std::string failure;
  };
  static void on_peer_error(void *arg, ucp_ep_h endpoint, ucs_status_t status);
  void close_endpoints(Clock::time_point deadline);
  void drain_closing(Clock::time_point deadline);

  int rank_;
  int world_size_;
  Exchange &exchange_;
  UcxSettings settings_;
  std::string host_;
  ucp_context_h context_ = nullptr;
  ucp_worker_h worker_ = nullptr;
  ucp_address_t *address_ = nullptr;
  size_t address_length_ = 0;
  int event_fd_ = -1;
  std::vector<Peer> peers_;
  std::vector<void *> closing_;  // close requests still in flight
};

}  // namespace xffl::comm::ucx

#endif
