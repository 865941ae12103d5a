// One rank's connection to the store: connect with exponential backoff, hello (and authentication),
// then requests answered one at a time. Every wait is bounded, and every error names the rank, the
// store's address and what was awaited.
#ifndef XFFL_SRC_BOOTSTRAP_STORE_CLIENT_H
#define XFFL_SRC_BOOTSTRAP_STORE_CLIENT_H

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/log.h"
#include "bootstrap/protocol.h"
#include "bootstrap/socket.h"
#include "bootstrap/wire.h"
#include "common/error.h"

namespace xffl::bootstrap {

struct ClientConfig {
  std::string host;
  int port = 0;
  int rank = 0;
  int world_size = 1;
  std::string job_id = "xffl";
  std::string auth_token;
  int timeout_ms = 300000;  // connecting, and every request that has no timeout of its own
  Logger logger;
  wire::Tap tap;
};

class StoreClient {
 public:
  // Connects and joins; throws xffl::Error: XFFL_ETIMEOUT when the store cannot be reached in time,
  // XFFL_EINVAL when it refuses the job (job id, world size, rank), XFFL_EAUTH when authentication
  // fails either way, XFFL_ENETWORK for an unresolvable name or something that is not a store.
  explicit StoreClient(ClientConfig config);
  ~StoreClient();
  StoreClient(const StoreClient &) = delete;
  StoreClient &operator=(const StoreClient &) = delete;

  // Not thread-safe: one request at a time (Store serializes them).
  void publish(const std::string &key, const std::vector<uint8_t> &value);
  std::vector<uint8_t> fetch(const std::string &key, int timeout_ms);
  // name is the wire name (Store adds a generation); shown is the name for messages.
  void barrier(const std::string &name, const std::string &shown, int timeout_ms);
  // The ranks whose connection to the store has closed, ascending; the store answers at once, so
  // timeout_ms bounds only the round trip (past it the connection counts as lost, like any request).
  std::vector<int> departed_ranks(int timeout_ms);
  // A process group's identity (group_registry.h): key is GroupRegistry::key, members its size.
  protocol::Identity claim_group(const std::vector<uint8_t> &key, uint32_t members, int timeout_ms);
  // Sends a Release (never answered); false when it could not be sent within timeout_ms.
  bool release_group(uint32_t slot, int timeout_ms) noexcept;

  // Wakes a blocked request (it fails with XFFL_EPEER) and ends the connection. Thread-safe, may be
  // called while another thread is inside a request.
  void interrupt();
  const std::string &address() const { return address_; }

 private:
  void connect_and_join();
  // false: retry with another connection (it closed early); throws for final verdicts.
  bool join(net::Fd fd);
  void send_frame(const std::vector<uint8_t> &frame, net::Clock::time_point deadline, const std::string &doing);
  wire::Frame receive_frame(net::Clock::time_point deadline, const std::string &doing);
  [[noreturn]] void lost(const net::IoResult &result, const std::string &doing);
  void require_usable(const std::string &doing) const;

  ClientConfig config_;
  std::string address_;  // "host:port" for messages
  std::string who_;      // "rank 3"
  net::Fd fd_;
  wire::FrameReader reader_;
  // Once the connection is lost, every later call fails the same way. Kept as plain values, not an
  // Error, so each throw owns its message (no string shared between the thrower and a destroyer).
  struct Broken {
    xffl_status_t status;
    std::string message;
  };
  std::optional<Broken> broken_;
  [[noreturn]] void break_connection(xffl_status_t status, const std::string &message);
  std::atomic<bool> interrupted_{false};
};

}  // namespace xffl::bootstrap

#endif
