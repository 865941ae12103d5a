#include "comm/ucx/ucx_worker.h"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <fstream>
#include <iostream>
#include <sstream>

#include "comm/ucx/ucx_log_filter.h"
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
// Forced closes complete without the peer; this only lets UCX run their completions.
constexpr int kForcedCloseBoundMs = 100;

[[noreturn]] void ucx_failed(int rank, const char *what, ucs_status_t status) {
  fail(XFFL_EBACKEND, "rank ", rank, ": UCX ", what, " failed: ", ucx().ucs_status_string(status));
}

int remaining_ms(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return static_cast<int>(std::clamp<long long>(left, 0, std::numeric_limits<int>::max()));
}

void put_u16_prefixed(std::vector<uint8_t> &value, const std::string &text) {
  const size_t length = std::min<size_t>(text.size(), 0xffff);
  value.push_back(static_cast<uint8_t>(length & 0xff));
  value.push_back(static_cast<uint8_t>(length >> 8));
  value.insert(value.end(), text.begin(), text.begin() + static_cast<long>(length));
}

// Reads [u16 length][bytes] at offset; false when value is too short.
bool take_u16_prefixed(const std::vector<uint8_t> &value, size_t &offset, std::string &text) {
  if (value.size() < offset + 2) return false;
  const size_t length = value[offset] | static_cast<size_t>(value[offset + 1]) << 8;
  if (value.size() < offset + 2 + length) return false;
  text.assign(value.begin() + static_cast<long>(offset + 2), value.begin() + static_cast<long>(offset + 2 + length));
  offset += 2 + length;
  return true;
}

}  // namespace

bool is_peer_side_failure(ucs_status_t status) {
  switch (status) {
    case UCS_ERR_SHMEM_SEGMENT:      // its shared memory is gone: the process exited
    case UCS_ERR_ENDPOINT_TIMEOUT:
    case UCS_ERR_UNREACHABLE:
    case UCS_ERR_CONNECTION_RESET:
    case UCS_ERR_REJECTED:
    case UCS_ERR_NOT_CONNECTED:
    case UCS_ERR_TIMED_OUT:
    case UCS_ERR_IO_ERROR:           // CMA could not reach its memory (see ucx_log_filter.h)
    case UCS_ERR_CANCELED:           // we force-closed the endpoint after the peer failed
      return true;
    default:
      return false;
  }
}

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

// What a rank publishes: [u16 length][host identity] [u16 length][process identity, may be empty]
// [UCX worker address].
std::vector<uint8_t> encode_address(const std::string &host, const ProcessIdentity &process, const void *address,
                                    size_t length) {
  std::vector<uint8_t> value;
  put_u16_prefixed(value, host);
  put_u16_prefixed(value, encode_process(process));
  const auto *bytes = static_cast<const uint8_t *>(address);
  value.insert(value.end(), bytes, bytes + length);
  return value;
}

PublishedAddress decode_address(const std::vector<uint8_t> &value) {
  PublishedAddress decoded;
  size_t offset = 0;
  std::string host, process;
  if (!take_u16_prefixed(value, offset, host) || !take_u16_prefixed(value, offset, process)) return decoded;
  decoded.host = host;
  decoded.process = decode_process(process);
  decoded.worker_address.assign(value.begin() + static_cast<long>(offset), value.end());
  return decoded;
}

UcxWorker::UcxWorker(int rank, int world_size, Exchange &exchange, const UcxSettings &settings)
    : rank_(rank), world_size_(world_size), exchange_(exchange), settings_(settings), host_(host_identity()),
      process_(this_process()), peers_(static_cast<size_t>(world_size)) {
  const auto started = Clock::now();
  ucx();  // loads UCX on first use: XFFL_EUNSUPPORTED here, before anything else, when it cannot be loaded
  // Process-wide, so only when the user asked for them (XFFL_OPT_UCX_PROCESS_SETTINGS): another UCX user
  // of the process (an MPI library) would see both.
  if (settings_.process_settings) install_ucx_log_filter();  // before UCX can meet a dead peer over CMA
  for (int r = 0; r < world_size; ++r) {
    peers_[static_cast<size_t>(r)].owner = this;
    peers_[static_cast<size_t>(r)].rank = r;
  }
  try {
    // UCX 1.13's TCP put-zcopy protocol asserts (tcp_ep.c: PUT_TX_WAITING_ACK) and aborts the whole process
    // when the peer dies mid-transfer; without it, TCP rendezvous uses get/bcopy, a dead peer is an error,
    // and large messages over TCP were faster here (64 MiB allreduce, 2 ranks, UCX_TLS=^cma: 4.6 vs
    // 2.3-2.9 GB/s). UCX 1.13 reads transport settings only from the environment (ucp_config_modify warns
    // "invalid configuration"). setenv changes the process for every UCX user and races getenv on other
    // threads, so it is done only on request, never overriding the user's own value; xffl-run exports it
    // into its children's environment instead.
    if (settings_.process_settings) setenv("UCX_TCP_PUT_ENABLE", "n", 0);
    ucp_config_t *config = nullptr;
    ucs_status_t status = ucx().ucp_config_read(nullptr, nullptr, &config);
    if (status != UCS_OK) ucx_failed(rank_, "ucp_config_read", status);
    ucp_params_t params{};
    params.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED |
                        UCP_PARAM_FIELD_ESTIMATED_NUM_EPS;
    params.features = UCP_FEATURE_TAG | UCP_FEATURE_WAKEUP;
    params.mt_workers_shared = 0;
    params.estimated_num_eps = static_cast<size_t>(world_size);
    status = ucx().ucp_init_version(UCP_API_MAJOR, UCP_API_MINOR, &params, config, &context_);
    ucx().ucp_config_release(config);
    if (status != UCS_OK) ucx_failed(rank_, "ucp_init", status);

    ucp_worker_params_t worker_params{};
    worker_params.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    worker_params.thread_mode = UCS_THREAD_MODE_SINGLE;
    status = ucx().ucp_worker_create(context_, &worker_params, &worker_);
    if (status != UCS_OK) ucx_failed(rank_, "ucp_worker_create", status);
    status = ucx().ucp_worker_get_efd(worker_, &event_fd_);
    if (status != UCS_OK) ucx_failed(rank_, "ucp_worker_get_efd", status);
    status = ucx().ucp_worker_get_address(worker_, &address_, &address_length_);
    if (status != UCS_OK) ucx_failed(rank_, "ucp_worker_get_address", status);

    exchange_.publish(address_key(rank_), encode_address(host_, process_, address_, address_length_));
  } catch (...) {
    if (address_) ucx().ucp_worker_release_address(worker_, address_);
    if (worker_) ucx().ucp_worker_destroy(worker_);
    if (context_) ucx().ucp_cleanup(context_);
    throw;
  }
  const auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started).count();
  log(XFFL_LOG_INFO, "UCX worker up in " + std::to_string(elapsed) + " ms (address " +
                         std::to_string(address_length_) + " bytes published)");
}

// Whatever UCX still says while we tear down goes to our debug log (ucx_log_filter.h): by then
// endpoints to peers known to be gone were force-closed and the rest flushed, so what remains is a
// peer that exited during our final flush, after it finished its part.
UcxWorker::~UcxWorker() {
  RedirectUcxLines quiet([this](const char *level, const std::string &where, const std::string &text) {
    log(XFFL_LOG_DEBUG, std::string("UCX ") + level + " at teardown (" + where + "): " + text);
  });
  const int bound = std::min(settings_.timeout_ms, kCloseBoundMs);
  const auto deadline = Clock::now() + std::chrono::milliseconds(bound);
  release_abandoned({}, deadline);
  close_endpoints(deadline);
  for (void *request : abandoned_) ucx().ucp_request_free(request);  // UCX releases it if it ever completes
  abandoned_.clear();
  ucx().ucp_worker_release_address(worker_, address_);
  ucx().ucp_worker_destroy(worker_);
  ucx().ucp_cleanup(context_);
}

// Healthy peers get a flushing close so the last messages of the last collective still arrive;
// failed ones, those on this host whose process has exited and those a wait timed out on, a forced
// close (a flush to them could only fail). Both are bounded: what is not done by the deadline is dropped with the worker.
void UcxWorker::close_endpoints(Clock::time_point deadline) {
  for (Peer &peer : peers_) {
    if (!peer.endpoint) continue;
    const bool gone = check_peer_process(peer.rank) || peer.unresponsive;
    ucp_request_param_t param{};
    param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    param.flags = gone ? UCP_EP_CLOSE_FLAG_FORCE : 0;
    ucs_status_ptr_t request = ucx().ucp_ep_close_nbx(peer.endpoint, &param);
    peer.endpoint = nullptr;
    if (UCS_PTR_IS_PTR(request)) closing_.push_back(request);
  }
  drain_closing(deadline);
}

void UcxWorker::drain_closing(Clock::time_point deadline) {
  while (true) {
    closing_.erase(std::remove_if(closing_.begin(), closing_.end(),
                                  [](void *request) {
                                    if (ucx().ucp_request_check_status(request) == UCS_INPROGRESS) return false;
                                    ucx().ucp_request_free(request);
                                    return true;
                                  }),
                   closing_.end());
    if (closing_.empty() || Clock::now() >= deadline) break;
    progress_or_sleep(deadline);
  }
  for (void *request : closing_) ucx().ucp_request_free(request);  // released by UCX when it completes
  closing_.clear();
}

// Not a warning: peers that finish first close their endpoints, which UCX reports here too. A
// collective that needed the peer fails with its own error, naming it.
void UcxWorker::on_peer_error(void *arg, ucp_ep_h, ucs_status_t status) {
  auto *peer = static_cast<Peer *>(arg);
  peer->owner->mark_failed(peer->rank, std::string("UCX reported ") + ucx().ucs_status_string(status));
}

void UcxWorker::mark_failed(int peer_rank, const std::string &why) {
  Peer &peer = peers_.at(static_cast<size_t>(peer_rank));
  if (peer.failed) return;
  peer.failed = true;
  peer.failure = why;
  log(XFFL_LOG_DEBUG, "rank " + std::to_string(peer_rank) + " failed: " + why);
}

void UcxWorker::mark_unresponsive(int peer_rank) { peers_.at(static_cast<size_t>(peer_rank)).unresponsive = true; }

const PublishedAddress &UcxWorker::look_up(Peer &peer, Clock::time_point deadline) {
  if (peer.looked_up) return peer.published;
  PublishedAddress published = decode_address(exchange_.fetch(address_key(peer.rank), remaining_ms(deadline)));
  if (published.worker_address.empty())
    fail(XFFL_EPEER, "rank ", rank_, ": the address rank ", peer.rank, " published under ", address_key(peer.rank),
         " is malformed");
  peer.published = std::move(published);
  peer.looked_up = true;
  return peer.published;
}

bool UcxWorker::check_peer_process(int peer_rank, Clock::time_point lookup_deadline) {
  Peer &peer = peers_.at(static_cast<size_t>(peer_rank));
  if (!peer.failed && !peer.looked_up && !peer.lookup_tried) {
    peer.lookup_tried = true;
    try {
      look_up(peer, lookup_deadline);
    } catch (const Error &error) {
      log(XFFL_LOG_DEBUG, "could not look up rank " + std::to_string(peer_rank) + ": " + error.what());
    }
  }
  return check_peer_process(peer_rank);
}

bool UcxWorker::check_peer_process(int peer_rank) {
  Peer &peer = peers_.at(static_cast<size_t>(peer_rank));
  if (peer.failed) return true;
  if (!peer.looked_up || peer.published.host != host_) return false;
  if (process_liveness(peer.published.process, process_) != Liveness::gone) return false;
  mark_failed(peer_rank, "its process (pid " + std::to_string(peer.published.process.pid) + " on this host) has exited");
  return true;
}

std::vector<std::string> UcxWorker::known_failures(const std::vector<int> &members, int excluded,
                                                   Clock::time_point deadline) {
  std::vector<std::string> phrases;
  // Asked once: the store knows every rank that left, on any host or in any pid namespace, where
  // /proc only sees this host's. Bounded on its own (the store answers at once) so that a deadline
  // already spent still gets an answer; its failure (the store gone) is reported, never thrown, and
  // then no lookups are tried either: they would go to the same store.
  constexpr int kDepartedBoundMs = 1000;
  std::string lookup_failure;  // after one failed request (the store gone, most likely) we ask no more
  std::vector<int> departed;
  try {
    departed = exchange_.departed_ranks(std::clamp(remaining_ms(deadline), 100, kDepartedBoundMs));
  } catch (const Error &error) {
    lookup_failure = std::string("could not ask the store which ranks left: ") + error.what();
  }
  for (int member : departed)
    if (member >= 0 && member < world_size_ && member != rank_)
      mark_failed(member, "it left the job: its store connection closed");
  for (int member : members) {
    if (member == rank_ || member == excluded || member < 0 || member >= world_size_) continue;
    Peer &peer = peers_[static_cast<size_t>(member)];
    if (!peer.failed && !peer.looked_up && lookup_failure.empty()) {
      try {
        look_up(peer, deadline);
      } catch (const Error &error) {
        lookup_failure = "could not look up rank " + std::to_string(member) + ": " + error.what();
      }
    }
    if (check_peer_process(member))
      phrases.push_back("rank " + std::to_string(member) + " is known to have failed (" + peer.failure + ")");
  }
  if (!lookup_failure.empty()) phrases.push_back(lookup_failure);
  return phrases;
}

ucp_ep_h UcxWorker::endpoint(int peer_rank, Clock::time_point deadline) {
  Peer &peer = peers_.at(static_cast<size_t>(peer_rank));
  if (peer.endpoint) return peer.endpoint;
  if (peer.failed) fail(XFFL_EPEER, "rank ", rank_, ": rank ", peer_rank, " failed earlier (", peer.failure, ")");
  const PublishedAddress &published = look_up(peer, deadline);

  // UCX 1.13's shared-memory transports cannot report a failed peer, so asking for that makes UCX
  // fall back to TCP over loopback, or (with UCX_{SYSV,POSIX}_ERROR_HANDLING=y) drop CMA: 3x slower
  // for large messages either way (numbers in ucx_log_filter.h). On one host we let UCX pick shared
  // memory and CMA; a dead neighbour is seen in /proc (check_peer_process) or by the timeout, and
  // ucx_log_filter.h keeps CMA's report of it from aborting the process. Settings may say otherwise.
  const bool same_host = published.host == host_;
  const bool detect_failure = !same_host || settings_.peer_failure_detection_on_host;
  ucp_ep_params_t params{};
  params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE;
  params.address = reinterpret_cast<const ucp_address_t *>(published.worker_address.data());
  params.err_mode = detect_failure ? UCP_ERR_HANDLING_MODE_PEER : UCP_ERR_HANDLING_MODE_NONE;
  peer.error_handling = detect_failure;
  if (detect_failure) {
    params.field_mask |= UCP_EP_PARAM_FIELD_ERR_HANDLER;
    params.err_handler.cb = &UcxWorker::on_peer_error;
    params.err_handler.arg = &peer;
  }
  std::string ucx_words;  // what UCX said while failing, e.g. "shmat(shmid=...) failed: Invalid argument"
  ucs_status_t status;
  {
    RedirectUcxLines capture([&](const char *, const std::string &, const std::string &text) {
      if (ucx_words.empty()) ucx_words = text;
    });
    status = ucx().ucp_ep_create(worker_, &params, &peer.endpoint);
  }
  if (status != UCS_OK) {
    peer.endpoint = nullptr;
    const std::string why = std::string("UCX could not connect to it: ") + ucx().ucs_status_string(status) +
                            (ucx_words.empty() ? "" : " (" + ucx_words + ")");
    // A peer whose shared memory or connection is gone has failed; anything else is UCX's own trouble.
    if (!is_peer_side_failure(status)) fail(XFFL_EBACKEND, "rank ", rank_, ": rank ", peer_rank, ": ", why);
    mark_failed(peer_rank, why);
    fail(XFFL_EPEER, "rank ", rank_, ": rank ", peer_rank, " failed: ", why);
  }
  if (!ucx_words.empty()) log(XFFL_LOG_DEBUG, "UCX said while connecting to rank " + std::to_string(peer_rank) + ": " + ucx_words);
  if (settings_.log_level >= XFFL_LOG_DEBUG) {
    log(XFFL_LOG_DEBUG, "endpoint to rank " + std::to_string(peer_rank) + (same_host ? " (same host" : " (other host") +
                            (detect_failure ? ", peer failure detection on):" : ", failures found by timeout):"));
    ucx().ucp_ep_print_info(peer.endpoint, stderr);
  }
  return peer.endpoint;
}

bool UcxWorker::shares_memory_with(int peer_rank) const {
  const Peer &peer = peers_.at(static_cast<size_t>(peer_rank));
  return peer.endpoint && !peer.error_handling;
}

const std::string *UcxWorker::failure(int peer_rank) const {
  const Peer &peer = peers_.at(static_cast<size_t>(peer_rank));
  return peer.failed ? &peer.failure : nullptr;
}

void UcxWorker::progress_or_sleep(Clock::time_point deadline) {
  for (int round = 0; round < kSpinRounds; ++round)
    if (ucx().ucp_worker_progress(worker_) != 0) return;
  const ucs_status_t armed = ucx().ucp_worker_arm(worker_);
  if (armed == UCS_ERR_BUSY) return;  // events arrived meanwhile: progress them first
  if (armed != UCS_OK) ucx_failed(rank_, "ucp_worker_arm", armed);
  const auto remaining = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count() + 1;
  const int sleep_ms = static_cast<int>(std::clamp<long long>(remaining, 0, kLongestSleepMs));
  pollfd waiting{event_fd_, POLLIN, 0};
  (void)poll(&waiting, 1, sleep_ms);  // EINTR and timeouts alike: the caller re-checks
}

bool UcxWorker::abandon_peer(int peer_rank, const std::string &why) {
  Peer &peer = peers_.at(static_cast<size_t>(peer_rank));
  mark_failed(peer_rank, why);
  if (!peer.endpoint) return peer.error_handling;
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
  param.flags = UCP_EP_CLOSE_FLAG_FORCE;
  ucs_status_ptr_t request = ucx().ucp_ep_close_nbx(peer.endpoint, &param);
  peer.endpoint = nullptr;
  if (UCS_PTR_IS_PTR(request)) closing_.push_back(request);
  drain_closing(Clock::now() + std::chrono::milliseconds(kForcedCloseBoundMs));
  return peer.error_handling;
}

void UcxWorker::release_abandoned(std::vector<void *> requests, Clock::time_point deadline) {
  abandoned_.insert(abandoned_.end(), requests.begin(), requests.end());
  while (true) {
    abandoned_.erase(std::remove_if(abandoned_.begin(), abandoned_.end(),
                                    [](void *request) {
                                      if (ucx().ucp_request_check_status(request) == UCS_INPROGRESS) return false;
                                      ucx().ucp_request_free(request);
                                      return true;
                                    }),
                     abandoned_.end());
    if (abandoned_.empty() || Clock::now() >= deadline) return;
    progress_or_sleep(deadline);
  }
}

void UcxWorker::log(xffl_log_level_t level, const std::string &text) const {
  Logger(settings_.log_level, rank_).write(level, text);
}

}  // namespace xffl::comm::ucx
