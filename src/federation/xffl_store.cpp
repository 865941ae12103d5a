#include "federation/xffl_store.h"

#include <algorithm>
#include <thread>

#include "bootstrap/auth.h"
#include "common/error.h"
#include "federation/frame_io.h"

namespace xffl::federation {

namespace net = bootstrap::net;
using bootstrap::wire::PayloadReader;
using bootstrap::wire::PayloadWriter;
using bootstrap::wire::ProtocolError;
using protocol::Type;

namespace {

std::chrono::milliseconds ms(int value) { return std::chrono::milliseconds(value); }

}  // namespace

XfflStore::XfflStore(Endpoint endpoint, std::string secret, int timeout_ms)
    : endpoint_(std::move(endpoint)), secret_(std::move(secret)), timeout_ms_(timeout_ms), call_timeout_ms_(timeout_ms) {
  connect(net::Clock::now() + ms(timeout_ms_));
}

bool XfflStore::handshake(int fd, protocol::FrameReader &reader, net::Clock::time_point deadline, std::string *last,
                          bool *timed_out) {
  const std::string where = "federation server " + endpoint_.text;
  protocol::Nonce client_nonce = bootstrap::auth::random_nonce(), server_nonce{};
  PayloadWriter hello;
  hello.fixed(client_nonce.data(), client_nonce.size());
  protocol::Frame frame;
  net::IoResult io = send_frame(fd, Type::Hello, hello.take(), deadline);
  if (io.kind == net::IoResult::Ok) io = receive_frame(fd, reader, deadline, &frame);
  if (io.kind == net::IoResult::Ok && frame.type == Type::Challenge) {
    PayloadReader in(frame.payload);
    in.fixed(server_nonce.data(), server_nonce.size());
    in.finish();
    protocol::Proof mine = secret_.empty() ? protocol::Proof{}
                                           : protocol::proof(protocol::Side::Client, secret_, client_nonce, server_nonce);
    PayloadWriter auth;
    auth.fixed(mine.data(), mine.size());
    io = send_frame(fd, Type::Auth, auth.take(), deadline);
    if (io.kind == net::IoResult::Ok) io = receive_frame(fd, reader, deadline, &frame);
  } else if (io.kind == net::IoResult::Ok) {
    fail(XFFL_ENETWORK, "the ", where, " answered Hello with ", protocol::type_name(frame.type),
         ", not a Challenge: is it an xffl-federation server?");
  }
  if (io.kind != net::IoResult::Ok) {
    *timed_out = io.kind == net::IoResult::Timeout;
    *last = *timed_out ? "the handshake timed out" : "the connection closed during the handshake";
    return false;
  }
  if (frame.type == Type::Failure) {
    PayloadReader in(frame.payload);
    auto status = static_cast<xffl_status_t>(in.i32());
    std::string message = in.text(protocol::kMaxText, "message");
    fail(status, "the ", where, " refused this client: ", message);
  }
  if (frame.type != Type::Welcome)
    fail(XFFL_ENETWORK, "the ", where, " answered Auth with ", protocol::type_name(frame.type), ", not a Welcome");
  protocol::Proof theirs{};
  PayloadReader in(frame.payload);
  in.fixed(theirs.data(), theirs.size());
  in.finish();
  if (!secret_.empty() &&
      !bootstrap::auth::proofs_equal(
          theirs, protocol::proof(protocol::Side::Server, secret_, client_nonce, server_nonce)))
    fail(XFFL_EAUTH, "the ", where,
         " did not prove it knows the job secret (it has none, or another): refusing to use it");
  return true;
}

void XfflStore::connect(net::Clock::time_point deadline) {
  const Member &member = endpoint_.members.at(0);
  const std::string where = "federation server " + endpoint_.text;
  std::string last = "no attempt";
  bool timed_out = false;
  auto pause = ms(20);
  auto started = net::Clock::now();
  for (;;) {
    const net::Resolved resolved = net::resolve(member.host, member.port, false, deadline);
    if (resolved.kind == net::Resolved::Permanent)
      fail(XFFL_ENETWORK, "cannot reach the ", where, ": cannot resolve '", member.host, "': ", resolved.error);
    if (resolved.kind == net::Resolved::Timeout)
      fail(XFFL_ETIMEOUT, "cannot reach the ", where, ": ", net::lookup_timeout_text(member.host, call_timeout_ms_));
    if (resolved.kind == net::Resolved::Temporary) last = "cannot resolve '" + member.host + "': " + resolved.error;
    for (const net::Address &address : resolved.addresses) {
      net::Fd fd;
      net::IoResult connected = net::connect_until(address, deadline, &fd);
      if (connected.kind != net::IoResult::Ok) {
        timed_out = connected.kind == net::IoResult::Timeout;
        last = timed_out ? "connecting timed out" : net::errno_text(connected.error);
        continue;
      }
      // The handshake: Hello, Challenge, Auth, Welcome (federation_protocol.h). Something else on the
      // port (an etcd, a rendezvous store) shows as a malformed frame.
      protocol::FrameReader reader;
      bool joined = false;
      try {
        joined = handshake(fd.get(), reader, deadline, &last, &timed_out);
      } catch (const ProtocolError &error) {
        fail(XFFL_ENETWORK, "the ", where, " does not speak the federation protocol (", error.what(),
             "): is it an xffl-federation server?");
      }
      if (!joined) continue;
      fd_ = std::move(fd);
      reader_ = std::move(reader);
      return;
    }
    auto now = net::Clock::now();
    if (now >= deadline) {
      auto tried = std::chrono::duration_cast<std::chrono::milliseconds>(now - started).count();
      fail(timed_out ? XFFL_ETIMEOUT : XFFL_ENETWORK, "cannot reach the ", where, " (tried for ", tried,
           " ms, timeout ", call_timeout_ms_, " ms): ", last);
    }
    std::this_thread::sleep_for(std::min<net::Clock::duration>(pause, deadline - now));
    pause = std::min(pause * 2, ms(1000));
  }
}

void XfflStore::lost(const net::IoResult &result, const std::string &doing) {
  fd_.reset();
  unanswered_ = 0;
  reader_ = protocol::FrameReader{};
  if (result.kind == net::IoResult::Timeout)
    fail(XFFL_ETIMEOUT, "the federation server ", endpoint_.text, " did not answer ", doing, " within ",
         call_timeout_ms_, " ms");
  fail(XFFL_ENETWORK, "lost the connection to the federation server ", endpoint_.text, " while ", doing, ": ",
       result.kind == net::IoResult::Closed ? std::string("it closed") : net::errno_text(result.error));
}

protocol::Frame XfflStore::call(Type type, std::vector<uint8_t> payload, std::initializer_list<Type> replies,
                                const std::string &doing, int extra_wait_ms) {
  auto deadline = net::Clock::now() + ms(call_timeout_ms_);
  if (!fd_) {
    unanswered_ = 0;
    connect(deadline);
  }
  deadline += ms(extra_wait_ms);
  net::IoResult io = send_frame(fd_.get(), type, payload, deadline);
  if (io.kind != net::IoResult::Ok) lost(io, doing);
  protocol::Frame frame;
  try {
    // The answers of earlier compare_and_swap_unanswered come first (the server answers in order).
    for (; unanswered_ > 0; --unanswered_) {
      io = receive_frame(fd_.get(), reader_, deadline, &frame);
      if (io.kind != net::IoResult::Ok) lost(io, doing);
    }
    io = receive_frame(fd_.get(), reader_, deadline, &frame);
  } catch (const ProtocolError &error) {
    fd_.reset();
    reader_ = protocol::FrameReader{};
    fail(XFFL_ENETWORK, "the federation server ", endpoint_.text, " sent a malformed reply to ", doing, ": ",
         error.what());
  }
  if (io.kind != net::IoResult::Ok) lost(io, doing);
  if (frame.type == Type::Failure) {
    auto [status, message] = parsed(doing, [&] {
      PayloadReader in(frame.payload);
      auto code = static_cast<xffl_status_t>(in.i32());
      std::string words = in.text(protocol::kMaxText, "message");
      in.finish();
      return std::make_pair(code, words);
    });
    fail(status, "the federation server ", endpoint_.text, " failed ", doing, ": ", message);
  }
  if (std::find(replies.begin(), replies.end(), frame.type) == replies.end()) {
    fd_.reset();
    reader_ = protocol::FrameReader{};
    fail(XFFL_ENETWORK, "the federation server ", endpoint_.text, " answered ", doing, " with ",
         protocol::type_name(frame.type), ", expected ", protocol::type_name(*replies.begin()));
  }
  return frame;
}

template <typename Parse>
auto XfflStore::parsed(const std::string &doing, Parse parse) -> decltype(parse()) {
  try {
    return parse();
  } catch (const ProtocolError &error) {
    fd_.reset();
    reader_ = protocol::FrameReader{};
    fail(XFFL_ENETWORK, "the federation server ", endpoint_.text, " sent a malformed reply to ", doing, ": ",
         error.what());
  }
}

int64_t XfflStore::single_i64(const protocol::Frame &frame, const std::string &doing) {
  return parsed(doing, [&] {
    PayloadReader in(frame.payload);
    int64_t value = protocol::get_i64(in);
    in.finish();
    return value;
  });
}

LeaseId XfflStore::grant_lease(int64_t ttl_seconds) {
  check_ttl(endpoint_.text, ttl_seconds);
  PayloadWriter out;
  protocol::put_i64(out, ttl_seconds);
  const std::string doing = "granting a lease of " + std::to_string(ttl_seconds) + " s";
  return single_i64(call(Type::Grant, out.take(), {Type::Lease}, doing), doing);
}

int64_t XfflStore::keep_alive(LeaseId lease) {
  PayloadWriter out;
  protocol::put_i64(out, lease);
  const std::string doing = "keeping lease " + std::to_string(lease) + " alive";
  return single_i64(call(Type::KeepAlive, out.take(), {Type::Ttl}, doing), doing);
}

void XfflStore::revoke(LeaseId lease) {
  PayloadWriter out;
  protocol::put_i64(out, lease);
  call(Type::Revoke, out.take(), {Type::Revision}, "revoking lease " + std::to_string(lease));
}

int64_t XfflStore::put(const std::string &key, const std::string &value, LeaseId lease) {
  check_key(endpoint_.text, key);
  check_value(endpoint_.text, key, value);
  PayloadWriter out;
  out.text(key);
  out.text(value);
  protocol::put_i64(out, lease);
  return single_i64(call(Type::Put, out.take(), {Type::Revision}, "putting " + key), "putting " + key);
}

std::optional<KeyValue> XfflStore::get(const std::string &key) {
  check_key(endpoint_.text, key);
  PayloadWriter out;
  out.text(key);
  protocol::Frame frame = call(Type::Get, out.take(), {Type::Entry}, "getting " + key);
  return parsed("getting " + key, [&] {
    PayloadReader in(frame.payload);
    std::optional<KeyValue> entry;
    if (in.u8()) entry = protocol::get_entry(in);
    in.finish();
    return entry;
  });
}

CasResult XfflStore::compare_and_swap(const std::string &key, int64_t expected_mod_revision, const std::string &value,
                                      LeaseId lease) {
  check_key(endpoint_.text, key);
  check_value(endpoint_.text, key, value);
  PayloadWriter out;
  out.text(key);
  protocol::put_i64(out, expected_mod_revision);
  out.text(value);
  protocol::put_i64(out, lease);
  const std::string doing = "swapping " + key + " at revision " + std::to_string(expected_mod_revision);
  protocol::Frame frame = call(Type::Cas, out.take(), {Type::Swapped}, doing);
  return parsed(doing, [&] {
    PayloadReader in(frame.payload);
    CasResult result;
    result.succeeded = in.u8() != 0;
    result.revision = protocol::get_i64(in);
    if (in.u8()) result.current = protocol::get_entry(in);
    in.finish();
    return result;
  });
}

void XfflStore::compare_and_swap_unanswered(const std::string &key, int64_t expected_mod_revision,
                                            const std::string &value) {
  check_key(endpoint_.text, key);
  check_value(endpoint_.text, key, value);
  PayloadWriter out;
  out.text(key);
  protocol::put_i64(out, expected_mod_revision);
  out.text(value);
  protocol::put_i64(out, 0);
  send_unanswered(Type::Cas, out.take());
}

void XfflStore::put_unanswered(const std::string &key, const std::string &value) {
  check_key(endpoint_.text, key);
  check_value(endpoint_.text, key, value);
  PayloadWriter out;
  out.text(key);
  out.text(value);
  protocol::put_i64(out, 0);
  send_unanswered(Type::Put, out.take());
}

void XfflStore::send_unanswered(Type type, std::vector<uint8_t> payload) {
  if (!fd_) return;  // no connection to send it on now: the caller's later requests do without it
  // Bounded by the call timeout: a full send buffer (a store that reads nothing) must not hold us.
  net::IoResult io = send_frame(fd_.get(), type, payload, net::Clock::now() + ms(call_timeout_ms_));
  if (io.kind != net::IoResult::Ok) {
    fd_.reset();
    reader_ = protocol::FrameReader{};
    unanswered_ = 0;
    return;
  }
  ++unanswered_;
}

Listing XfflStore::read_entries(const std::vector<uint8_t> &payload, const std::string &doing) {
  return parsed(doing, [&] {
  PayloadReader in(payload);
  Listing listing;
  listing.revision = protocol::get_i64(in);
  uint32_t count = in.u32();
  if (count > protocol::kMaxListed)
    fail(XFFL_ENETWORK, "the federation server ", endpoint_.text, " listed ", count, " entries, more than ",
         protocol::kMaxListed);
  for (uint32_t i = 0; i < count; ++i) listing.entries.push_back(protocol::get_entry(in));
  in.finish();
  return listing;
  });
}

Listing XfflStore::list(const std::string &prefix) {
  PayloadWriter out;
  out.text(prefix);
  const std::string doing = "listing prefix '" + prefix + "'";
  return read_entries(call(Type::List, out.take(), {Type::Entries}, doing).payload, doing);
}

std::optional<Listing> XfflStore::wait_for_change(const std::string &prefix, const Listing &since, int timeout_ms) {
  int wait_ms = std::max(0, std::min(timeout_ms, timeout_ms_));
  PayloadWriter out;
  out.text(prefix);
  protocol::put_i64(out, since.revision);
  out.u32(static_cast<uint32_t>(wait_ms));
  const std::string doing = "waiting up to " + std::to_string(wait_ms) + " ms for a change under '" + prefix + "'";
  protocol::Frame frame = call(Type::Watch, out.take(), {Type::Entries, Type::Unchanged}, doing, wait_ms);
  if (frame.type == Type::Unchanged) return std::nullopt;
  return read_entries(frame.payload, doing);
}

}  // namespace xffl::federation
