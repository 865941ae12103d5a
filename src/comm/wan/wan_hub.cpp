#include "comm/wan/wan_hub.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "comm/wan/framing.h"
#include "comm/wan/listen_address.h"
#include "common/error.h"

namespace xffl::comm::wan {

namespace net = bootstrap::net;

// The wan handshake's hello (the top of wan_hub.h).
struct Hello {
  int from = 0, to = 0;
  GroupKey group;
  int stream = 0, streams = 0, encryption = 0;
  HandshakeNonce nonce{};
};

namespace {

constexpr uint64_t kHelloMagic = 0x3130304e4157464bULL;  // "KFWAN001"
constexpr size_t kHelloBytes = 8 + 4 + 4 + 8 + 8 + 4 + 4 + 4 + kHandshakeNonceBytes;
constexpr size_t kProofBytes = 32;
constexpr size_t kReplyBytes = 4 + kHandshakeNonceBytes + kProofBytes;
enum ReplyStatus : uint32_t { kAccepted = 0, kNotMe = 1, kOtherSettings = 2 };

using Proof = std::array<uint8_t, kProofBytes>;

std::array<uint8_t, kHelloBytes> encode_hello(const Hello &hello) {
  std::array<uint8_t, kHelloBytes> out{};
  uint8_t *p = out.data();
  put_le(p, kHelloMagic, 8);
  put_le(p + 8, static_cast<uint32_t>(hello.from), 4);
  put_le(p + 12, static_cast<uint32_t>(hello.to), 4);
  put_le(p + 16, hello.group.tag, 8);
  put_le(p + 24, hello.group.serial, 8);
  put_le(p + 32, static_cast<uint32_t>(hello.stream), 4);
  put_le(p + 36, static_cast<uint32_t>(hello.streams), 4);
  put_le(p + 40, static_cast<uint32_t>(hello.encryption), 4);
  std::memcpy(p + 44, hello.nonce.data(), hello.nonce.size());
  return out;
}

bool decode_hello(const uint8_t *p, Hello *hello) {
  if (get_le(p, 8) != kHelloMagic) return false;
  hello->from = static_cast<int>(get_le(p + 8, 4));
  hello->to = static_cast<int>(get_le(p + 12, 4));
  hello->group.tag = get_le(p + 16, 8);
  hello->group.serial = get_le(p + 24, 8);
  hello->stream = static_cast<int>(get_le(p + 32, 4));
  hello->streams = static_cast<int>(get_le(p + 36, 4));
  hello->encryption = static_cast<int>(get_le(p + 40, 4));
  std::memcpy(hello->nonce.data(), p + 44, hello->nonce.size());
  return true;
}

HandshakeNonce random_nonce() {
  HandshakeNonce nonce{};
  if (RAND_bytes(nonce.data(), static_cast<int>(nonce.size())) != 1)
    fail(XFFL_EINTERNAL, "wan: OpenSSL could not produce random bytes for a handshake nonce");
  return nonce;
}

Proof proof(const std::string &secret, const char *label, const uint8_t *hello, const HandshakeNonce &acceptor) {
  std::vector<uint8_t> message(label, label + std::strlen(label));
  message.insert(message.end(), hello, hello + kHelloBytes);
  message.insert(message.end(), acceptor.begin(), acceptor.end());
  Proof out{};
  unsigned int length = 0;
  if (!HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()), message.data(), message.size(), out.data(),
            &length) ||
      length != out.size())
    fail(XFFL_EINTERNAL, "wan: OpenSSL could not compute a handshake proof");
  return out;
}

std::array<uint8_t, kReplyBytes> make_reply(const std::string &secret, uint32_t status, const uint8_t *hello_bytes,
                                            const HandshakeNonce &acceptor_nonce) {
  std::array<uint8_t, kReplyBytes> reply{};
  put_le(reply.data(), status, 4);
  std::memcpy(reply.data() + 4, acceptor_nonce.data(), acceptor_nonce.size());
  const Proof mine = proof(secret, "xffl-wan/1 acceptor", hello_bytes, acceptor_nonce);
  std::memcpy(reply.data() + 4 + kHandshakeNonceBytes, mine.data(), mine.size());
  return reply;
}

bool same(const Proof &a, const uint8_t *b) { return CRYPTO_memcmp(a.data(), b, a.size()) == 0; }

// Reads exactly `size` bytes by the deadline.
net::IoResult read_exact(int fd, uint8_t *data, size_t size, Clock::time_point deadline) {
  size_t done = 0;
  while (done < size) {
    net::IoResult got = net::receive_some(fd, data + done, size - done, deadline);
    if (got.kind != net::IoResult::Ok) return got;
    done += got.bytes;
  }
  return {};
}

// "timed out", "closed the connection", or errno's words.
std::string io_text(const net::IoResult &result) {
  switch (result.kind) {
    case net::IoResult::Ok: return "ok";
    case net::IoResult::Timeout: return "timed out";
    case net::IoResult::Closed: return "closed the connection";
    case net::IoResult::Error: return net::errno_text(result.error);
  }
  return "failed";
}

xffl_status_t io_status(const net::IoResult &result) {
  if (result.kind == net::IoResult::Timeout) return XFFL_ETIMEOUT;
  if (result.kind == net::IoResult::Closed || result.error == ECONNRESET || result.error == ECONNREFUSED ||
      result.error == EPIPE)
    return XFFL_EPEER;
  return XFFL_ENETWORK;
}

RelayJobDigest job_digest(const std::string &job_id) {
  std::array<uint8_t, SHA256_DIGEST_LENGTH> full{};
  SHA256(reinterpret_cast<const unsigned char *>(job_id.data()), job_id.size(), full.data());
  RelayJobDigest out{};
  std::memcpy(out.data(), full.data(), out.size());
  return out;
}

std::string ms_text(int ms) { return std::to_string(ms) + " ms"; }

}  // namespace

// A relayed stream being made: its socket to the relay, where the handshake stands, the bytes of the
// message it awaits (each one of fixed size), and what the handshake keeps for the keys.
struct WanHub::Relayed {
  enum State { kAwaitPair, kAwaitHello, kAwaitReply, kAwaitProof };
  Connection connection;
  RelaySide side = RelaySide::kCaller;
  std::string what;  // the group, for messages
  State state = kAwaitPair;
  std::vector<uint8_t> in;  // of the awaited message
  size_t got = 0;
  std::array<uint8_t, kHelloBytes> hello_bytes{};  // the wan hello (sent by the caller, read by the owner)
  Hello hello;
  HandshakeNonce acceptor_nonce{};
  Clock::time_point deadline;
  void await(State next, size_t bytes) {
    state = next;
    in.assign(bytes, 0);
    got = 0;
  }
};

WanHub::WanHub(const WanSettings &settings, std::shared_ptr<Exchange> exchange)
    : settings_(settings), exchange_(std::move(exchange)) {
  if (!settings_.listens()) {  // no listener: every peer is dialled from here, or met at a relay
    address_ = settings_.relay.empty() ? std::string(kDialOutOnly) : kViaRelay + settings_.relay;
    if (!settings_.publish_lazily) publish_address();
    return;
  }
  std::string host;
  try {
    host = listen_address(settings_.store_host, std::chrono::milliseconds(settings_.timeout_ms));
  } catch (const Error &error) {
    throw Error(error.status(), "rank " + std::to_string(settings_.rank) + ": " + error.what());
  }
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = 0;
  if (::inet_pton(AF_INET, host.c_str(), &address.sin_addr) != 1)
    fail(XFFL_EINTERNAL, "wan: '", host, "' is not an IPv4 address");
  listener_ = net::Fd(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!listener_) fail(XFFL_ENETWORK, "rank ", settings_.rank, ": wan: socket: ", net::errno_text(errno));
  size_buffers(listener_.get());  // accepted streams inherit them (and the window scale they allow)
  if (::bind(listener_.get(), reinterpret_cast<const sockaddr *>(&address), sizeof address) != 0 ||
      ::listen(listener_.get(), 256) != 0)
    fail(XFFL_ENETWORK, "rank ", settings_.rank, ": wan: cannot listen on ", host, ": ", net::errno_text(errno));
  address_ = host + ":" + std::to_string(net::local_port(listener_.get()));
  if (!settings_.publish_lazily) publish_address();
}

WanHub::~WanHub() = default;

void WanHub::publish_address() {
  if (published_) return;
  exchange_->publish("xffl/wan/addr/" + std::to_string(settings_.rank),
                     std::vector<uint8_t>(address_.begin(), address_.end()));
  published_ = true;
}

void WanHub::size_buffers(int fd) const {
  if (settings_.bdp_bytes == 0) return;
  size_t per_stream = settings_.bdp_bytes / static_cast<size_t>(std::max(1, settings_.streams));
  per_stream = std::max(per_stream, kMinSocketBuffer);
  const int bytes = static_cast<int>(std::min<size_t>(per_stream, size_t{1} << 30));
  ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &bytes, sizeof bytes);
  ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof bytes);
}

Route WanHub::route(int peer, const std::string &what, Clock::time_point deadline) {
  const int rank = settings_.rank;
  Route out;
  if (peer < rank && settings_.listens()) return out;  // the lower rank dials: no store request
  const int remaining_ms = static_cast<int>(
      std::max<long long>(1, std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count()));
  const std::vector<uint8_t> published = exchange_->fetch("xffl/wan/addr/" + std::to_string(peer), remaining_ms);
  const std::string entry(published.begin(), published.end());
  const bool peer_dials_out = entry == kDialOutOnly;
  const bool peer_relayed = entry.rfind(kViaRelay, 0) == 0;
  if (!peer_dials_out && !peer_relayed) {  // the peer listens: dial it (a higher rank, or we do not listen)
    out.kind = Route::kDial;
    out.address = entry;
    return out;
  }
  if (settings_.listens()) return out;  // the peer does not listen: it dials this rank
  // Neither listens: they meet at a relay, the peer's when only it has one or when both have one and
  // it is the higher rank (the lower rank calls, as the lower rank dials when both listen).
  const bool mine = !settings_.relay.empty();
  if (!mine && peer_dials_out)
    fail(XFFL_EINVAL, "rank ", rank, ": wan: ", what, ": ranks ", std::min(rank, peer), " and ", std::max(rank, peer),
         " both dial out only (XFFL_WAN_DIAL_OUT=1) and have no relay (XFFL_WAN_RELAY), so neither accepts the "
         "other's connection: one of the two facilities must accept inbound connections from the other, or run "
         "xffl-relay at its gateway and name it in XFFL_WAN_RELAY");
  if (peer_relayed && (!mine || peer > rank)) {
    out.kind = Route::kRelayCaller;
    out.address = entry.substr(std::strlen(kViaRelay));
  } else {
    out.kind = Route::kRelayOwner;
    out.address = settings_.relay;
  }
  return out;
}

net::Fd WanHub::connect_to(const std::string &text, const std::string &where, Clock::time_point deadline) const {
  std::string host, error;
  int port = 0;
  std::vector<net::Address> addresses;
  if (split_host_port(text, false, &host, &port, &error)) {
    const auto started = Clock::now();
    net::Resolved resolved = net::resolve(host, port, false, deadline);
    if (resolved.kind == net::Resolved::Timeout)
      fail(XFFL_ETIMEOUT, where, " at ", text, ": ",
           net::lookup_timeout_text(
               host, std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started).count(),
               "what was left of the call's XFFL_TIMEOUT, " + std::to_string(settings_.timeout_ms) + " ms"));
    addresses = std::move(resolved.addresses);
    error = resolved.error;
  }
  if (addresses.empty()) fail(XFFL_EINVAL, where, ": the address '", text, "' does not resolve: ", error);
  net::Fd fd(::socket(addresses[0].storage.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd) fail(XFFL_ENETWORK, where, ": socket: ", net::errno_text(errno));
  size_buffers(fd.get());
  int on = 1;
  ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
  ::setsockopt(fd.get(), SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on);
  if (::connect(fd.get(), reinterpret_cast<const sockaddr *>(&addresses[0].storage), addresses[0].length) != 0) {
    if (errno != EINPROGRESS)
      fail(errno == ECONNREFUSED ? XFFL_EPEER : XFFL_ENETWORK, where, " at ", text, ": connect: ",
           net::errno_text(errno));
    pollfd waiting{fd.get(), POLLOUT, 0};
    for (;;) {
      poll_wait_hook();
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) fail(XFFL_ETIMEOUT, where, " at ", text, ": connect timed out");
      const int ready = ::poll(&waiting, 1, static_cast<int>(std::min<long long>(left, 1000)));
      if (ready > 0) break;
      if (ready < 0 && errno != EINTR) fail(XFFL_ENETWORK, where, ": poll: ", net::errno_text(errno));
    }
    int so_error = 0;
    socklen_t length = sizeof so_error;
    ::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &so_error, &length);
    if (so_error != 0)
      fail(so_error == ECONNREFUSED ? XFFL_EPEER : XFFL_ENETWORK, where, " at ", text, ": connect: ",
           net::errno_text(so_error));
  }
  return fd;
}

void WanHub::add_ciphers(Connection *connection, const GroupKey &group, int peer, int stream,
                         const HandshakeNonce &dialer, const HandshakeNonce &acceptor) const {
  if (settings_.encryption == XFFL_WAN_ENCRYPTION_NONE) return;
  KeyContext context{group.tag, group.serial, settings_.rank, peer, stream, dialer, acceptor};
  connection->sealer = std::make_unique<FrameCipher>(
      settings_.encryption, derive_key(settings_.encryption, settings_.secret, settings_.job_id, context));
  std::swap(context.sender, context.receiver);
  connection->opener = std::make_unique<FrameCipher>(
      settings_.encryption, derive_key(settings_.encryption, settings_.secret, settings_.job_id, context));
}

Hello WanHub::new_hello(int peer, const GroupKey &group, int stream) const {
  Hello hello;
  hello.from = settings_.rank;
  hello.to = peer;
  hello.group = group;
  hello.stream = stream;
  hello.streams = settings_.streams;
  hello.encryption = settings_.encryption;
  hello.nonce = random_nonce();
  return hello;
}

HandshakeNonce WanHub::check_reply(const uint8_t *reply, const uint8_t *hello_bytes, const std::string &where,
                                   const std::string &text) const {
  const uint32_t status = static_cast<uint32_t>(get_le(reply, 4));
  if (status == kNotMe) fail(XFFL_EINTERNAL, where, ": the process at ", text, " is not that rank");
  if (status == kOtherSettings)
    fail(XFFL_EINVAL, where, ": the peer runs other wan settings (streams ", settings_.streams, ", encryption ",
         encryption_name(settings_.encryption), " here); every rank must give the same");
  HandshakeNonce acceptor_nonce{};
  std::memcpy(acceptor_nonce.data(), reply + 4, acceptor_nonce.size());
  if (!same(proof(settings_.secret, "xffl-wan/1 acceptor", hello_bytes, acceptor_nonce), reply + 4 + kHandshakeNonceBytes))
    fail(XFFL_EAUTH, where, ": the peer's handshake proof is wrong (another XFFL_AUTH_TOKEN?)");
  return acceptor_nonce;
}

uint32_t WanHub::hello_status(const Hello &hello) const {
  if (hello.to != settings_.rank || hello.from < 0 || hello.from >= settings_.world_size) return kNotMe;
  if (hello.streams != settings_.streams || hello.encryption != settings_.encryption || hello.stream < 0 ||
      hello.stream >= hello.streams)
    return kOtherSettings;
  return kAccepted;
}

std::string WanHub::other_settings_text(const Hello &hello) const {
  return "rank " + std::to_string(hello.from) + " runs other wan settings (streams " + std::to_string(hello.streams) +
         ", encryption " + encryption_name(hello.encryption) + "; here streams " + std::to_string(settings_.streams) +
         ", encryption " + encryption_name(settings_.encryption) + ")";
}

std::vector<Connection> WanHub::dial(int peer, const std::string &text, const GroupKey &group, const std::string &what,
                                     Clock::time_point deadline) {
  const int rank = settings_.rank;
  auto where = [&](int stream) {
    return "rank " + std::to_string(rank) + ": wan: " + what + ": stream " + std::to_string(stream) + " of " +
           std::to_string(settings_.streams) + " to rank " + std::to_string(peer);
  };
  std::vector<Connection> out;
  for (int stream = 0; stream < settings_.streams; ++stream) {
    Connection connection;
    connection.fd = connect_to(text, where(stream), deadline);
    const int fd = connection.fd.get();
    const Hello hello = new_hello(peer, group, stream);
    const auto hello_bytes = encode_hello(hello);
    net::IoResult io = net::send_all(fd, hello_bytes.data(), hello_bytes.size(), deadline);
    if (io.kind != net::IoResult::Ok) fail(io_status(io), where(stream), ": sending the hello: ", io_text(io));
    std::array<uint8_t, kReplyBytes> reply{};
    io = read_exact(fd, reply.data(), reply.size(), deadline);
    if (io.kind != net::IoResult::Ok)
      fail(io_status(io), where(stream), ": awaiting the handshake reply: ", io_text(io));
    const HandshakeNonce acceptor_nonce = check_reply(reply.data(), hello_bytes.data(), where(stream), text);
    const Proof mine = proof(settings_.secret, "xffl-wan/1 dialer", hello_bytes.data(), acceptor_nonce);
    io = net::send_all(fd, mine.data(), mine.size(), deadline);
    if (io.kind != net::IoResult::Ok) fail(io_status(io), where(stream), ": sending the proof: ", io_text(io));
    add_ciphers(&connection, group, peer, stream, hello.nonce, acceptor_nonce);
    out.push_back(std::move(connection));
  }
  return out;
}

void WanHub::accept_pending(Clock::time_point deadline) {
  advance();
  if (!listener_) return;  // dial-out or relayed: nothing to accept
  for (;;) {
    net::Fd fd(::accept4(listener_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
    if (!fd) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      return;  // EAGAIN: none left (other errors: the next wait tries again)
    }
    int on = 1;
    ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
    ::setsockopt(fd.get(), SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on);
    accept_one(std::move(fd), deadline);
  }
}

void WanHub::refuse(const GroupKey &group, int peer, xffl_status_t status, std::string why) {
  refused_.emplace(std::make_pair(group, peer), Refusal{status, std::move(why)});  // the first reason stays
}

void WanHub::accept_one(net::Fd fd, Clock::time_point deadline) {
  std::array<uint8_t, kHelloBytes> hello_bytes{};
  // A connection that is not a peer's (a scanner) is dropped; a peer's failure surfaces on its side.
  if (read_exact(fd.get(), hello_bytes.data(), hello_bytes.size(), deadline).kind != net::IoResult::Ok) return;
  Hello hello;
  if (!decode_hello(hello_bytes.data(), &hello)) return;
  const uint32_t status = hello_status(hello);
  const HandshakeNonce acceptor_nonce = random_nonce();
  const auto reply = make_reply(settings_.secret, status, hello_bytes.data(), acceptor_nonce);
  if (net::send_all(fd.get(), reply.data(), reply.size(), deadline).kind != net::IoResult::Ok) return;
  const std::string refused = "refused the connection of rank " + std::to_string(hello.from) + ": ";
  if (status != kAccepted) {
    if (status == kOtherSettings) refuse(hello.group, hello.from, XFFL_EINVAL, refused + other_settings_text(hello));
    return;
  }
  Proof theirs{};
  if (read_exact(fd.get(), theirs.data(), theirs.size(), deadline).kind != net::IoResult::Ok) {
    // A dialer that hangs up here found this rank's proof wrong: the secrets differ.
    refuse(hello.group, hello.from, XFFL_EAUTH,
           refused + "rank " + std::to_string(hello.from) +
               " hung up during the handshake (it refused this rank's proof: another XFFL_AUTH_TOKEN?)");
    return;
  }
  if (!same(proof(settings_.secret, "xffl-wan/1 dialer", hello_bytes.data(), acceptor_nonce), theirs.data())) {
    refuse(hello.group, hello.from, XFFL_EAUTH,
           refused + "the handshake proof of rank " + std::to_string(hello.from) + " is wrong (another XFFL_AUTH_TOKEN?)");
    return;
  }
  Connection connection;
  connection.fd = std::move(fd);
  add_ciphers(&connection, hello.group, hello.from, hello.stream, hello.nonce, acceptor_nonce);
  accepted_[Slot{hello.group, hello.from, hello.stream}] = std::move(connection);
}

void WanHub::start_relayed(int peer, const Route &route, const GroupKey &group, const std::string &what,
                           Clock::time_point deadline) {
  const int rank = settings_.rank;
  const bool caller = route.kind == Route::kRelayCaller;
  RelayHello hello;
  hello.side = caller ? RelaySide::kCaller : RelaySide::kOwner;
  hello.caller = static_cast<uint32_t>(caller ? rank : peer);
  hello.owner = static_cast<uint32_t>(caller ? peer : rank);
  hello.tag = group.tag;
  hello.serial = group.serial;
  hello.streams = static_cast<uint32_t>(settings_.streams);
  hello.job = job_digest(settings_.job_id);
  for (int stream = 0; stream < settings_.streams; ++stream) {
    const std::string where = "rank " + std::to_string(rank) + ": wan: " + what + ": stream " + std::to_string(stream) +
                              " of " + std::to_string(settings_.streams) + " with rank " + std::to_string(peer) +
                              " through the relay";
    auto relayed = std::make_unique<Relayed>();
    relayed->connection.fd = connect_to(route.address, where, deadline);
    relayed->connection.relay = route.address;
    relayed->side = hello.side;
    relayed->what = what;
    relayed->deadline = deadline;
    relayed->await(Relayed::kAwaitPair, kRelayReplyBytes);
    hello.stream = static_cast<uint32_t>(stream);
    const RelayHelloBytes bytes = encode_relay_hello(hello);
    const net::IoResult io = net::send_all(relayed->connection.fd.get(), bytes.data(), bytes.size(), deadline);
    if (io.kind != net::IoResult::Ok)
      fail(io_status(io), where, " at ", route.address, ": sending the pairing hello: ", io_text(io));
    relayed_[Slot{group, peer, stream}] = std::move(relayed);
  }
}

void WanHub::add_relayed_fds(std::vector<pollfd> *fds) const {
  for (const auto &[slot, relayed] : relayed_) fds->push_back({relayed->connection.fd.get(), POLLIN, 0});
}

void WanHub::advance() {
  for (auto it = relayed_.begin(); it != relayed_.end();) it = step(it->first, *it->second) ? std::next(it) : relayed_.erase(it);
}

bool WanHub::step(const Slot &slot, Relayed &r) {
  const auto &[group, peer, stream] = slot;
  const int fd = r.connection.fd.get();
  const std::string where = "stream " + std::to_string(stream) + " of " + std::to_string(settings_.streams) +
                            " with rank " + std::to_string(peer) + " through the relay at " + r.connection.relay;
  try {
    for (;;) {
      // Read what there is of the awaited message, without waiting.
      while (r.got < r.in.size()) {
        const ssize_t n = ::recv(fd, r.in.data() + r.got, r.in.size() - r.got, MSG_DONTWAIT);
        if (n > 0) {
          r.got += static_cast<size_t>(n);
          continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;  // more later
        const std::string how = n == 0 ? "closed the connection" : net::errno_text(errno);
        if (r.state == Relayed::kAwaitPair)
          fail(XFFL_EPEER, r.what, ": ", where, ": the relay ", how, " before pairing it (did xffl-relay stop?)");
        if (r.state == Relayed::kAwaitProof)  // as accept_one: a dialer that hangs up refused this rank's proof
          fail(XFFL_EAUTH, r.what, ": ", where, ": the connection ", how, " during the handshake (rank ", peer,
               " refused this rank's proof: another XFFL_AUTH_TOKEN? or the relay stopped)");
        fail(XFFL_EPEER, r.what, ": ", where, ": the connection ", how, " during the handshake (did rank ", peer,
             " or the relay fail?)");
      }
      const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(settings_.timeout_ms);
      switch (r.state) {
        case Relayed::kAwaitPair: {
          RelayStatus status{};
          uint32_t seconds = 0;
          if (!decode_relay_reply(r.in.data(), &status, &seconds))
            fail(XFFL_ENETWORK, r.what, ": ", where, ": the relay answered the pairing hello with an unknown status ",
                 get_le(r.in.data(), 4), " (not xffl-relay, or another version?)");
          if (status != RelayStatus::kPaired)
            fail(status == RelayStatus::kUnpaired ? XFFL_ETIMEOUT : XFFL_ENETWORK, r.what, ": ", where, ": ",
                 relay_status_text(status),
                 status == RelayStatus::kUnpaired ? " (" + std::to_string(seconds) + " s)" : std::string());
          if (r.side == RelaySide::kOwner) {
            r.await(Relayed::kAwaitHello, kHelloBytes);
            break;
          }
          r.hello = new_hello(peer, group, stream);
          r.hello_bytes = encode_hello(r.hello);
          const net::IoResult io = net::send_all(fd, r.hello_bytes.data(), r.hello_bytes.size(), deadline);
          if (io.kind != net::IoResult::Ok)
            fail(io_status(io), r.what, ": ", where, ": sending the hello: ", io_text(io));
          r.await(Relayed::kAwaitReply, kReplyBytes);
          break;
        }
        case Relayed::kAwaitReply: {  // the caller, as dial()
          const std::string prefix = "rank " + std::to_string(settings_.rank) + ": wan: " + r.what + ": " + where;
          r.acceptor_nonce = check_reply(r.in.data(), r.hello_bytes.data(), prefix, r.connection.relay);
          const Proof mine = proof(settings_.secret, "xffl-wan/1 dialer", r.hello_bytes.data(), r.acceptor_nonce);
          const net::IoResult io = net::send_all(fd, mine.data(), mine.size(), deadline);
          if (io.kind != net::IoResult::Ok) fail(io_status(io), r.what, ": ", where, ": sending the proof: ", io_text(io));
          add_ciphers(&r.connection, group, peer, stream, r.hello.nonce, r.acceptor_nonce);
          accepted_[slot] = std::move(r.connection);
          return false;
        }
        case Relayed::kAwaitHello: {  // the owner, as accept_one
          std::memcpy(r.hello_bytes.data(), r.in.data(), kHelloBytes);
          if (!decode_hello(r.hello_bytes.data(), &r.hello) || r.hello.from != peer || r.hello.stream != stream ||
              r.hello.group.tag != group.tag || r.hello.group.serial != group.serial)
            fail(XFFL_EAUTH, r.what, ": ", where, ": what came through the relay is not rank ", peer,
                 "'s hello for this stream (a relay that pairs wrongly?)");
          const uint32_t status = hello_status(r.hello);
          r.acceptor_nonce = random_nonce();
          const auto reply = make_reply(settings_.secret, status, r.hello_bytes.data(), r.acceptor_nonce);
          const net::IoResult io = net::send_all(fd, reply.data(), reply.size(), deadline);
          if (io.kind != net::IoResult::Ok) fail(io_status(io), r.what, ": ", where, ": sending the reply: ", io_text(io));
          if (status == kNotMe)
            fail(XFFL_EINTERNAL, r.what, ": ", where, ": the hello names rank ", r.hello.to, " of ", settings_.world_size);
          if (status == kOtherSettings) fail(XFFL_EINVAL, r.what, ": ", where, ": ", other_settings_text(r.hello));
          r.await(Relayed::kAwaitProof, kProofBytes);
          break;
        }
        case Relayed::kAwaitProof: {
          if (!same(proof(settings_.secret, "xffl-wan/1 dialer", r.hello_bytes.data(), r.acceptor_nonce), r.in.data()))
            fail(XFFL_EAUTH, r.what, ": ", where, ": the handshake proof of rank ", peer,
                 " is wrong (another XFFL_AUTH_TOKEN?)");
          add_ciphers(&r.connection, group, peer, stream, r.hello.nonce, r.acceptor_nonce);
          accepted_[slot] = std::move(r.connection);
          return false;
        }
      }
    }
  } catch (const Error &error) {
    refuse(group, peer, error.status(), error.what());
    return false;
  }
}

std::string WanHub::relay_awaited(const GroupKey &group, int peer) const {
  for (const auto &[slot, r] : relayed_) {
    if (std::get<1>(slot) != peer || std::get<0>(slot).tag != group.tag || std::get<0>(slot).serial != group.serial) continue;
    const std::string stream = "stream " + std::to_string(std::get<2>(slot)) + " of " + std::to_string(settings_.streams);
    if (r->state == Relayed::kAwaitPair)
      return "the relay at " + r->connection.relay + " did not pair " + stream + " with rank " + std::to_string(peer) +
             "'s connection within " + ms_text(settings_.timeout_ms) + " (does rank " + std::to_string(peer) +
             "'s facility run this group, and reach that relay?)";
    return "rank " + std::to_string(peer) + " did not complete the handshake of " + stream + " through the relay at " +
           r->connection.relay + " within " + ms_text(settings_.timeout_ms);
  }
  return {};
}

std::optional<Connection> WanHub::claim(const GroupKey &group, int peer, int stream) {
  auto refused = refused_.find({group, peer});
  if (refused != refused_.end()) {
    const Refusal why = refused->second;
    refused_.erase(refused);
    fail(why.status, "rank ", settings_.rank, ": wan: ", why.why);
  }
  auto relayed = relayed_.find(Slot{group, peer, stream});
  if (relayed != relayed_.end() && Clock::now() >= relayed->second->deadline) {
    const std::string what = relayed->second->what + ": " + relay_awaited(group, peer);
    relayed_.erase(relayed);
    fail(XFFL_ETIMEOUT, "rank ", settings_.rank, ": wan: ", what);
  }
  auto found = accepted_.find(Slot{group, peer, stream});
  if (found == accepted_.end()) return std::nullopt;
  Connection connection = std::move(found->second);
  accepted_.erase(found);
  return connection;
}

void WanHub::forget(const GroupKey &group) {
  for (auto it = relayed_.begin(); it != relayed_.end();)
    it = std::get<0>(it->first).tag == group.tag && std::get<0>(it->first).serial == group.serial ? relayed_.erase(it)
                                                                                                   : std::next(it);
  for (auto it = accepted_.begin(); it != accepted_.end();)
    it = std::get<0>(it->first).tag == group.tag && std::get<0>(it->first).serial == group.serial ? accepted_.erase(it)
                                                                                                     : std::next(it);
}

}  // namespace xffl::comm::wan
