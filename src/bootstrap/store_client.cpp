#include "bootstrap/store_client.h"

#include <sys/socket.h>

#include <algorithm>
#include <random>
#include <thread>

#include "bootstrap/auth.h"
#include "bootstrap/text.h"

namespace xffl::bootstrap {

namespace {

using Clock = net::Clock;
using std::chrono::milliseconds;

constexpr auto kFirstBackoff = milliseconds(10);
constexpr auto kMaxBackoff = milliseconds(1000);
// The server answers a fetch or barrier when its own timer expires; the client waits this much longer
// before it calls the store unresponsive, so the server's precise answer normally wins.
constexpr auto kAnswerGrace = milliseconds(2000);
constexpr size_t kReadChunk = 64 * 1024;

Clock::time_point after(int timeout_ms) { return Clock::now() + milliseconds(std::max(0, timeout_ms)); }

}  // namespace

StoreClient::StoreClient(ClientConfig config)
    : config_(std::move(config)),
      address_(host_port(config_.host, config_.port)),
      who_("rank " + std::to_string(config_.rank)) {
  if (config_.job_id.size() > wire::kMaxJobId)
    fail(XFFL_EINVAL, who_, ": job id of ", config_.job_id.size(), " bytes exceeds the limit of ", wire::kMaxJobId);
  connect_and_join();
}

StoreClient::~StoreClient() = default;

void StoreClient::interrupt() {
  interrupted_ = true;
  if (fd_) ::shutdown(fd_.get(), SHUT_RDWR);
}

void StoreClient::connect_and_join() {
  const Clock::time_point deadline = after(config_.timeout_ms);
  std::minstd_rand jitter(static_cast<unsigned>(config_.rank) * 7919u + 17u);
  auto backoff = kFirstBackoff;
  std::string last_error = "no attempt finished";
  int attempts = 0;
  for (;;) {
    const net::Resolved resolved = net::resolve(config_.host, config_.port, false, deadline);
    if (resolved.kind == net::Resolved::Permanent)
      fail(XFFL_ENETWORK, who_, ": cannot resolve the store's host '", config_.host, "' (", address_,
           "): ", resolved.error);
    if (resolved.kind == net::Resolved::Timeout)
      fail(XFFL_ETIMEOUT, who_, ": could not reach the store at ", address_, ": ",
           net::lookup_timeout_text(config_.host, config_.timeout_ms),
           " (a numeric MASTER_ADDR needs none)");
    if (resolved.kind == net::Resolved::Temporary)
      last_error = "cannot resolve '" + config_.host + "': " + resolved.error;
    for (const net::Address &address : resolved.addresses) {
      ++attempts;
      net::Fd fd;
      net::IoResult result = net::connect_until(address, std::min(deadline, Clock::now() + kMaxBackoff), &fd);
      if (result.kind == net::IoResult::Ok) {
        if (join(std::move(fd))) return;
        last_error = "the store closed the connection during the hello";
        continue;
      }
      last_error = result.kind == net::IoResult::Timeout ? "connect timed out" : net::errno_text(result.error);
      config_.logger.debug("cannot reach the store at ", address.text, " yet: ", last_error);
    }
    if (Clock::now() >= deadline)
      fail(XFFL_ETIMEOUT, who_, ": could not reach the store at ", address_, " within ", config_.timeout_ms,
           " ms after ", attempts, " attempts (last error: ", last_error,
           "); is rank 0 running, and do MASTER_ADDR and MASTER_PORT point at it?");
    // Exponential backoff with jitter, so ranks started together do not knock in lockstep.
    auto pause = backoff / 2 + milliseconds(jitter() % static_cast<unsigned>(backoff.count() / 2 + 1));
    auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now());
    std::this_thread::sleep_for(std::max(milliseconds(0), std::min(pause, left)));
    backoff = std::min(backoff * 2, kMaxBackoff);
  }
}

bool StoreClient::join(net::Fd fd) {
  fd_ = std::move(fd);
  reader_ = wire::FrameReader();
  const Clock::time_point deadline = after(config_.timeout_ms);
  protocol::Hello hello;
  hello.world_size = static_cast<uint32_t>(config_.world_size);
  hello.rank = static_cast<uint32_t>(config_.rank);
  hello.job_id = config_.job_id;
  hello.client_nonce = auth::random_nonce();
  const bool want_auth = !config_.auth_token.empty();
  try {
    send_frame(protocol::encode(hello), deadline, "sending its hello");
    wire::Frame reply = receive_frame(deadline, "waiting for the store's answer to its hello");
    if (reply.type == wire::Type::Challenge) {
      protocol::Challenge challenge = protocol::decode_challenge(reply.payload);
      if (!want_auth)
        fail(XFFL_EAUTH, who_, ": the store at ", address_,
             " requires a shared secret, but XFFL_AUTH_TOKEN is not set for this rank");
      protocol::Auth answer{auth::proof(auth::Side::Client, config_.auth_token, hello.world_size, hello.rank,
                                        hello.job_id, hello.client_nonce, challenge.server_nonce)};
      send_frame(protocol::encode(answer), deadline, "sending its authentication");
      reply = receive_frame(deadline, "waiting for the store to accept its authentication");
      if (reply.type == wire::Type::Welcome) {
        protocol::Welcome welcome = protocol::decode_welcome(reply.payload);
        protocol::Proof expected = auth::proof(auth::Side::Server, config_.auth_token, hello.world_size, hello.rank,
                                               hello.job_id, hello.client_nonce, challenge.server_nonce);
        if (!welcome.authenticated || !auth::proofs_equal(expected, welcome.server_proof))
          fail(XFFL_EAUTH, who_, ": the store at ", address_,
               " did not prove that it knows XFFL_AUTH_TOKEN (another job, or an impostor, on that port)");
        return true;
      }
    } else if (reply.type == wire::Type::Welcome) {
      protocol::Welcome welcome = protocol::decode_welcome(reply.payload);
      if (want_auth || welcome.authenticated)
        fail(XFFL_EAUTH, who_, ": the store at ", address_,
             " does not authenticate, but XFFL_AUTH_TOKEN is set for this rank: refusing to trust it");
      return true;
    }
    if (reply.type == wire::Type::Reject) {
      protocol::Reject reject = protocol::decode_reject(reply.payload);
      fail(reject.status == XFFL_EAUTH ? XFFL_EAUTH : XFFL_EINVAL, who_, ": the store at ", address_,
           " refused it: ", reject.message);
    }
    fail(XFFL_ENETWORK, who_, ": the store at ", address_, " answered its hello with an unexpected ",
         wire::type_name(reply.type), " frame");
  } catch (const wire::ProtocolError &error) {
    fail(XFFL_ENETWORK, who_, ": what answers at ", address_, " does not speak the xffl store protocol (",
         error.what(), ")");
  } catch (const Error &error) {
    // A store that accepted and then closed (over its connection limit, restarting) is worth another try.
    if (error.status() == XFFL_EPEER && !interrupted_) {
      broken_.reset();
      fd_.reset();
      return false;
    }
    throw;
  }
}

void StoreClient::require_usable(const std::string &doing) const {
  if (broken_) throw Error(broken_->status, who_ + ": cannot go on " + doing + ": " + broken_->message);
}

[[noreturn]] void StoreClient::lost(const net::IoResult &result, const std::string &doing) {
  xffl_status_t status = XFFL_ENETWORK;
  std::string why;
  switch (result.kind) {
    case net::IoResult::Closed:
      status = XFFL_EPEER;
      why = interrupted_ ? "the connection was closed by this rank"
                         : "the store (hosted by rank 0) closed the connection; rank 0 may have exited";
      break;
    case net::IoResult::Timeout:
      // The connection is up but nothing answers: its host is alive to the kernel, not to us.
      status = XFFL_ETIMEOUT;
      why = "the store (hosted by rank 0) did not answer in time; rank 0 may be stopped, hung or overloaded";
      break;
    default:
      why = net::errno_text(result.error);
      break;
  }
  break_connection(status, who_ + ": lost the store at " + address_ + " while " + doing + ": " + why);
}

[[noreturn]] void StoreClient::break_connection(xffl_status_t status, const std::string &message) {
  broken_ = Broken{status, message};
  throw Error(status, message);
}

void StoreClient::send_frame(const std::vector<uint8_t> &frame, Clock::time_point deadline, const std::string &doing) {
  net::IoResult result = net::send_all(fd_.get(), frame.data(), frame.size(), deadline);
  if (result.kind != net::IoResult::Ok) lost(result, doing);
  if (config_.tap) config_.tap(true, frame.data(), frame.size());
}

wire::Frame StoreClient::receive_frame(Clock::time_point deadline, const std::string &doing) {
  std::vector<uint8_t> buffer(kReadChunk);
  for (;;) {
    std::optional<wire::Frame> frame = reader_.next();
    if (frame) return std::move(*frame);
    net::IoResult result = net::receive_some(fd_.get(), buffer.data(), buffer.size(), deadline);
    if (result.kind != net::IoResult::Ok) lost(result, doing);
    if (config_.tap) config_.tap(false, buffer.data(), result.bytes);
    reader_.feed(buffer.data(), result.bytes);
  }
}

namespace {

void check_key(const std::string &who, const std::string &key, const char *what) {
  if (key.empty()) fail(XFFL_EINVAL, who, ": an empty ", what, " is not allowed");
  if (key.size() > wire::kMaxKey)
    fail(XFFL_EINVAL, who, ": ", what, " of ", key.size(), " bytes exceeds the limit of ", wire::kMaxKey);
}

}  // namespace

void StoreClient::publish(const std::string &key, const std::vector<uint8_t> &value) {
  const std::string doing = "publishing key '" + key + "'";
  check_key(who_, key, "key");
  if (value.size() > wire::kMaxValue)
    fail(XFFL_EINVAL, who_, ": the value of key '", key, "' has ", value.size(), " bytes, more than the limit of ",
         wire::kMaxValue);
  require_usable(doing);
  const Clock::time_point deadline = after(config_.timeout_ms);
  try {
    send_frame(protocol::encode(protocol::Publish{key, value}), deadline, doing);
    wire::Frame reply = receive_frame(deadline, doing);
    if (reply.type == wire::Type::Ok) return protocol::decode_ok(reply.payload);
    if (reply.type == wire::Type::Failure) {
      protocol::Failure failure = protocol::decode_failure(reply.payload);
      fail(failure.status, who_, ": cannot publish key '", key, "' to the store at ", address_, ": ", failure.message);
    }
    throw wire::ProtocolError(std::string("unexpected ") + wire::type_name(reply.type) + " frame");
  } catch (const wire::ProtocolError &error) {
    break_connection(XFFL_ENETWORK,
                     who_ + ": the store at " + address_ + " broke the protocol while " + doing + " (" + error.what() + ")");
  }
}

std::vector<uint8_t> StoreClient::fetch(const std::string &key, int timeout_ms) {
  const std::string doing = "waiting for key '" + key + "'";
  check_key(who_, key, "key");
  if (timeout_ms < 0) fail(XFFL_EINVAL, who_, ": fetch timeout ", timeout_ms, " ms is negative");
  require_usable(doing);
  const Clock::time_point deadline = after(timeout_ms) + kAnswerGrace;
  try {
    send_frame(protocol::encode(protocol::Fetch{key, static_cast<uint32_t>(timeout_ms)}), deadline, doing);
    wire::Frame reply = receive_frame(deadline, doing);
    if (reply.type == wire::Type::Value) return protocol::decode_value(reply.payload).value;
    if (reply.type == wire::Type::Failure) {
      protocol::Failure failure = protocol::decode_failure(reply.payload);
      if (failure.status == XFFL_ETIMEOUT)
        fail(XFFL_ETIMEOUT, who_, ": timed out after ", timeout_ms, " ms waiting for key '", key, "' from ", address_);
      fail(failure.status, who_, ": fetching key '", key, "' from the store at ", address_, " failed: ",
           failure.message);
    }
    throw wire::ProtocolError(std::string("unexpected ") + wire::type_name(reply.type) + " frame");
  } catch (const wire::ProtocolError &error) {
    break_connection(XFFL_ENETWORK,
                     who_ + ": the store at " + address_ + " broke the protocol while " + doing + " (" + error.what() + ")");
  }
}

void StoreClient::barrier(const std::string &name, const std::string &shown, int timeout_ms) {
  const std::string doing = "waiting at barrier '" + shown + "'";
  check_key(who_, name, "barrier name");
  if (timeout_ms < 0) fail(XFFL_EINVAL, who_, ": barrier timeout ", timeout_ms, " ms is negative");
  require_usable(doing);
  const Clock::time_point deadline = after(timeout_ms) + kAnswerGrace;
  try {
    send_frame(protocol::encode(protocol::Barrier{name, static_cast<uint32_t>(timeout_ms)}), deadline, doing);
    wire::Frame reply = receive_frame(deadline, doing);
    if (reply.type == wire::Type::Ok) return protocol::decode_ok(reply.payload);
    if (reply.type == wire::Type::Failure) {
      protocol::Failure failure = protocol::decode_failure(reply.payload);
      if (failure.status == XFFL_ETIMEOUT)
        fail(XFFL_ETIMEOUT, who_, ": timed out waiting at barrier '", shown, "' of the store at ", address_, " for ",
             ranks_phrase(failure.ranks), " (", config_.world_size - static_cast<int>(failure.ranks.size()), " of ",
             config_.world_size, " arrived; ", failure.message, ")");
      fail(failure.status, who_, ": barrier '", shown, "' of the store at ", address_, " cannot complete: ",
           failure.message);
    }
    throw wire::ProtocolError(std::string("unexpected ") + wire::type_name(reply.type) + " frame");
  } catch (const wire::ProtocolError &error) {
    break_connection(XFFL_ENETWORK,
                     who_ + ": the store at " + address_ + " broke the protocol while " + doing + " (" + error.what() + ")");
  }
}

std::vector<int> StoreClient::departed_ranks(int timeout_ms) {
  const std::string doing = "asking which ranks left the job";
  if (timeout_ms < 0) fail(XFFL_EINVAL, who_, ": timeout ", timeout_ms, " ms for asking which ranks left is negative");
  require_usable(doing);
  const Clock::time_point deadline = after(timeout_ms);
  try {
    send_frame(protocol::encode_departed(), deadline, doing);
    wire::Frame reply = receive_frame(deadline, doing);
    if (reply.type == wire::Type::Ranks) {
      // Bounded by the world size: a store cannot name more ranks, or ranks outside the job.
      protocol::Ranks answer = protocol::decode_ranks(reply.payload, static_cast<size_t>(config_.world_size));
      return std::vector<int>(answer.ranks.begin(), answer.ranks.end());
    }
    if (reply.type == wire::Type::Failure) {
      protocol::Failure failure = protocol::decode_failure(reply.payload);
      fail(failure.status, who_, ": the store at ", address_, " could not say which ranks left: ", failure.message);
    }
    throw wire::ProtocolError(std::string("unexpected ") + wire::type_name(reply.type) + " frame");
  } catch (const wire::ProtocolError &error) {
    break_connection(XFFL_ENETWORK,
                     who_ + ": the store at " + address_ + " broke the protocol while " + doing + " (" + error.what() + ")");
  }
}

protocol::Identity StoreClient::claim_group(const std::vector<uint8_t> &key, uint32_t members, int timeout_ms) {
  const std::string doing = "asking for the identity of a process group of " + std::to_string(members) + " members";
  if (timeout_ms < 0) fail(XFFL_EINVAL, who_, ": timeout ", timeout_ms, " ms is negative");
  require_usable(doing);
  const Clock::time_point deadline = after(timeout_ms);
  try {
    send_frame(protocol::encode(protocol::Claim{key, members}), deadline, doing);
    wire::Frame reply = receive_frame(deadline, doing);
    if (reply.type == wire::Type::Identity) return protocol::decode_identity(reply.payload);
    if (reply.type == wire::Type::Failure) {
      protocol::Failure failure = protocol::decode_failure(reply.payload);
      fail(failure.status, who_, ": the store at ", address_, " gave no identity to a process group of ", members,
           " members: ", failure.message);
    }
    throw wire::ProtocolError(std::string("unexpected ") + wire::type_name(reply.type) + " frame");
  } catch (const wire::ProtocolError &error) {
    break_connection(XFFL_ENETWORK,
                     who_ + ": the store at " + address_ + " broke the protocol while " + doing + " (" + error.what() + ")");
  }
}

bool StoreClient::release_group(uint32_t slot, int timeout_ms) noexcept {
  if (broken_ || !fd_) return false;
  const std::vector<uint8_t> frame = protocol::encode(protocol::Release{slot});
  net::IoResult result = net::send_all(fd_.get(), frame.data(), frame.size(), after(timeout_ms));
  if (result.kind != net::IoResult::Ok) {
    // A partly sent frame would corrupt the next request: the connection is unusable from here on.
    broken_ = Broken{XFFL_ENETWORK, who_ + ": could not tell the store at " + address_ + " that a process group ended"};
    return false;
  }
  if (config_.tap) config_.tap(true, frame.data(), frame.size());
  return true;
}

}  // namespace xffl::bootstrap
