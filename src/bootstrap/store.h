// xffl::bootstrap::Store: the job's rendezvous store (DESIGN.md section 4), the comm::Exchange that
// backends use to swap UCX worker addresses and NCCL ids during bring-up.
//
// Rank 0's Store runs the server (a poll loop thread, see store_server.h) at master_addr:master_port,
// bound to the address master_addr resolves to (or bind_addr), and, like every other rank, connects to
// it as a client. Non-zero ranks retry the connection with exponential backoff until timeout_ms, so
// the ranks may start in any order. The hello checks the job: world size and job id must equal the
// store's, and each rank may join once; with a non-empty auth_token both sides prove they hold it
// (HMAC-SHA256 challenge-response, auth.h) without sending it.
//
// Usage (every rank, same config but its own rank):
//   bootstrap::StoreConfig config;
//   config.master_addr = "10.0.0.1"; config.master_port = 29500;
//   config.rank = rank; config.world_size = world; config.job_id = job; config.auth_token = token;
//   config.timeout_ms = options.timeout_ms;
//   bootstrap::Store store(config);                       // rendezvous: throws xffl::Error
//   store.publish("ucx/addr/" + std::to_string(rank), my_address);
//   auto peer = store.fetch("ucx/addr/7", config.timeout_ms);
//   store.barrier("bring-up");
//
// Errors are xffl::Error with the status the C API returns and a message naming the rank, the store's
// address and what was awaited, e.g.
//   "rank 3: timed out after 5000 ms waiting for key 'ucx/addr/7' from 127.0.0.1:29500".
//   XFFL_ETIMEOUT  a bounded wait expired (connecting, a fetch, a barrier: the missing ranks are named;
//                  a store that accepts but never answers, its host stopped or hung: rank 0 is named)
//   XFFL_EINVAL    the store refused the job ("job id 'a' differs from the store's 'b'", "world size 4
//                  differs from the store's 8", a rank joining twice) or an argument is out of bounds
//                  (keys 1 KiB, values 1 MiB), or a key is re-published with different bytes
//   XFFL_EAUTH     the tokens differ (or only one side has one)
//   XFFL_EPEER     the store's host closed the connection (rank 0 exited), or a barrier cannot complete
//                  because a rank left the store
//   XFFL_ENETWORK  the network failed, or what answers is not a store
//
// Thread-safety: every method may be called from any thread; requests of one Store are serialized.
// close() (and the destructor) may be called while another thread waits in a request, which then
// fails promptly with XFFL_EPEER.
#ifndef XFFL_SRC_BOOTSTRAP_STORE_H
#define XFFL_SRC_BOOTSTRAP_STORE_H

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/log.h"
#include "bootstrap/wire.h"
#include "comm/exchange.h"

namespace xffl::bootstrap {

class StoreClient;
class StoreServer;

struct StoreConfig {
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;  // rank 0 may pass 0 to let the kernel choose; see Store::port()
  int rank = 0;
  int world_size = 1;
  std::string job_id = "xffl";  // at most 256 bytes
  std::string auth_token;       // empty: no authentication
  int timeout_ms = 300000;      // connecting, publishing, barrier() without a timeout

  // Rank 0 only. Address the server binds; empty means master_addr (resolved). "0.0.0.0" or "::"
  // serve every interface, for hosts whose master_addr is not one of their own addresses (NAT).
  std::string bind_addr;
  // Rank 0 only. A connection must finish its hello (and authentication) within this time.
  int hello_timeout_ms = 10000;
  // Rank 0 only. close() keeps serving this long while other ranks are still connected, so a rank 0
  // that finishes first does not cut off slower ranks. The destructor never waits longer than this.
  int close_linger_ms = 1000;

  Logger logger;
  // Tests: observes every byte this rank's client sends and receives.
  wire::Tap client_tap;
  // Tests: observes every byte rank 0's server sends and receives.
  wire::Tap server_tap;
};

class Store final : public comm::Exchange {
 public:
  // Rank 0 starts the server; then every rank connects and joins (bounded by timeout_ms).
  // Throws xffl::Error (see the header comment); XFFL_EINVAL for a config out of range.
  explicit Store(StoreConfig config);
  // close(): bounded by close_linger_ms plus a short shutdown, never by the peers.
  ~Store() override;
  Store(const Store &) = delete;
  Store &operator=(const Store &) = delete;

  // Write-once: publishing a key again with the same bytes is a no-op, with other bytes XFFL_EINVAL.
  // Keys: 1 to 1024 bytes; values: up to 1 MiB.
  void publish(const std::string &key, const std::vector<uint8_t> &value) override;
  // Waits until the key is published, at most timeout_ms (the server waits; the client does not poll).
  std::vector<uint8_t> fetch(const std::string &key, int timeout_ms) override;
  // Returns once every rank of the job has called barrier(name) for the same time (the n-th call of a
  // name on one rank meets the n-th call on the others). XFFL_ETIMEOUT names the ranks that did not
  // arrive; XFFL_EPEER names a rank that left the store before arriving.
  void barrier(const std::string &name);
  void barrier(const std::string &name, int timeout_ms);
  // The ranks that joined the store and whose connection has closed (they left the job, whichever
  // host or pid namespace they ran in), ascending. The store answers at once; timeout_ms bounds the
  // round trip. XFFL_EPEER / XFFL_ENETWORK naming the store when it is gone.
  std::vector<int> departed_ranks(int timeout_ms) override;
  // Process-group identities (comm/exchange.h, group_registry.h). claim_group waits at most
  // timeout_ms; release_group never blocks: when another request holds the connection it gives up
  // (the slot stays live).
  comm::GroupIdentity claim_group(const std::vector<int> &sorted_members, uint32_t creation, int timeout_ms) override;
  void release_group(uint32_t slot) noexcept override;

  // Ends this rank's connection; on rank 0 then lingers (close_linger_ms at most) while other ranks
  // are connected, and stops the server. Idempotent. Later requests fail with XFFL_ESTATE.
  void close();

  int rank() const { return config_.rank; }
  int world_size() const { return config_.world_size; }
  // The store's port: on rank 0 the bound one (useful with master_port 0), elsewhere the configured.
  int port() const { return port_; }
  // "host:port" as used in messages.
  const std::string &address() const { return address_; }
  // The store's host as this rank reached it: master_addr, or the one PMIx supplied (pmix_store.h).
  const std::string &host() const { return config_.master_addr; }
  // Rank 0: the server (tests look at its rejections and drops); nullptr on other ranks or after close.
  StoreServer *server() { return server_.get(); }

 private:
  StoreClient &client(const char *operation);

  StoreConfig config_;
  int port_ = 0;
  std::string address_;
  std::unique_ptr<StoreServer> server_;
  std::unique_ptr<StoreClient> client_;
  std::mutex request_mutex_;                    // one request at a time on the connection
  std::mutex close_mutex_;                      // close() against close()
  std::map<std::string, uint64_t> barrier_generation_;  // guarded by request_mutex_
  bool closed_ = false;
};

}  // namespace xffl::bootstrap

#endif
