#include "federation/federation_server.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>

#include "bootstrap/auth.h"
#include "bootstrap/text.h"
#include "common/error.h"
#include "federation/federation_requests.h"
#include "federation/frame_io.h"

namespace xffl::federation {

namespace net = bootstrap::net;
using bootstrap::wire::PayloadReader;
using bootstrap::wire::PayloadWriter;
using bootstrap::wire::ProtocolError;
using protocol::Type;

FederationServer::FederationServer(ServerOptions options, const std::string &host, int port)
    : options_(std::move(options)) {
  const net::Resolved resolved = net::resolve(
      host, port, true, net::Clock::now() + std::chrono::milliseconds(options_.lookup_timeout_ms));
  if (resolved.kind == net::Resolved::Timeout)
    fail(XFFL_ETIMEOUT, "cannot serve the federation at ", bootstrap::host_port(host, port), ": ",
         net::lookup_timeout_text(host, options_.lookup_timeout_ms, ""));
  if (resolved.kind != net::Resolved::Ok)
    fail(XFFL_ENETWORK, "cannot serve the federation at ", bootstrap::host_port(host, port), ": cannot resolve '",
         host, "': ", resolved.error);
  std::string reason;
  for (const net::Address &address : resolved.addresses) {
    net::Fd fd(::socket(address.storage.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!fd) {
      reason = net::errno_text(errno);
      continue;
    }
    int on = 1;
    ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    if (::bind(fd.get(), reinterpret_cast<const sockaddr *>(&address.storage), address.length) != 0 ||
        ::listen(fd.get(), 128) != 0) {
      reason = net::errno_text(errno);
      continue;
    }
    listener_ = std::move(fd);
    break;
  }
  if (!listener_) fail(XFFL_ENETWORK, "cannot serve the federation at ", bootstrap::host_port(host, port), ": ", reason);
  port_ = net::local_port(listener_.get());
  address_ = bootstrap::host_port(host, port_);
  acceptor_ = std::thread([this] { accept_loop(); });
}

FederationServer::~FederationServer() { stop(); }

void FederationServer::stop() {
  if (stopping_.exchange(true)) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    changed_.notify_all();
  }
  if (acceptor_.joinable()) acceptor_.join();
  std::list<std::unique_ptr<Connection>> connections;
  {
    std::lock_guard<std::mutex> lock(connections_mutex_);
    // Wakes every connection thread blocked in a receive; the descriptors are closed once joined.
    for (auto &connection : connections_) ::shutdown(connection->fd.get(), SHUT_RDWR);
    connections.swap(connections_);
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    changed_.notify_all();
  }
  for (auto &connection : connections)
    if (connection->thread.joinable()) connection->thread.join();
  listener_.reset();
}

void FederationServer::reap_finished() {
  std::list<std::unique_ptr<Connection>> finished;
  {
    std::lock_guard<std::mutex> lock(connections_mutex_);
    for (auto it = connections_.begin(); it != connections_.end();) {
      auto next = std::next(it);
      if ((*it)->done) finished.splice(finished.end(), connections_, it);
      it = next;
    }
  }
  for (auto &connection : finished) connection->thread.join();
}

void FederationServer::accept_loop() {
  while (!stopping_) {
    pollfd entry{listener_.get(), POLLIN, 0};
    // A bounded poll rather than a wake-up pipe: stop() is rare and may take a quarter second.
    int ready = ::poll(&entry, 1, 250);
    reap_finished();
    if (ready <= 0) continue;
    int raw = ::accept4(listener_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (raw < 0) continue;
    net::Fd fd(raw);
    // A client may send requests without waiting for each answer (epochs.h, the unanswered ack and
    // swap); with Nagle's algorithm the answer after the first would wait for the client's delayed
    // ACK of it.
    int on = 1;
    ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
    std::lock_guard<std::mutex> lock(connections_mutex_);
    if (connections_.size() >= kMaxConnections || stopping_) continue;  // closed at once by fd's destructor
    auto connection = std::make_unique<Connection>();
    connection->fd = std::move(fd);
    Connection *raw_connection = connection.get();
    connections_.push_back(std::move(connection));
    raw_connection->thread = std::thread([this, raw_connection] {
      serve(raw_connection);
      raw_connection->done = true;
    });
  }
}

bool FederationServer::handshake(int fd) {
  protocol::FrameReader reader;
  auto deadline = net::Clock::now() + std::chrono::milliseconds(options_.handshake_timeout_ms);
  protocol::Frame frame;
  if (receive_frame(fd, reader, deadline, &frame).kind != net::IoResult::Ok || frame.type != Type::Hello) return false;
  protocol::Nonce client_nonce{}, server_nonce = bootstrap::auth::random_nonce();
  {
    PayloadReader in(frame.payload);
    in.fixed(client_nonce.data(), client_nonce.size());
    in.finish();
  }
  PayloadWriter challenge;
  challenge.fixed(server_nonce.data(), server_nonce.size());
  if (send_frame(fd, Type::Challenge, challenge.take(), deadline).kind != net::IoResult::Ok) return false;
  if (receive_frame(fd, reader, deadline, &frame).kind != net::IoResult::Ok || frame.type != Type::Auth) return false;
  protocol::Proof client_proof{};
  {
    PayloadReader in(frame.payload);
    in.fixed(client_proof.data(), client_proof.size());
    in.finish();
  }
  protocol::Proof server_proof{};
  if (!options_.secret.empty()) {
    protocol::Proof expected = protocol::proof(protocol::Side::Client, options_.secret, client_nonce, server_nonce);
    if (!bootstrap::auth::proofs_equal(expected, client_proof)) {
      PayloadWriter failure;
      failure.i32(XFFL_EAUTH);
      failure.text("the federation server refused the client's proof: the job secret differs");
      send_frame(fd, Type::Failure, failure.take(), deadline);
      return false;
    }
    server_proof = protocol::proof(protocol::Side::Server, options_.secret, client_nonce, server_nonce);
  }
  PayloadWriter welcome;
  welcome.fixed(server_proof.data(), server_proof.size());
  return send_frame(fd, Type::Welcome, welcome.take(), deadline).kind == net::IoResult::Ok;
}

void FederationServer::serve(Connection *connection) {
  int fd = connection->fd.get();
  try {
    if (!handshake(fd)) return;
    protocol::FrameReader reader;
    while (!stopping_) {
      protocol::Frame frame;
      // An authenticated client may stay quiet for as long as it likes (it holds no resource but its
      // connection slot); stop() wakes this receive by shutting the socket down.
      auto forever = net::Clock::now() + std::chrono::hours(24 * 365);
      if (receive_frame(fd, reader, forever, &frame).kind != net::IoResult::Ok) return;
      if (static_cast<size_t>(frame.type) < requests_.size()) requests_[static_cast<size_t>(frame.type)]++;
      std::optional<Reply> reply;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        WatchRequest watch;
        reply = answer(core_, frame, FederationCore::Clock::now(), &watch);
        if (!reply) {
          // A Watch parks this connection's thread until a change under its prefix, a lease's end
          // (which may be one), stop(), or its deadline.
          auto deadline = FederationCore::Clock::now() +
                          std::chrono::milliseconds(std::min<uint32_t>(watch.wait_ms, options_.max_wait_ms));
          while (!stopping_ && FederationCore::Clock::now() < deadline &&
                 !core_.changed_since(watch.prefix, watch.since, FederationCore::Clock::now())) {
            auto wake = deadline;
            if (auto expiry = core_.next_expiry(); expiry && *expiry < wake) wake = *expiry;
            changed_.wait_until(lock, wake);
          }
          reply = answer_watch(core_, watch, FederationCore::Clock::now());
        }
        // Any request may have changed what a parked Watch waits for (a write, or a lease's deadline).
        changed_.notify_all();
      }
      if (send_frame(fd, reply->type, reply->payload,
                     net::Clock::now() + std::chrono::milliseconds(options_.handshake_timeout_ms))
              .kind != net::IoResult::Ok)
        return;
    }
  } catch (const std::exception &) {
    // A malformed frame (ProtocolError) or a stranger: the connection ends, the server goes on.
  }
}

std::string FederationServer::request_counts() const {
  std::string out;
  for (size_t type = 0; type < requests_.size(); ++type) {
    const uint64_t count = requests_[type].load();
    if (count == 0 || !protocol::is_known_type(static_cast<uint16_t>(type))) continue;
    out += (out.empty() ? "" : ", ") + std::string(protocol::type_name(static_cast<protocol::Type>(type))) + " " +
           std::to_string(count);
  }
  return out.empty() ? "none" : out;
}

}  // namespace xffl::federation
