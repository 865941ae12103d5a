#include "bootstrap/store_core.h"

#include <algorithm>

#include "bootstrap/auth.h"
#include "bootstrap/text.h"
#include "common/error.h"

namespace xffl::bootstrap {

namespace {
enum class Phase { AwaitHello, AwaitAuth, Ready };
enum class ParkKind { Fetch, Barrier };
// Beyond one frame of unsent output, a connection is not read until it drains.
constexpr size_t kOutputHighWater = wire::kHeaderSize + wire::kMaxPayload;
constexpr size_t kRememberedLines = 64;
}  // namespace

struct StoreCore::Parked {
  ParkKind kind;
  std::string name;  // key or barrier name
  Clock::time_point deadline;
  uint32_t timeout_ms;
};

struct StoreCore::Connection {
  ConnectionId id;
  std::string peer;
  Phase phase = Phase::AwaitHello;
  Clock::time_point hello_deadline;
  wire::FrameReader reader;
  std::vector<uint8_t> output;
  size_t output_offset = 0;
  Disposition disposition = Disposition::Keep;
  int rank = -1;
  protocol::Hello hello;
  protocol::Nonce server_nonce{};
  std::optional<Parked> parked;
  std::set<uint32_t> group_slots;  // process-group slots this rank claimed and has not released
};

StoreCore::StoreCore(ServerConfig config) : config_(std::move(config)), groups_(config_.group_slots) {
  if (config_.max_connections == 0) config_.max_connections = 4 * static_cast<size_t>(config_.world_size) + 64;
}

StoreCore::~StoreCore() = default;

StoreCore::Connection *StoreCore::find(ConnectionId id) {
  auto it = connections_.find(id);
  return it == connections_.end() ? nullptr : it->second.get();
}

const StoreCore::Connection *StoreCore::find(ConnectionId id) const {
  auto it = connections_.find(id);
  return it == connections_.end() ? nullptr : it->second.get();
}

std::string StoreCore::describe(const Connection &connection) const {
  if (connection.rank >= 0) return "rank " + std::to_string(connection.rank) + " (" + connection.peer + ")";
  return connection.peer;
}

void StoreCore::remember(std::vector<std::string> &log, const std::string &line) {
  if (log.size() == kRememberedLines) log.erase(log.begin());
  log.push_back(line);
}

bool StoreCore::accept(ConnectionId id, const std::string &peer, Clock::time_point now) {
  if (connections_.size() >= config_.max_connections) {
    config_.logger.warn("store ", config_.address, ": refused a connection from ", peer, ": already ",
                        connections_.size(), " connections (limit ", config_.max_connections, ")");
    return false;
  }
  auto connection = std::make_unique<Connection>();
  connection->id = id;
  connection->peer = peer;
  connection->hello_deadline = now + std::chrono::milliseconds(config_.hello_timeout_ms);
  connections_[id] = std::move(connection);
  return true;
}

void StoreCore::receive(ConnectionId id, const uint8_t *data, size_t size, Clock::time_point now) {
  Connection *connection = find(id);
  if (!connection || connection->disposition != Disposition::Keep) return;
  try {
    connection->reader.feed(data, size);
  } catch (const wire::ProtocolError &error) {
    drop(*connection, error.what());
    return;
  }
  process(*connection, now);
  resume_all(now);
}

void StoreCore::process(Connection &connection, Clock::time_point now) {
  while (connection.disposition == Disposition::Keep && !connection.parked) {
    std::optional<wire::Frame> frame;
    try {
      frame = connection.reader.next();
      if (!frame) return;
      handle(connection, *frame, now);
    } catch (const wire::ProtocolError &error) {
      drop(connection, error.what());
      return;
    }
  }
}

void StoreCore::handle(Connection &connection, const wire::Frame &frame, Clock::time_point now) {
  using wire::Type;
  switch (connection.phase) {
    case Phase::AwaitHello:
      if (frame.type != Type::Hello)
        throw wire::ProtocolError(std::string("expected a hello, got a ") + wire::type_name(frame.type));
      on_hello(connection, protocol::decode_hello(frame.payload));
      return;
    case Phase::AwaitAuth:
      if (frame.type != Type::Auth)
        throw wire::ProtocolError(std::string("expected an auth, got a ") + wire::type_name(frame.type));
      on_auth(connection, protocol::decode_auth(frame.payload));
      return;
    case Phase::Ready:
      switch (frame.type) {
        case Type::Publish: on_publish(connection, protocol::decode_publish(frame.payload)); return;
        case Type::Fetch: on_fetch(connection, protocol::decode_fetch(frame.payload), now); return;
        case Type::Barrier: on_barrier(connection, protocol::decode_barrier(frame.payload), now); return;
        case Type::Departed:
          protocol::decode_departed(frame.payload);
          on_departed(connection);
          return;
        case Type::Claim: on_claim(connection, protocol::decode_claim(frame.payload)); return;
        case Type::Release: on_release(connection, protocol::decode_release(frame.payload)); return;
        default:
          throw wire::ProtocolError(std::string("unexpected ") + wire::type_name(frame.type) + " from a joined rank");
      }
  }
}

void StoreCore::on_hello(Connection &connection, const protocol::Hello &hello) {
  const int world = config_.world_size;
  connection.hello = hello;
  if (hello.job_id != config_.job_id)
    return reject(connection, XFFL_EINVAL,
                  "job id '" + hello.job_id + "' differs from the store's '" + config_.job_id + "'");
  if (hello.world_size != static_cast<uint32_t>(world))
    return reject(connection, XFFL_EINVAL,
                  "world size " + std::to_string(hello.world_size) + " differs from the store's " + std::to_string(world));
  if (hello.rank >= static_cast<uint32_t>(world))
    return reject(connection, XFFL_EINVAL,
                  "rank " + std::to_string(hello.rank) + " is outside [0, " + std::to_string(world) + ")");
  if (joined_ranks_.count(static_cast<int>(hello.rank)))
    return reject(connection, XFFL_EINVAL,
                  "rank " + std::to_string(hello.rank) + " has already joined the store (two processes with one rank?)");
  if (config_.auth_token.empty()) return join(connection, protocol::Welcome{});
  connection.server_nonce = config_.nonce_source ? config_.nonce_source() : auth::random_nonce();
  connection.phase = Phase::AwaitAuth;
  send(connection, protocol::encode(protocol::Challenge{connection.server_nonce}));
}

void StoreCore::on_auth(Connection &connection, const protocol::Auth &message) {
  const protocol::Hello &hello = connection.hello;
  protocol::Proof expected = auth::proof(auth::Side::Client, config_.auth_token, hello.world_size, hello.rank,
                                         hello.job_id, hello.client_nonce, connection.server_nonce);
  if (!auth::proofs_equal(expected, message.client_proof))
    return reject(connection, XFFL_EAUTH,
                  "authentication failed for rank " + std::to_string(hello.rank) +
                      ": its XFFL_AUTH_TOKEN differs from the store's");
  // A second connection may have joined as this rank while this one was authenticating.
  if (joined_ranks_.count(static_cast<int>(hello.rank)))
    return reject(connection, XFFL_EINVAL, "rank " + std::to_string(hello.rank) + " has already joined the store");
  protocol::Welcome welcome;
  welcome.authenticated = true;
  welcome.server_proof = auth::proof(auth::Side::Server, config_.auth_token, hello.world_size, hello.rank, hello.job_id,
                                     hello.client_nonce, connection.server_nonce);
  join(connection, welcome);
}

void StoreCore::join(Connection &connection, const protocol::Welcome &welcome) {
  connection.phase = Phase::Ready;
  connection.rank = static_cast<int>(connection.hello.rank);
  joined_ranks_.insert(connection.rank);
  send(connection, protocol::encode(welcome));
  config_.logger.debug("store ", config_.address, ": rank ", connection.rank, " joined from ", connection.peer, " (",
                       joined_ranks_.size(), " of ", config_.world_size, ")");
}

void StoreCore::reject(Connection &connection, xffl_status_t status, const std::string &reason) {
  std::string line = "store " + config_.address + ": refused rank " + std::to_string(connection.hello.rank) +
                     " from " + connection.peer + ": " + reason;
  config_.logger.error(line);
  remember(rejections_, line);
  send(connection, protocol::encode(protocol::Reject{status, reason}));
  connection.disposition = Disposition::CloseAfterFlush;
}

void StoreCore::drop(Connection &connection, const std::string &reason) {
  std::string line = "store " + config_.address + ": dropped the connection from " + describe(connection) + ": " + reason;
  // A joined rank speaking garbage is the job's problem; a stranger (a port scanner, a stray client)
  // is not, and must not fill rank 0's stderr: it shows at info.
  if (connection.phase == Phase::Ready)
    config_.logger.error(line);
  else
    config_.logger.info(line);
  remember(drops_, line);
  connection.disposition = Disposition::CloseNow;
  connection.output.clear();
  connection.output_offset = 0;
}

void StoreCore::send(Connection &connection, const std::vector<uint8_t> &bytes) {
  connection.output.insert(connection.output.end(), bytes.begin(), bytes.end());
}

void StoreCore::answer(ConnectionId id, const std::vector<uint8_t> &bytes) {
  Connection *connection = find(id);
  if (!connection) return;
  connection->parked.reset();
  send(*connection, bytes);
}

void StoreCore::on_publish(Connection &connection, const protocol::Publish &publish) {
  if (publish.key.empty()) {
    send(connection, protocol::encode(protocol::Failure{XFFL_EINVAL, "an empty key cannot be published", {}}));
    return;
  }
  auto existing = entries_.find(publish.key);
  if (existing != entries_.end()) {
    if (existing->second.value == publish.value) {
      send(connection, protocol::encode_ok());  // write-once, but repeating the same bytes is harmless
      return;
    }
    send(connection, protocol::encode(protocol::Failure{
                         XFFL_EINVAL,
                         "key '" + publish.key + "' was already published by rank " +
                             std::to_string(existing->second.publisher) + " with different bytes (" +
                             std::to_string(existing->second.value.size()) + " bytes, now " +
                             std::to_string(publish.value.size()) + ")",
                         {static_cast<uint32_t>(existing->second.publisher)}}));
    return;
  }
  size_t cost = publish.key.size() + publish.value.size();
  if (stored_bytes_ + cost > config_.max_stored_bytes) {
    send(connection, protocol::encode(protocol::Failure{
                         XFFL_ENOMEM,
                         "the store holds " + std::to_string(stored_bytes_) + " bytes; key '" + publish.key +
                             "' would exceed its limit of " + std::to_string(config_.max_stored_bytes),
                         {}}));
    return;
  }
  stored_bytes_ += cost;
  entries_[publish.key] = Entry{publish.value, connection.rank};
  send(connection, protocol::encode_ok());

  auto waiters = fetch_waiters_.find(publish.key);
  if (waiters == fetch_waiters_.end()) return;
  std::vector<ConnectionId> ids = std::move(waiters->second);
  fetch_waiters_.erase(waiters);
  std::vector<uint8_t> frame = protocol::encode(protocol::Value{publish.value});
  for (ConnectionId id : ids) answer(id, frame);
}

void StoreCore::on_fetch(Connection &connection, const protocol::Fetch &fetch, Clock::time_point now) {
  auto existing = entries_.find(fetch.key);
  if (existing != entries_.end()) {
    send(connection, protocol::encode(protocol::Value{existing->second.value}));
    return;
  }
  if (fetch.timeout_ms == 0) {
    send(connection, protocol::encode(protocol::Failure{XFFL_ETIMEOUT, "key '" + fetch.key + "' is not published", {}}));
    return;
  }
  connection.parked = Parked{ParkKind::Fetch, fetch.key, now + std::chrono::milliseconds(fetch.timeout_ms),
                             fetch.timeout_ms};
  fetch_waiters_[fetch.key].push_back(connection.id);
}

// Answered at once: ranks that joined and whose connection closed, ascending (a std::set's order).
// At most world_size ranks; a world beyond kMaxRanksInList (2^18) would hear of its lowest ones only.
void StoreCore::on_departed(Connection &connection) {
  protocol::Ranks answer;
  for (int rank : departed_ranks_) {
    if (answer.ranks.size() == wire::kMaxRanksInList) break;
    answer.ranks.push_back(static_cast<uint32_t>(rank));
  }
  send(connection, protocol::encode(answer));
}

void StoreCore::on_claim(Connection &connection, const protocol::Claim &claim) {
  const std::string key(claim.key.begin(), claim.key.end());
  const auto members = static_cast<uint32_t>(config_.world_size);
  if (claim.members > members)
    return send(connection, protocol::encode(protocol::Failure{
                                XFFL_EINVAL,
                                "a process group of " + std::to_string(claim.members) + " members in a job of " +
                                    std::to_string(members) + " ranks",
                                {}}));
  if (stored_bytes_ + groups_.pending_bytes() + key.size() > config_.max_stored_bytes)
    return send(connection, protocol::encode(protocol::Failure{
                                XFFL_ENOMEM,
                                "the store holds " + std::to_string(stored_bytes_ + groups_.pending_bytes()) +
                                    " bytes; one more process group's key would exceed its limit of " +
                                    std::to_string(config_.max_stored_bytes),
                                {}}));
  std::optional<GroupClaim> claimed = groups_.claim(key, claim.members);
  if (!claimed) {
    const bool full = groups_.live() >= groups_.slots();
    return send(connection, protocol::encode(protocol::Failure{
                                full ? XFFL_ENOMEM : XFFL_EINVAL,
                                full ? "all " + std::to_string(groups_.slots()) +
                                           " process-group identities of the job are in use (destroy groups that "
                                           "are no longer needed)"
                                     : "rank " + std::to_string(connection.rank) + " claims a process group of " +
                                           std::to_string(claim.members) +
                                           " members whose other members named another count",
                                {}}));
  }
  connection.group_slots.insert(claimed->slot);
  send(connection, protocol::encode(protocol::Identity{claimed->slot, claimed->serial}));
}

void StoreCore::on_release(Connection &connection, const protocol::Release &release) {
  // Only a slot this rank holds: a confused or hostile client cannot free other ranks' groups.
  if (connection.group_slots.erase(release.slot)) groups_.release(release.slot);
}

std::vector<uint32_t> StoreCore::missing_ranks(const BarrierState &barrier) const {
  std::vector<uint32_t> missing;
  for (int rank = 0; rank < config_.world_size; ++rank)
    if (!barrier.arrived.count(rank)) missing.push_back(static_cast<uint32_t>(rank));
  return missing;
}

void StoreCore::fail_barrier(const std::string &name, BarrierState &barrier, xffl_status_t status,
                             const std::string &why, const std::vector<uint32_t> &ranks) {
  std::vector<uint8_t> frame = protocol::encode(protocol::Failure{status, why, ranks});
  for (ConnectionId id : barrier.waiting) answer(id, frame);
  barriers_.erase(name);
}

void StoreCore::remember_failed_barrier(const std::string &name, const protocol::Failure &failure) {
  constexpr size_t kRememberedBarriers = 4096;  // bounded: old failures are forgotten
  if (failed_barriers_.size() >= kRememberedBarriers) {
    failed_barriers_.erase(failed_order_.front());
    failed_order_.pop_front();
  }
  if (failed_barriers_.emplace(name, failure).second) failed_order_.push_back(name);
}

void StoreCore::on_barrier(Connection &connection, const protocol::Barrier &request, Clock::time_point now) {
  if (auto failed = failed_barriers_.find(request.name); failed != failed_barriers_.end()) {
    send(connection, protocol::encode(failed->second));  // a rank arriving late at a barrier that failed
    return;
  }
  BarrierState &barrier = barriers_[request.name];
  barrier.arrived.insert(connection.rank);
  // A rank that has left the store will never arrive: say so now rather than at the timeout.
  std::vector<uint32_t> gone;
  for (int rank : departed_ranks_)
    if (!barrier.arrived.count(rank)) gone.push_back(static_cast<uint32_t>(rank));
  if (!gone.empty()) {
    barrier.waiting.push_back(connection.id);
    connection.parked = Parked{ParkKind::Barrier, request.name, now, request.timeout_ms};
    fail_barrier(request.name, barrier, XFFL_EPEER,
                 ranks_phrase(gone) + " left the store before arriving at barrier '" + request.name + "'", gone);
    return;
  }
  if (barrier.arrived.size() == static_cast<size_t>(config_.world_size)) {
    std::vector<ConnectionId> waiting = std::move(barrier.waiting);
    barriers_.erase(request.name);
    std::vector<uint8_t> ok = protocol::encode_ok();
    for (ConnectionId id : waiting) answer(id, ok);
    send(connection, ok);
    return;
  }
  barrier.waiting.push_back(connection.id);
  connection.parked = Parked{ParkKind::Barrier, request.name, now + std::chrono::milliseconds(request.timeout_ms),
                             request.timeout_ms};
}

void StoreCore::expire(Clock::time_point now) {
  for (auto &[id, connection] : connections_) {
    if (connection->disposition != Disposition::Keep) continue;
    if (connection->phase != Phase::Ready && now >= connection->hello_deadline) {
      drop(*connection, "no complete hello within " + std::to_string(config_.hello_timeout_ms) + " ms");
      continue;
    }
    if (!connection->parked || now < connection->parked->deadline) continue;
    Parked parked = *connection->parked;
    if (parked.kind == ParkKind::Fetch) {
      auto waiters = fetch_waiters_.find(parked.name);
      if (waiters != fetch_waiters_.end()) {
        auto &ids = waiters->second;
        ids.erase(std::remove(ids.begin(), ids.end(), id), ids.end());
        if (ids.empty()) fetch_waiters_.erase(waiters);
      }
      answer(id, protocol::encode(protocol::Failure{
                     XFFL_ETIMEOUT,
                     "key '" + parked.name + "' was not published within " + std::to_string(parked.timeout_ms) + " ms",
                     {}}));
    } else {
      // One rank giving up fails the barrier for everyone: a barrier completes for all or for none.
      auto found = barriers_.find(parked.name);
      if (found == barriers_.end()) continue;  // already answered
      std::vector<uint32_t> missing = missing_ranks(found->second);
      std::string why = "rank " + std::to_string(connection->rank) + " gave up after " +
                        std::to_string(parked.timeout_ms) + " ms";
      remember_failed_barrier(parked.name, protocol::Failure{XFFL_ETIMEOUT, why, missing});
      fail_barrier(parked.name, found->second, XFFL_ETIMEOUT, why, missing);
    }
  }
  resume_all(now);
}

void StoreCore::resume_all(Clock::time_point now) {
  // A connection whose parked request was just answered may hold further frames it sent meanwhile.
  for (auto &[id, connection] : connections_)
    if (connection->disposition == Disposition::Keep && !connection->parked && connection->reader.buffered() > 0)
      process(*connection, now);
}

void StoreCore::disconnected(ConnectionId id, Clock::time_point now) {
  auto it = connections_.find(id);
  if (it == connections_.end()) return;
  std::unique_ptr<Connection> connection = std::move(it->second);
  connections_.erase(it);
  if (connection->parked) {
    const Parked &parked = *connection->parked;
    if (parked.kind == ParkKind::Fetch) {
      auto waiters = fetch_waiters_.find(parked.name);
      if (waiters != fetch_waiters_.end()) {
        auto &ids = waiters->second;
        ids.erase(std::remove(ids.begin(), ids.end(), id), ids.end());
        if (ids.empty()) fetch_waiters_.erase(waiters);
      }
    } else if (auto found = barriers_.find(parked.name); found != barriers_.end()) {
      auto &waiting = found->second.waiting;
      waiting.erase(std::remove(waiting.begin(), waiting.end(), id), waiting.end());
    }
  }
  if (connection->phase != Phase::Ready) return;
  const int rank = connection->rank;
  departed_ranks_.insert(rank);
  // A rank that left uses none of its process groups any more.
  for (uint32_t slot : connection->group_slots) groups_.release(slot);
  config_.logger.debug("store ", config_.address, ": rank ", rank, " left (", connection->peer, ")");
  // Barriers this rank had not reached can no longer complete.
  std::vector<std::string> doomed;
  for (auto &[name, barrier] : barriers_)
    if (!barrier.arrived.count(rank)) doomed.push_back(name);
  for (const std::string &name : doomed) {
    protocol::Failure failure{XFFL_EPEER,
                              "rank " + std::to_string(rank) + " left the store before arriving at barrier '" + name + "'",
                              {static_cast<uint32_t>(rank)}};
    remember_failed_barrier(name, failure);
    fail_barrier(name, barriers_[name], failure.status, failure.message, failure.ranks);
  }
  resume_all(now);
}

const uint8_t *StoreCore::pending_output(ConnectionId id, size_t *size) const {
  const Connection *connection = find(id);
  if (!connection || connection->output_offset >= connection->output.size()) {
    *size = 0;
    return nullptr;
  }
  *size = connection->output.size() - connection->output_offset;
  return connection->output.data() + connection->output_offset;
}

void StoreCore::sent(ConnectionId id, size_t n) {
  Connection *connection = find(id);
  if (!connection) return;
  connection->output_offset = std::min(connection->output.size(), connection->output_offset + n);
  if (connection->output_offset == connection->output.size()) {
    connection->output.clear();
    connection->output_offset = 0;
  }
}

bool StoreCore::wants_read(ConnectionId id) const {
  const Connection *connection = find(id);
  if (!connection || connection->disposition != Disposition::Keep || connection->parked) return false;
  return connection->output.size() - connection->output_offset < kOutputHighWater;
}

StoreCore::Disposition StoreCore::disposition(ConnectionId id) const {
  const Connection *connection = find(id);
  return connection ? connection->disposition : Disposition::CloseNow;
}

std::optional<StoreCore::Clock::time_point> StoreCore::next_deadline() const {
  std::optional<Clock::time_point> earliest;
  auto consider = [&](Clock::time_point t) {
    if (!earliest || t < *earliest) earliest = t;
  };
  for (const auto &[id, connection] : connections_) {
    if (connection->disposition != Disposition::Keep) continue;
    if (connection->phase != Phase::Ready) consider(connection->hello_deadline);
    if (connection->parked) consider(connection->parked->deadline);
  }
  return earliest;
}

size_t StoreCore::joined_connection_count() const {
  size_t count = 0;
  for (const auto &[id, connection] : connections_)
    if (connection->phase == Phase::Ready) ++count;
  return count;
}

}  // namespace xffl::bootstrap
