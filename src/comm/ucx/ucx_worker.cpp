#include "comm/ucx/ucx_worker.h"

#include <poll.h>
#include <ucs/debug/log_def.h>
#include <cstdarg>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "common/error.h"
#include "common/log.h"

namespace xffl::comm::ucx {

namespace {

// ucp_worker_progress calls without any event before a waiter goes to sleep on the event fd: long
// enough to catch a reply already on its way, short enough that 8 waiting ranks share 2 cores.
constexpr int kSpinRounds = 300;
constexpr int kLongestSleepMs = 100;
// Closing endpoints at destruction flushes what is still in flight, but never waits longer.
constexpr int kCloseBoundMs = 1000;

ucs_log_func_rc_t exp_handler(const char *file, unsigned line, const char *, ucs_log_level_t level,
                                const ucs_log_component_config_t *, const char *format, va_list ap) {
  if (level == UCS_LOG_LEVEL_FATAL && getenv("XFFL_EXP_SWALLOW")) {
    char text[512];
    vsnprintf(text, sizeof text, format, ap);
    fprintf(stderr, "SWALLOWED %s:%u %s\n", file, line, text);
    return UCS_LOG_FUNC_RC_STOP;
  }
  return UCS_LOG_FUNC_RC_CONTINUE;
}

[[noreturn]] void ucx_failed(int rank, const char *what, ucs_status_t status) {
  fail(XFFL_EBACKEND, "rank ", rank, ": UCX ", what, " failed: ", ucs_status_string(status));
}

}  // namespace

std::string address_key(int rank) { return "ucx/addr/" + std::to_string(rank); }

// Host name and kernel boot id: equal for processes that can share memory, different across
// machines even when containers reuse host names.
std::string host_identity() {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  std::string identity = name;
  std::ifstream boot_id("/proc/sys/kernel/random/boot_id");
  std::string id;
  if (boot_id >> id) identity += "/" + id;
  return identity;
}

// What a rank publishes: [u16 host identity length][host identity][UCX worker address].
std::vector<uint8_t> encode_address(const std::string &host, const void *address, size_t length) {
  std::vector<uint8_t> value;
  const size_t host_length = std::min<size_t>(host.size(), 0xffff);
  value.push_back(static_cast<uint8_t>(host_length & 0xff));
  value.push_back(static_cast<uint8_t>(host_length >> 8));
  value.insert(value.end(), host.begin(), host.begin() + static_cast<long>(host_length));
  const auto *bytes = static_cast<const uint8_t *>(address);
  value.insert(value.end(), bytes, bytes + length);
  return value;
}

PublishedAddress decode_address(const std::vector<uint8_t> &value) {
  PublishedAddress decoded;
  if (value.size() < 2) return decoded;
  const size_t host_length = value[0] | static_cast<size_t>(value[1]) << 8;
  if (value.size() < 2 + host_length) return decoded;
  decoded.host.assign(value.begin() + 2, value.begin() + 2 + static_cast<long>(host_length));
  decoded.worker_address.assign(value.begin() + 2 + static_cast<long>(host_length), value.end());
  return decoded;
}

UcxWorker::UcxWorker(int rank, int world_size, Exchange &exchange, const UcxSettings &settings)
    : rank_(rank), world_size_(world_size), exchange_(exchange), settings_(settings), host_(host_identity()),
      peers_(static_cast<size_t>(world_size)) {
  const auto started = Clock::now();
  static bool pushed = false;
  if (!pushed) { ucs_log_push_handler(exp_handler); pushed = true; }
  for (int r = 0; r < world_size; ++r) {
    peers_[static_cast<size_t>(r)].owner = this;
    peers_[static_cast<size_t>(r)].rank = r;
  }
  try {
    ucp_config_t *config = nullptr;
    ucs_status_t status = ucp_config_read(nullptr, nullptr, &config);
    if (status != UCS_OK) ucx_failed(rank_, "ucp_config_read", status);
    ucp_params_t params{};
    params.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED |
                        UCP_PARAM_FIELD_ESTIMATED_NUM_EPS;
    params.features = UCP_FEATURE_TAG | UCP_FEATURE_WAKEUP;
    params.mt_workers_shared = 0;
    params.estimated_num_eps = static_cast<size_t>(world_size);
    status = ucp_init(&params, config, &context_);
    ucp_config_release(config);
    if (status != UCS_OK) ucx_failed(rank_, "ucp_init", status);

    ucp_worker_params_t worker_params{};
    worker_params.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    worker_params.thread_mode = UCS_THREAD_MODE_SINGLE;
    status = ucp_worker_create(context_, &worker_params, &worker_);
    if (status != UCS_OK) ucx_failed(rank_, "ucp_worker_create", status);
    status = ucp_worker_get_efd(worker_, &event_fd_);
    if (status != UCS_OK) ucx_failed(rank_, "ucp_worker_get_efd", status);
    status = ucp_worker_get_address(worker_, &address_, &address_length_);
    if (status != UCS_OK) ucx_failed(rank_, "ucp_worker_get_address", status);

    exchange_.publish(address_key(rank_), encode_address(host_, address_, address_length_));
  } catch (...) {
    if (address_) ucp_worker_release_address(worker_, address_);
    if (worker_) ucp_worker_destroy(worker_);
    if (context_) ucp_cleanup(context_);
    throw;
  }
  const auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started).count();
  log(XFFL_LOG_INFO, "UCX worker up in " + std::to_string(elapsed) + " ms (address " +
                         std::to_string(address_length_) + " bytes published)");
}

UcxWorker::~UcxWorker() {
  const int bound = std::min(settings_.timeout_ms, kCloseBoundMs);
  close_endpoints(Clock::now() + std::chrono::milliseconds(bound));
  ucp_worker_release_address(worker_, address_);
  ucp_worker_destroy(worker_);
  ucp_cleanup(context_);
}

// Healthy peers get a flushing close so the last messages of the last collective still arrive;
// failed ones a forced close. Both are bounded: what is not done by the deadline is dropped with
// the worker.
void UcxWorker::close_endpoints(Clock::time_point deadline) {
  for (Peer &peer : peers_) {
    if (!peer.endpoint) continue;
    ucp_request_param_t param{};
    param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    param.flags = peer.failed ? UCP_EP_CLOSE_FLAG_FORCE : 0;
    ucs_status_ptr_t request = ucp_ep_close_nbx(peer.endpoint, &param);
    peer.endpoint = nullptr;
    if (UCS_PTR_IS_PTR(request)) closing_.push_back(request);
  }
  drain_closing(deadline);
}

void UcxWorker::drain_closing(Clock::time_point deadline) {
  while (true) {
    closing_.erase(std::remove_if(closing_.begin(), closing_.end(),
                                  [](void *request) {
                                    if (ucp_request_check_status(request) == UCS_INPROGRESS) return false;
                                    ucp_request_free(request);
                                    return true;
                                  }),
                   closing_.end());
    if (closing_.empty() || Clock::now() >= deadline) break;
    progress_or_sleep(deadline);
  }
  for (void *request : closing_) ucp_request_free(request);  // released by UCX when it completes
  closing_.clear();
}

void UcxWorker::on_peer_error(void *arg, ucp_ep_h, ucs_status_t status) {
  auto *peer = static_cast<Peer *>(arg);
  if (peer->failed) return;
  peer->failed = true;
  peer->failure = std::string("UCX reported ") + ucs_status_string(status);
  peer->owner->log(XFFL_LOG_WARN, "rank " + std::to_string(peer->rank) + " failed: " + peer->failure);
}

ucp_ep_h UcxWorker::endpoint(int peer_rank, Clock::time_point deadline) {
  Peer &peer = peers_.at(static_cast<size_t>(peer_rank));
  if (peer.endpoint) return peer.endpoint;
  if (peer.failed) fail(XFFL_EPEER, "rank ", rank_, ": rank ", peer_rank, " failed earlier (", peer.failure, ")");
  const auto remaining = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  const PublishedAddress published =
      decode_address(exchange_.fetch(address_key(peer_rank), static_cast<int>(std::max<long long>(0, remaining))));
  if (published.worker_address.empty())
    fail(XFFL_EPEER, "rank ", rank_, ": the address rank ", peer_rank, " published under ", address_key(peer_rank),
         " is malformed");

  // UCX 1.13's shared-memory transports cannot report a failed peer, so asking for that makes UCX
  // fall back to TCP over loopback (4x slower). On one host we let UCX pick shared memory and
  // detect a dead neighbour by the timeout instead, unless settings say otherwise.
  const bool same_host = published.host == host_;
  const bool detect_failure = !same_host || settings_.peer_failure_detection_on_host || getenv("XFFL_EXP_PEER");
  ucp_ep_params_t params{};
  params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE;
  params.address = reinterpret_cast<const ucp_address_t *>(published.worker_address.data());
  params.err_mode = detect_failure ? UCP_ERR_HANDLING_MODE_PEER : UCP_ERR_HANDLING_MODE_NONE;
  if (detect_failure) {
    params.field_mask |= UCP_EP_PARAM_FIELD_ERR_HANDLER;
    params.err_handler.cb = &UcxWorker::on_peer_error;
    params.err_handler.arg = &peer;
  }
  const ucs_status_t status = ucp_ep_create(worker_, &params, &peer.endpoint);
  if (status != UCS_OK) {
    peer.endpoint = nullptr;
    fail(XFFL_EBACKEND, "rank ", rank_, ": UCX could not connect to rank ", peer_rank, ": ", ucs_status_string(status));
  }
  if (settings_.log_level >= XFFL_LOG_DEBUG) {
    log(XFFL_LOG_DEBUG, "endpoint to rank " + std::to_string(peer_rank) + (same_host ? " (same host" : " (other host") +
                            (detect_failure ? ", peer failure detection on):" : ", failures found by timeout):"));
    ucp_ep_print_info(peer.endpoint, stderr);
  }
  return peer.endpoint;
}

const std::string *UcxWorker::failure(int peer_rank) const {
  const Peer &peer = peers_.at(static_cast<size_t>(peer_rank));
  return peer.failed ? &peer.failure : nullptr;
}

void UcxWorker::progress_or_sleep(Clock::time_point deadline) {
  for (int round = 0; round < kSpinRounds; ++round)
    if (ucp_worker_progress(worker_) != 0) return;
  const ucs_status_t armed = ucp_worker_arm(worker_);
  if (armed == UCS_ERR_BUSY) return;  // events arrived meanwhile: progress them first
  if (armed != UCS_OK) ucx_failed(rank_, "ucp_worker_arm", armed);
  const auto remaining = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count() + 1;
  const int sleep_ms = static_cast<int>(std::clamp<long long>(remaining, 0, kLongestSleepMs));
  pollfd waiting{event_fd_, POLLIN, 0};
  (void)poll(&waiting, 1, sleep_ms);  // EINTR and timeouts alike: the caller re-checks
}

void UcxWorker::abandon_peer(int peer_rank, const std::string &why) {
  Peer &peer = peers_.at(static_cast<size_t>(peer_rank));
  if (!peer.failed) {
    peer.failed = true;
    peer.failure = why;
  }
  if (!peer.endpoint) return;
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
  param.flags = UCP_EP_CLOSE_FLAG_FORCE;
  ucs_status_ptr_t request = ucp_ep_close_nbx(peer.endpoint, &param);
  peer.endpoint = nullptr;
  if (UCS_PTR_IS_PTR(request)) closing_.push_back(request);
  drain_closing(Clock::now() + std::chrono::milliseconds(kLongestSleepMs));
}

void UcxWorker::log(xffl_log_level_t level, const std::string &text) const {
  Logger(settings_.log_level, rank_).write(level, text);
}

}  // namespace xffl::comm::ucx
