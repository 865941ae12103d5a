// The client of the built-in federation server (tools/xffl-federation, federation_server.h): one TCP
// connection, authenticated with the job secret (federation_protocol.h), requests answered one at a
// time. A lost connection fails the call in progress with XFFL_ENETWORK; the next call connects again
// (leases live in the server, not in the connection, so nothing is lost by reconnecting).
#ifndef XFFL_SRC_FEDERATION_XFFL_STORE_H
#define XFFL_SRC_FEDERATION_XFFL_STORE_H

#include <initializer_list>

#include "bootstrap/socket.h"
#include "federation/federation_protocol.h"
#include "federation/membership_store.h"

namespace xffl::federation {

class XfflStore final : public MembershipStore {
 public:
  // Connects (retrying refused connections until the timeout) and authenticates.
  XfflStore(Endpoint endpoint, std::string secret, int timeout_ms);

  const std::string &endpoint() const override { return endpoint_.text; }
  LeaseId grant_lease(int64_t ttl_seconds) override;
  int64_t keep_alive(LeaseId lease) override;
  void revoke(LeaseId lease) override;
  int64_t put(const std::string &key, const std::string &value, LeaseId lease) override;
  std::optional<KeyValue> get(const std::string &key) override;
  CasResult compare_and_swap(const std::string &key, int64_t expected_mod_revision, const std::string &value,
                             LeaseId lease) override;
  void compare_and_swap_unanswered(const std::string &key, int64_t expected_mod_revision,
                                   const std::string &value) override;
  void put_unanswered(const std::string &key, const std::string &value) override;
  Listing list(const std::string &prefix) override;
  std::optional<Listing> wait_for_change(const std::string &prefix, const Listing &since, int timeout_ms) override;
  void set_call_timeout(int timeout_ms) override {
    call_timeout_ms_ = timeout_ms > 0 && timeout_ms < timeout_ms_ ? timeout_ms : timeout_ms_;
  }

 private:
  void connect(bootstrap::net::Clock::time_point deadline);
  // Hello, Challenge, Auth, Welcome on a connected socket: true when joined; false with *last set when
  // the connection closed or timed out (try again); throws for a verdict (EAUTH, not a server).
  bool handshake(int fd, protocol::FrameReader &reader, bootstrap::net::Clock::time_point deadline, std::string *last,
                 bool *timed_out);
  // Sends a request and returns the reply's frame, one of `replies` (a Failure is thrown as its status
  // and message). extra_wait_ms extends the deadline for a request the server may hold (Watch).
  protocol::Frame call(protocol::Type type, std::vector<uint8_t> payload, std::initializer_list<protocol::Type> replies,
                       const std::string &doing, int extra_wait_ms = 0);
  // Sends a request whose reply the next call reads and drops (the *_unanswered requests); nothing
  // without a connection, and a failed send only ends the connection.
  void send_unanswered(protocol::Type type, std::vector<uint8_t> payload);
  [[noreturn]] void lost(const bootstrap::net::IoResult &result, const std::string &doing);
  Listing read_entries(const std::vector<uint8_t> &payload, const std::string &doing);
  int64_t single_i64(const protocol::Frame &frame, const std::string &doing);
  // Runs parse(); a malformed reply (bootstrap::wire::ProtocolError) ends the connection and is
  // reported as XFFL_ENETWORK naming the server and what was awaited.
  template <typename Parse>
  auto parsed(const std::string &doing, Parse parse) -> decltype(parse());

  Endpoint endpoint_;
  std::string secret_;
  int timeout_ms_;       // the connection's
  int call_timeout_ms_;  // each call's: timeout_ms_ unless set_call_timeout said less
  bootstrap::net::Fd fd_;
  protocol::FrameReader reader_;
  int unanswered_ = 0;  // replies of the *_unanswered requests still to read (and drop) on fd_
};

}  // namespace xffl::federation

#endif
