#include "comm/wan/wan_hub.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
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

namespace {

constexpr uint64_t kHelloMagic = 0x3130304e4157464bULL;  // "KFWAN001"
constexpr size_t kHelloBytes = 8 + 4 + 4 + 8 + 8 + 4 + 4 + 4 + kHandshakeNonceBytes;
constexpr size_t kProofBytes = 32;
constexpr size_t kReplyBytes = 4 + kHandshakeNonceBytes + kProofBytes;
enum ReplyStatus : uint32_t { kAccepted = 0, kNotMe = 1, kOtherSettings = 2 };

using Proof = std::array<uint8_t, kProofBytes>;

struct Hello {
  int from = 0, to = 0;
  GroupKey group;
  int stream = 0, streams = 0, encryption = 0;
  HandshakeNonce nonce{};
};

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

}  // namespace

WanHub::WanHub(const WanSettings &settings, std::shared_ptr<Exchange> exchange)
    : settings_(settings), exchange_(std::move(exchange)) {
  if (settings_.dial_out) {  // no listener: every peer is dialled from here
    address_ = kDialOutOnly;
    if (!settings_.publish_lazily) publish_address();
    return;
  }
  const std::string host = listen_address(settings_.store_host);
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

std::optional<std::string> WanHub::dial_address(int peer, const std::string &what, Clock::time_point deadline) {
  const int rank = settings_.rank;
  if (peer < rank && !settings_.dial_out) return std::nullopt;  // the lower rank dials: no store request
  const int remaining_ms = static_cast<int>(
      std::max<long long>(1, std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count()));
  const std::vector<uint8_t> published = exchange_->fetch("xffl/wan/addr/" + std::to_string(peer), remaining_ms);
  std::string entry(published.begin(), published.end());
  if (entry != kDialOutOnly) return entry;
  if (settings_.dial_out)
    fail(XFFL_EINVAL, "rank ", rank, ": wan: ", what, ": ranks ", std::min(rank, peer), " and ", std::max(rank, peer),
         " both dial out only (XFFL_WAN_DIAL_OUT=1), so neither accepts the other's connection: one of the two "
         "facilities must accept inbound connections from the other");
  return std::nullopt;  // the peer dials out only: it dials this rank
}

std::vector<Connection> WanHub::dial(int peer, const std::string &text, const GroupKey &group, const std::string &what,
                                     Clock::time_point deadline) {
  const int rank = settings_.rank;
  auto where = [&](int stream) {
    return "rank " + std::to_string(rank) + ": wan: " + what + ": stream " + std::to_string(stream) + " of " +
           std::to_string(settings_.streams) + " to rank " + std::to_string(peer);
  };
  const size_t colon = text.rfind(':');
  std::string error;
  bool permanent = false;
  std::vector<net::Address> addresses;
  if (colon != std::string::npos)
    addresses = net::resolve(text.substr(0, colon), std::atoi(text.c_str() + colon + 1), false, &error, &permanent);
  if (addresses.empty()) fail(XFFL_EINTERNAL, where(0), ": published address '", text, "' does not resolve: ", error);

  std::vector<Connection> out;
  for (int stream = 0; stream < settings_.streams; ++stream) {
    Connection connection;
    connection.fd = net::Fd(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!connection.fd) fail(XFFL_ENETWORK, where(stream), ": socket: ", net::errno_text(errno));
    const int fd = connection.fd.get();
    size_buffers(fd);
    int on = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
    ::setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on);
    if (::connect(fd, reinterpret_cast<const sockaddr *>(&addresses[0].storage), addresses[0].length) != 0) {
      if (errno != EINPROGRESS)
        fail(errno == ECONNREFUSED ? XFFL_EPEER : XFFL_ENETWORK, where(stream), " at ", text, ": connect: ",
             net::errno_text(errno));
      pollfd waiting{fd, POLLOUT, 0};
      for (;;) {
        poll_wait_hook();
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
        if (left <= 0) fail(XFFL_ETIMEOUT, where(stream), " at ", text, ": connect timed out");
        const int ready = ::poll(&waiting, 1, static_cast<int>(std::min<long long>(left, 1000)));
        if (ready > 0) break;
        if (ready < 0 && errno != EINTR) fail(XFFL_ENETWORK, where(stream), ": poll: ", net::errno_text(errno));
      }
      int so_error = 0;
      socklen_t length = sizeof so_error;
      ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &so_error, &length);
      if (so_error != 0)
        fail(so_error == ECONNREFUSED ? XFFL_EPEER : XFFL_ENETWORK, where(stream), " at ", text, ": connect: ",
             net::errno_text(so_error));
    }
    Hello hello;
    hello.from = rank;
    hello.to = peer;
    hello.group = group;
    hello.stream = stream;
    hello.streams = settings_.streams;
    hello.encryption = settings_.encryption;
    hello.nonce = random_nonce();
    const auto hello_bytes = encode_hello(hello);
    net::IoResult io = net::send_all(fd, hello_bytes.data(), hello_bytes.size(), deadline);
    if (io.kind != net::IoResult::Ok) fail(io_status(io), where(stream), ": sending the hello: ", io_text(io));
    std::array<uint8_t, kReplyBytes> reply{};
    io = read_exact(fd, reply.data(), reply.size(), deadline);
    if (io.kind != net::IoResult::Ok)
      fail(io_status(io), where(stream), ": awaiting the handshake reply: ", io_text(io));
    const uint32_t status = static_cast<uint32_t>(get_le(reply.data(), 4));
    if (status == kNotMe) fail(XFFL_EINTERNAL, where(stream), ": the process at ", text, " is not that rank");
    if (status == kOtherSettings)
      fail(XFFL_EINVAL, where(stream), ": the peer runs other wan settings (streams ", settings_.streams,
           ", encryption ", encryption_name(settings_.encryption), " here); every rank must give the same");
    HandshakeNonce acceptor_nonce{};
    std::memcpy(acceptor_nonce.data(), reply.data() + 4, acceptor_nonce.size());
    if (!same(proof(settings_.secret, "xffl-wan/1 acceptor", hello_bytes.data(), acceptor_nonce),
              reply.data() + 4 + kHandshakeNonceBytes))
      fail(XFFL_EAUTH, where(stream), ": the peer's handshake proof is wrong (another XFFL_AUTH_TOKEN?)");
    const Proof mine = proof(settings_.secret, "xffl-wan/1 dialer", hello_bytes.data(), acceptor_nonce);
    io = net::send_all(fd, mine.data(), mine.size(), deadline);
    if (io.kind != net::IoResult::Ok) fail(io_status(io), where(stream), ": sending the proof: ", io_text(io));
    if (settings_.encryption != XFFL_WAN_ENCRYPTION_NONE) {
      KeyContext context{group.tag, group.serial, rank, peer, stream, hello.nonce, acceptor_nonce};
      connection.sealer = std::make_unique<FrameCipher>(
          settings_.encryption, derive_key(settings_.encryption, settings_.secret, settings_.job_id, context));
      std::swap(context.sender, context.receiver);
      connection.opener = std::make_unique<FrameCipher>(
          settings_.encryption, derive_key(settings_.encryption, settings_.secret, settings_.job_id, context));
    }
    out.push_back(std::move(connection));
  }
  return out;
}

void WanHub::accept_pending(Clock::time_point deadline) {
  if (!listener_) return;  // dial-out: nothing to accept
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

void WanHub::accept_one(net::Fd fd, Clock::time_point deadline) {
  std::array<uint8_t, kHelloBytes> hello_bytes{};
  // A connection that is not a peer's (a scanner) is dropped; a peer's failure surfaces on its side.
  if (read_exact(fd.get(), hello_bytes.data(), hello_bytes.size(), deadline).kind != net::IoResult::Ok) return;
  Hello hello;
  if (!decode_hello(hello_bytes.data(), &hello)) return;
  std::array<uint8_t, kReplyBytes> reply{};
  uint32_t status = kAccepted;
  if (hello.to != settings_.rank || hello.from < 0 || hello.from >= settings_.world_size)
    status = kNotMe;
  else if (hello.streams != settings_.streams || hello.encryption != settings_.encryption || hello.stream < 0 ||
           hello.stream >= hello.streams)
    status = kOtherSettings;
  const HandshakeNonce acceptor_nonce = random_nonce();
  put_le(reply.data(), status, 4);
  std::memcpy(reply.data() + 4, acceptor_nonce.data(), acceptor_nonce.size());
  const Proof mine = proof(settings_.secret, "xffl-wan/1 acceptor", hello_bytes.data(), acceptor_nonce);
  std::memcpy(reply.data() + 4 + kHandshakeNonceBytes, mine.data(), mine.size());
  if (net::send_all(fd.get(), reply.data(), reply.size(), deadline).kind != net::IoResult::Ok) return;
  const std::pair<GroupKey, int> who{hello.group, hello.from};
  if (status != kAccepted) {
    if (status == kOtherSettings)
      refused_[who] = "rank " + std::to_string(hello.from) + " runs other wan settings (streams " +
                      std::to_string(hello.streams) + ", encryption " + encryption_name(hello.encryption) +
                      "; here streams " + std::to_string(settings_.streams) + ", encryption " +
                      encryption_name(settings_.encryption) + ")";
    return;
  }
  Proof theirs{};
  if (read_exact(fd.get(), theirs.data(), theirs.size(), deadline).kind != net::IoResult::Ok) {
    // A dialer that hangs up here found this rank's proof wrong: the secrets differ.
    refused_[who] = "rank " + std::to_string(hello.from) +
                    " hung up during the handshake (it refused this rank's proof: another XFFL_AUTH_TOKEN?)";
    return;
  }
  if (!same(proof(settings_.secret, "xffl-wan/1 dialer", hello_bytes.data(), acceptor_nonce), theirs.data())) {
    refused_[who] = "the handshake proof of rank " + std::to_string(hello.from) +
                    " is wrong (another XFFL_AUTH_TOKEN?)";
    return;
  }
  Connection connection;
  connection.fd = std::move(fd);
  if (settings_.encryption != XFFL_WAN_ENCRYPTION_NONE) {
    KeyContext context{hello.group.tag, hello.group.serial, settings_.rank, hello.from, hello.stream,
                       hello.nonce, acceptor_nonce};
    connection.sealer = std::make_unique<FrameCipher>(
        settings_.encryption, derive_key(settings_.encryption, settings_.secret, settings_.job_id, context));
    std::swap(context.sender, context.receiver);
    connection.opener = std::make_unique<FrameCipher>(
        settings_.encryption, derive_key(settings_.encryption, settings_.secret, settings_.job_id, context));
  }
  accepted_[Slot{hello.group, hello.from, hello.stream}] = std::move(connection);
}

std::optional<Connection> WanHub::claim(const GroupKey &group, int peer, int stream) {
  auto refused = refused_.find({group, peer});
  if (refused != refused_.end()) {
    const std::string why = refused->second;
    refused_.erase(refused);
    fail(why.find("settings") != std::string::npos ? XFFL_EINVAL : XFFL_EAUTH, "rank ", settings_.rank,
         ": wan: refused the connection of rank ", peer, ": ", why);
  }
  auto found = accepted_.find(Slot{group, peer, stream});
  if (found == accepted_.end()) return std::nullopt;
  Connection connection = std::move(found->second);
  accepted_.erase(found);
  return connection;
}

void WanHub::forget(const GroupKey &group) {
  for (auto it = accepted_.begin(); it != accepted_.end();)
    it = std::get<0>(it->first).tag == group.tag && std::get<0>(it->first).serial == group.serial ? accepted_.erase(it)
                                                                                                     : std::next(it);
}

}  // namespace xffl::comm::wan
