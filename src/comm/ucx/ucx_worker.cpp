#include "comm/ucx/ucx_worker.h"

#include <poll.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>

#include "comm/ucx/revocation.h"
#include "comm/ucx/ucx_log_filter.h"
#include "common/environment.h"
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
// Sending one failed rank's revoke notices to every peer (endpoints made on the way) takes at most
// this; a peer not reached in time still learns of it from the others that pass it on.
constexpr auto kAnnounceBound = std::chrono::milliseconds(1000);

[[noreturn]] void ucx_failed(int rank, const char *what, ucs_status_t status) {
  fail(XFFL_EBACKEND, "rank ", rank, ": UCX ", what, " failed: ", ucx().ucs_status_string(status));
}

}  // namespace

UcxWorker::Ucx::Ucx(int rank, int world_size, const UcxSettings &settings) {
  ucx();  // loads UCX on first use: XFFL_EUNSUPPORTED here, before anything else, when it cannot be loaded
  // Process-wide, so only when the user asked for them (XFFL_OPT_UCX_PROCESS_SETTINGS): another UCX user
  // of the process (an MPI library) would see both.
  if (settings.process_settings) install_ucx_log_filter();  // before UCX can meet a dead peer over CMA
  try {
    // UCX 1.13's TCP put-zcopy protocol asserts (tcp_ep.c: PUT_TX_WAITING_ACK) and aborts the whole process
    // when the peer dies mid-transfer; without it, TCP rendezvous uses get/bcopy, a dead peer is an error,
    // and large messages over TCP were faster here (64 MiB allreduce, 2 ranks, UCX_TLS=^cma: 4.6 vs
    // 2.3-2.9 GB/s). UCX 1.13 reads transport settings only from the environment (ucp_config_modify warns
    // "invalid configuration"). setenv changes the process for every UCX user and races other threads
    // that read the environment, so it is done only on request, never overriding the user's own value;
    // xffl-run exports it into its children's environment instead.
    if (settings.process_settings) setenv("UCX_TCP_PUT_ENABLE", "n", 0);
    ucp_config_t *config = nullptr;
    ucs_status_t status = ucx().ucp_config_read(nullptr, nullptr, &config);
    if (status != UCS_OK) ucx_failed(rank, "ucp_config_read", status);
    // UCX 1.13's TCP transport connects with a blocking connect() (UCX_TCP_CONN_NB=n): an endpoint made
    // to a peer whose host cannot be reached (a cut link, a host down, a firewall that drops) holds the
    // caller in ucp_ep_create for the kernel's SYN retries, about two minutes, whatever XFFL_TIMEOUT says.
    // A revoke notice sent to such a peer hung a rank that way after a cut link (netns.link_cut_2_2_hsdp2,
    // stack in connect() under EndpointCache::endpoint). Non-blocking, the connection completes (or fails)
    // in progress, which every wait bounds. This context only: the key without its "TCP_" prefix is what
    // ucp_config_modify applies to the TCP transport in UCX 1.13 (with it, UCX warns "invalid
    // configuration" and ignores it). The user's own UCX_TCP_CONN_NB wins.
    if (!process_environment_has("UCX_TCP_CONN_NB")) ucx().ucp_config_modify(config, "CONN_NB", "y");
    // A crossing backend's context (UcxSettings::crossing): every message eager.
    if (settings.crossing && !process_environment_has("UCX_RNDV_THRESH")) {
      status = ucx().ucp_config_modify(config, "RNDV_THRESH", "inf");
      if (status != UCS_OK) {
        ucx().ucp_config_release(config);
        ucx_failed(rank, "ucp_config_modify (RNDV_THRESH=inf)", status);
      }
    }
    ucp_params_t params{};
    params.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED |
                        UCP_PARAM_FIELD_ESTIMATED_NUM_EPS;
    params.features = UCP_FEATURE_TAG | UCP_FEATURE_WAKEUP;
    params.mt_workers_shared = 0;
    params.estimated_num_eps = static_cast<size_t>(world_size);
    status = ucx().ucp_init_version(UCP_API_MAJOR, UCP_API_MINOR, &params, config, &context);
    ucx().ucp_config_release(config);
    if (status != UCS_OK) ucx_failed(rank, "ucp_init", status);

    ucp_worker_params_t worker_params{};
    worker_params.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    worker_params.thread_mode = UCS_THREAD_MODE_SINGLE;
    status = ucx().ucp_worker_create(context, &worker_params, &worker);
    if (status != UCS_OK) ucx_failed(rank, "ucp_worker_create", status);
    status = ucx().ucp_worker_get_efd(worker, &event_fd);
    if (status != UCS_OK) ucx_failed(rank, "ucp_worker_get_efd", status);
    status = ucx().ucp_worker_get_address(worker, &address, &address_length);
    if (status != UCS_OK) ucx_failed(rank, "ucp_worker_get_address", status);
  } catch (...) {
    close();
    throw;
  }
}

void UcxWorker::Ucx::close() {
  if (address) ucx().ucp_worker_release_address(worker, address);
  if (worker) ucx().ucp_worker_destroy(worker);
  if (context) ucx().ucp_cleanup(context);
  address = nullptr;
  worker = nullptr;
  context = nullptr;
}

// A failed publish destroys the members made so far, ucx_ among them: nothing is left behind.
UcxWorker::UcxWorker(int rank, int world_size, Exchange &exchange, const UcxSettings &settings)
    : rank_(rank), world_size_(world_size), settings_(settings), ucx_(rank, world_size, settings_),
      addresses_(rank, world_size, exchange, settings.crossing),
      failures_(rank, world_size, exchange, addresses_, settings_),
      endpoints_(rank, world_size, ucx_.worker, settings_, addresses_, failures_),
      announced_(static_cast<size_t>(world_size), false) {
  addresses_.publish(ucx_.address, ucx_.address_length);
  const auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - ucx_.started).count();
  log(XFFL_LOG_INFO, std::string(settings_.crossing ? "UCX worker of the crossing groups" : "UCX worker") + " up in " +
                         std::to_string(elapsed) + " ms (address " +
                         std::to_string(ucx_.address_length) + " bytes published)");
}

// Whatever UCX still says while we tear down goes to our debug log (ucx_log_filter.h): by then
// endpoints to peers known to be gone were force-closed and the rest flushed, so what remains is a
// peer that exited during our final flush, after it finished its part. The order: the given-up
// requests are progressed, then the endpoints closed, then the requests still not complete freed
// (UCX releases them if they ever complete), and last the UCX worker and context go. The members are
// destroyed after that, in the order ucx_worker.h gives.
UcxWorker::~UcxWorker() {
  RedirectUcxLines quiet([this](const char *level, const std::string &where, const std::string &text) {
    log(XFFL_LOG_DEBUG, std::string("UCX ") + level + " at teardown (" + where + "): " + text);
  });
  const int bound = std::min(settings_.timeout_ms, kCloseBoundMs);
  const auto deadline = Clock::now() + std::chrono::milliseconds(bound);
  release_abandoned({}, deadline);
  reap_and_free(endpoints_.close_all(), deadline);
  for (void *request : abandoned_) ucx().ucp_request_free(request);  // UCX releases it if it ever completes
  abandoned_.clear();
  ucx_.close();
}

void UcxWorker::progress_or_sleep(Clock::time_point deadline) {
  for (int round = 0; round < kSpinRounds; ++round)
    if (ucx().ucp_worker_progress(ucx_.worker) != 0) return;
  const ucs_status_t armed = ucx().ucp_worker_arm(ucx_.worker);
  if (armed == UCS_ERR_BUSY) return;  // events arrived meanwhile: progress them first
  if (armed != UCS_OK) ucx_failed(rank_, "ucp_worker_arm", armed);
  const auto remaining = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count() + 1;
  const int sleep_ms = static_cast<int>(std::clamp<long long>(remaining, 0, kLongestSleepMs));
  pollfd waiting{ucx_.event_fd, POLLIN, 0};
  (void)poll(&waiting, 1, sleep_ms);  // EINTR and timeouts alike: the caller re-checks
}

bool UcxWorker::abandon_peer(int peer_rank, const std::string &why) {
  failures_.mark_given_up(peer_rank, why);
  std::vector<void *> closing;
  if (void *request = endpoints_.close(peer_rank, true)) closing.push_back(request);
  reap_and_free(std::move(closing), Clock::now() + std::chrono::milliseconds(kForcedCloseBoundMs));
  return endpoints_.tracks_requests(peer_rank);
}

void UcxWorker::release_abandoned(std::vector<void *> requests, Clock::time_point deadline) {
  abandoned_.insert(abandoned_.end(), requests.begin(), requests.end());
  reap(abandoned_, deadline);
}

void UcxWorker::load_address_table() {
  const auto started = Clock::now();
  try {
    addresses_.look_up_all(started + std::chrono::milliseconds(settings_.timeout_ms));
  } catch (const Error &error) {  // what is missing is looked up on first need, as before
    log(XFFL_LOG_WARN, std::string("could not load the address table (endpoints and liveness checks will need the "
                                   "store): ") + error.what());
    return;
  }
  const auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started).count();
  log(XFFL_LOG_DEBUG, "address table of " + std::to_string(world_size_) + " ranks loaded in " +
                          std::to_string(elapsed) + " ms");
}

void UcxWorker::announce_failure(int failed_rank, const std::string &why, int detector, int skip) {
  if (failed_rank < 0 || failed_rank >= world_size_ || announced_[static_cast<size_t>(failed_rank)]) return;
  announced_[static_cast<size_t>(failed_rank)] = true;
  if (!revocation_) revocation_ = Revocation{failed_rank, detector, why};
  // Kept until the worker is gone: a send still in flight at the bound reads it later.
  RevokeNotice &notice = sent_notices_.emplace_back();
  notice.failed_rank = failed_rank;
  notice.notifier = rank_;
  notice.detector = detector;
  notice.set_why(why);
  const auto deadline = Clock::now() + kAnnounceBound;
  std::vector<void *> sending;
  int started = 0;
  for (int peer = 0; peer < world_size_; ++peer) {
    if (peer == rank_ || peer == failed_rank || peer == skip || failures_.failure(peer)) continue;
    try {
      const ucs_status_ptr_t request = send_revoke_notice(endpoints_.endpoint(peer, deadline), notice);
      if (UCS_PTR_IS_ERR(request)) {
        log(XFFL_LOG_DEBUG, "no revoke notice to rank " + std::to_string(peer) + ": UCX said " +
                                ucx().ucs_status_string(UCS_PTR_STATUS(request)));
        continue;
      }
      ++started;
      if (request) sending.push_back(request);
    } catch (const Error &error) {  // that peer failed too, or is out of reach: the others pass it on
      log(XFFL_LOG_DEBUG, "no revoke notice to rank " + std::to_string(peer) + ": " + error.what());
    }
  }
  // Out of the queues before this rank gives up its endpoints (force-closing one drops what it holds).
  release_abandoned(std::move(sending), deadline);
  log(detector == rank_ ? XFFL_LOG_INFO : XFFL_LOG_DEBUG,
      "rank " + std::to_string(failed_rank) + " failed (" + why + ", seen by rank " + std::to_string(detector) +
          "): revoke notice sent to " + std::to_string(started) + " ranks");
}

const UcxWorker::Revocation *UcxWorker::poll_revocation() {
  while (std::optional<RevokeNotice> notice = take_revoke_notice(ucx_.worker)) {
    const int failed = notice->failed_rank;
    if (failed < 0 || failed >= world_size_) continue;  // not of this job's shape: dropped
    const std::string why = notice->why_text();
    if (failed != rank_)
      failures_.mark_failed(failed, why + "; seen by rank " + std::to_string(notice->detector) +
                                        ", announced by rank " + std::to_string(notice->notifier));
    announce_failure(failed, why, notice->detector, notice->notifier);
  }
  return revocation_ ? &*revocation_ : nullptr;
}

void UcxWorker::reap(std::vector<void *> &requests, Clock::time_point deadline) {
  while (true) {
    requests.erase(std::remove_if(requests.begin(), requests.end(),
                                  [](void *request) {
                                    if (ucx().ucp_request_check_status(request) == UCS_INPROGRESS) return false;
                                    ucx().ucp_request_free(request);
                                    return true;
                                  }),
                   requests.end());
    if (requests.empty() || Clock::now() >= deadline) return;
    progress_or_sleep(deadline);
  }
}

void UcxWorker::reap_and_free(std::vector<void *> requests, Clock::time_point deadline) {
  reap(requests, deadline);
  for (void *request : requests) ucx().ucp_request_free(request);  // released by UCX when it completes
}

void UcxWorker::log(xffl_log_level_t level, const std::string &text) const {
  Logger(settings_.log_level, rank_).write(level, text);
}

}  // namespace xffl::comm::ucx
