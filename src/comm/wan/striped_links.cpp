#include "comm/wan/striped_links.h"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/error.h"

namespace xffl::comm::wan {

namespace net = bootstrap::net;

namespace {

// A poll round returns at least this often, so connections accepted for this group are claimed.
constexpr int kPollSliceMs = 200;
// The step of a mismatch notice's key (call_arguments.h): above every schedule's steps.
constexpr int kNoticeStep = 0xffff;
// How long a member that found or heard of a mismatch waits for the other side's notice at most (the
// timeout, when shorter): the other side answers at its next progress, within a poll slice when it
// waits in this call.
constexpr int kNoticeWaitMs = 5000;

bool is_notice(uint64_t key) { return ((key >> 24) & 0xffff) == static_cast<uint64_t>(kNoticeStep); }

bool gone(int error) { return error == ECONNRESET || error == EPIPE || error == ENOTCONN || error == ETIMEDOUT; }

}  // namespace

StripedLinks::StripedLinks(std::shared_ptr<WanHub> hub, std::vector<int> members, int my_index, GroupKey group,
                           std::string description)
    : hub_(std::move(hub)),
      members_(std::move(members)),
      my_index_(my_index),
      group_(group),
      description_(std::move(description)),
      encrypted_(hub_->settings().encryption != XFFL_WAN_ENCRYPTION_NONE) {
  peers_.resize(members_.size());
  const WanSettings &settings = hub_->settings();
  for (size_t i = 0; i < members_.size(); ++i) {
    peers_[i].rank = members_[i];
    // A lower rank dials us when we listen; the other cases are settled at connect().
    peers_[i].accepts = members_[i] < settings.rank && settings.listens();
  }
}

StripedLinks::~StripedLinks() {
  close();
  hub_->forget(group_);
}

void StripedLinks::close() noexcept {
  for (Peer &peer : peers_) {
    peer.streams.clear();
    peer.connected = false;
    peer.outbox.clear();
    peer.inbox.clear();
  }
}

void StripedLinks::begin(const char *operation, const CallSignature &arguments) {
  operation_ = operation;
  last_arguments_ = arguments_;
  arguments_ = arguments;
  call_check_ = signature_bits(arguments);
  requests_.clear();  // the previous operation waited for all of its requests
  ++call_;
  for (Peer &p : peers_) {
    p.sent.clear();
    p.received.clear();
  }
}

uint64_t StripedLinks::message_key(algorithms::Step step, std::map<int, uint32_t> &counts) {
  if (step.index < 0 || step.index >= kNoticeStep)
    fail(XFFL_EINTERNAL, where(-1), ": step ", step.index, " outside [0, ", kNoticeStep, ")");
  const uint32_t index = counts[step.index]++;
  if (index > 0xffffff) fail(XFFL_EINTERNAL, where(-1), ": more than 2^24 messages in step ", step.index);
  return (static_cast<uint64_t>(call_ & 0xffffff) << 40) | (static_cast<uint64_t>(step.index) << 24) | index;
}

std::string StripedLinks::where(int index) const {
  std::string out = "rank " + std::to_string(hub_->settings().rank) + ": wan " + operation_ + " on " + description_;
  if (index < 0) return out;
  out += ", peer rank " + std::to_string(members_[static_cast<size_t>(index)]);
  const std::string &relay = peers_[static_cast<size_t>(index)].relay;
  if (!relay.empty()) out += " through the relay at " + relay;
  return out;
}

std::string StripedLinks::relay_awaited(int index) const {
  const std::string text = hub_->relay_awaited(group_, members_[static_cast<size_t>(index)]);
  return text.empty() ? text : "; " + text;
}

void StripedLinks::failure(xffl_status_t status, int index, const std::string &what) {
  close();
  fail(status, where(index), ": ", what);
}

StripedLinks::Peer &StripedLinks::peer(int index, const char *what) {
  if (index < 0 || index >= size() || index == my_index_)
    fail(XFFL_EINTERNAL, where(-1), ": ", what, " to member ", index, " of ", size());
  Peer &p = peers_[static_cast<size_t>(index)];
  if (p.closed) failure(XFFL_EPEER, index, std::string("the peer closed its streams of this group; a ") + what + " to it cannot complete");
  return p;
}

void StripedLinks::connect(int index, Clock::time_point deadline) {
  Peer &p = peers_[static_cast<size_t>(index)];
  if (p.connected || p.accepts) return;
  const std::string what = std::string(operation_) + " on " + description_;
  const Route route = hub_->route(p.rank, what, deadline);
  if (route.kind == Route::kRelayCaller || route.kind == Route::kRelayOwner)
    hub_->start_relayed(p.rank, route, group_, what, deadline);  // the hub makes them as we wait
  if (route.kind != Route::kDial) {  // the peer dials, or the relay pairs: progress() claims the streams
    p.accepts = true;
    return;
  }
  std::vector<Connection> dialled = hub_->dial(p.rank, route.address, group_, what, deadline);
  p.streams.resize(dialled.size());
  for (size_t s = 0; s < dialled.size(); ++s) p.streams[s].connection = std::move(dialled[s]);
  p.connected = true;
}

bool StripedLinks::has_pending(const Peer &p) {
  if (!p.outbox.empty()) return true;
  for (const auto &[sequence, message] : p.inbox)
    if (message.posted) return true;
  return false;
}

std::string StripedLinks::fail_question(const Peer &p) {
  return p.relay.empty() ? "did it fail or exit?" : "did it, or the relay, fail or exit?";
}

std::string StripedLinks::pending_text(const Peer &p) {
  size_t sends = p.outbox.size(), receives = 0;
  for (const auto &[sequence, message] : p.inbox) receives += message.posted ? 1 : 0;
  return std::to_string(sends) + " send(s) and " + std::to_string(receives) + " receive(s) of this rank";
}

algorithms::RequestId StripedLinks::send(int index, const void *data, size_t bytes, algorithms::Step step) {
  Peer &p = peer(index, "send");
  connect(index, Clock::now() + std::chrono::milliseconds(hub_->settings().timeout_ms));
  const algorithms::RequestId id = requests_.size();
  requests_.push_back({false, true, index, bytes, step});
  OutMessage message;
  message.data = static_cast<const uint8_t *>(data);
  message.bytes = bytes;
  message.request = id;
  p.outbox.emplace(message_key(step, p.sent), message);
  // What the sockets take now leaves now, not at the next wait: a schedule that produces its data as
  // it posts (streamed_allgather's encoding) keeps the link busy meanwhile.
  if (p.connected) progress(Clock::now(), index);
  return id;
}

algorithms::RequestId StripedLinks::recv(int index, void *data, size_t bytes, algorithms::Step step) {
  if (index < 0 || index >= size() || index == my_index_) peer(index, "recv");  // throws
  Peer &p = peers_[static_cast<size_t>(index)];
  // A peer that closed after sending may have left the message complete in the inbox already.
  const uint64_t key = message_key(step, p.received);
  auto early = p.inbox.find(key);
  if (p.closed && (early == p.inbox.end() || !early->second.total_known || early->second.received != early->second.total))
    failure(XFFL_EPEER, index, "the peer closed its streams of this group; a receive from it cannot complete");
  connect(index, Clock::now() + std::chrono::milliseconds(hub_->settings().timeout_ms));
  const algorithms::RequestId id = requests_.size();
  requests_.push_back({false, false, index, bytes, step});
  InMessage &message = p.inbox[key];
  if (message.total_known && message.total != bytes) mismatch(index, message.total, bytes);
  if (message.total_known && message.call_check != call_check_) mismatch(index, 0, 0);  // came early
  message.data = static_cast<uint8_t *>(data);
  message.capacity = bytes;
  message.posted = true;
  message.request = id;
  // Early frames sit at their offsets in a buffer of the message's size (checked equal to bytes above).
  if (!message.early.empty()) std::memcpy(message.data, message.early.data(), message.early.size());
  std::vector<uint8_t>().swap(message.early);
  if (message.total_known && message.received == message.total) {
    complete(id);
    p.inbox.erase(key);
  }
  return id;
}

void StripedLinks::wait(algorithms::RequestId request) {
  const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(hub_->settings().timeout_ms);
  const Request &r = requests_.at(request);
  while (!requests_.at(request).done) {
    if (Clock::now() >= deadline)
      failure(XFFL_ETIMEOUT, r.peer,
              std::string("timed out after ") + std::to_string(hub_->settings().timeout_ms) + " ms awaiting the " +
                  (r.is_send ? "send" : "receive") + " of " + std::to_string(r.bytes) + " bytes (step " +
                  std::to_string(r.step.index + 1) + " of " + std::to_string(r.step.total) + ")" +
                  (peers_[static_cast<size_t>(r.peer)].connected ? "" : "; the peer never connected") +
                  relay_awaited(r.peer));
    progress(deadline, r.peer);
  }
}

void StripedLinks::wait_all() {
  for (algorithms::RequestId id = 0; id < requests_.size(); ++id) wait(id);
}

bool StripedLinks::take_frame(Peer &p, Stream &stream) {
  for (auto &[sequence, message] : p.outbox) {
    const bool empty_unsent = message.bytes == 0 && !message.first_frame_sent;
    if (message.next_offset >= message.bytes && !empty_unsent) continue;
    const size_t length = std::min(kFrameBytes, message.bytes - message.next_offset);
    FrameHeader header;
    header.payload_bytes = static_cast<uint32_t>(length);
    header.call_check = call_check_;
    header.message = sequence;
    header.offset = message.next_offset;
    header.total = message.bytes;
    stream.header = encode(header);
    stream.message = sequence;
    stream.payload = message.data + message.next_offset;
    stream.payload_bytes = length;
    stream.written = 0;
    if (encrypted_) {
      stream.sealed.resize(length);
      stream.connection.sealer->seal(stream.header.data(), stream.header.size(), stream.payload, length,
                                     stream.sealed.data(), stream.tag.data());
      stream.payload = stream.sealed.data();
    }
    message.next_offset += length;
    message.first_frame_sent = true;
    ++message.frames_in_flight;
    stream.sending = true;
    return true;
  }
  return false;
}

void StripedLinks::write_some(Peer &p, Stream &stream, int index, int stream_index) {
  const int fd = stream.connection.fd.get();
  for (;;) {
    if (!stream.sending && !take_frame(p, stream)) return;
    const size_t tag_bytes = encrypted_ ? kTagBytes : 0;
    const size_t frame_bytes = kHeaderBytes + stream.payload_bytes + tag_bytes;
    while (stream.written < frame_bytes) {
      iovec parts[3];
      int count = 0;
      size_t at = stream.written;
      if (at < kHeaderBytes) parts[count++] = {stream.header.data() + at, kHeaderBytes - at};
      at = at > kHeaderBytes ? at - kHeaderBytes : 0;
      if (at < stream.payload_bytes)
        parts[count++] = {const_cast<uint8_t *>(stream.payload) + at, stream.payload_bytes - at};
      at = stream.written > kHeaderBytes + stream.payload_bytes ? stream.written - kHeaderBytes - stream.payload_bytes : 0;
      if (tag_bytes && at < tag_bytes) parts[count++] = {stream.tag.data() + at, tag_bytes - at};
      msghdr message{};
      message.msg_iov = parts;
      message.msg_iovlen = static_cast<size_t>(count);
      const ssize_t n = ::sendmsg(fd, &message, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n > 0) {
        stream.written += static_cast<size_t>(n);
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
      failure(n < 0 && !gone(errno) ? XFFL_ENETWORK : XFFL_EPEER, index,
              "stream " + std::to_string(stream_index) + " failed while sending: " +
                  (n < 0 ? net::errno_text(errno) : std::string("connection closed")));
    }
    // The frame is out: its message is done once every frame of it is.
    stream.sending = false;
    auto found = p.outbox.find(stream.message);
    if (found == p.outbox.end()) continue;  // a notice cleared the outbox (send_notice)
    OutMessage &message = found->second;
    if (--message.frames_in_flight == 0 && message.next_offset >= message.bytes) {
      complete(message.request);
      p.outbox.erase(found);
    }
  }
}

void StripedLinks::read_some(Peer &p, Stream &stream, int index, int stream_index) {
  const int fd = stream.connection.fd.get();
  const size_t tag_bytes = encrypted_ ? kTagBytes : 0;
  for (;;) {
    const size_t wanted = stream.have_header ? kHeaderBytes + stream.frame.payload_bytes + tag_bytes : kHeaderBytes;
    if (stream.incoming.size() < wanted) stream.incoming.resize(std::max(wanted, kHeaderBytes + kFrameBytes + kTagBytes));
    const ssize_t n = ::recv(fd, stream.incoming.data() + stream.read, wanted - stream.read, MSG_DONTWAIT);
    if (n == 0) {
      // A peer that is done with this group closes its streams while others may still work; frames
      // on its other streams may still be unread. Only a frame cut short, or every stream closed with
      // something of ours unfinished, is a failure.
      if (stream.read > 0)
        failure(XFFL_EPEER, index,
                "stream " + std::to_string(stream_index) + " closed by the peer in the middle of a frame (" + fail_question(p) + ")");
      stream.closed = true;
      bool all_closed = true;
      for (const Stream &other : p.streams) all_closed = all_closed && other.closed;
      if (!all_closed) return;
      if (has_pending(p))
        failure(XFFL_EPEER, index, "the peer closed its streams with " + pending_text(p) + " unfinished (" + fail_question(p) + ")");
      p.closed = true;
      return;
    }
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;
      failure(gone(errno) ? XFFL_EPEER : XFFL_ENETWORK, index,
              "stream " + std::to_string(stream_index) + " failed while receiving: " + net::errno_text(errno));
    }
    stream.read += static_cast<size_t>(n);
    if (stream.read < wanted) continue;
    if (!stream.have_header) {
      if (!decode(stream.incoming.data(), &stream.frame) || stream.frame.payload_bytes > kFrameBytes)
        failure(encrypted_ ? XFFL_EAUTH : XFFL_ENETWORK, index,
                "stream " + std::to_string(stream_index) + " carried a malformed frame header (altered on the link?)");
      stream.have_header = true;
      if (stream.frame.payload_bytes + tag_bytes > 0) continue;
    }
    deliver(p, stream, index, stream_index);
    stream.have_header = false;
    stream.read = 0;
  }
}

void StripedLinks::deliver(Peer &p, Stream &stream, int index, int stream_index) {
  const FrameHeader &frame = stream.frame;
  uint8_t *payload = stream.incoming.data() + kHeaderBytes;
  if (encrypted_ &&
      !stream.connection.opener->open(stream.incoming.data(), kHeaderBytes, payload, frame.payload_bytes, payload,
                                      payload + frame.payload_bytes))
    failure(XFFL_EAUTH, index,
            "a frame on stream " + std::to_string(stream_index) +
                " failed authentication (altered, replayed or reordered on the link): nothing of it was used");
  if (is_notice(frame.message)) {
    std::optional<MismatchNotice> notice = decode_notice(payload, frame.payload_bytes);
    if (!notice)
      failure(XFFL_ENETWORK, index, "stream " + std::to_string(stream_index) + " carried a malformed mismatch notice");
    notice->call = static_cast<uint32_t>(frame.message >> 40);
    stream.have_header = false;  // the frame is consumed: on_notice reads on
    stream.read = 0;
    if (awaiting_notice_) {
      heard_ = notice;
      return;
    }
    on_notice(index, *notice);
  }
  if (awaiting_notice_) return;  // await_notice reads for notices only
  // A frame of this call checked against this call's arguments; one of the next call is checked when
  // its receive is posted (recv).
  if ((frame.message >> 40) == (call_ & 0xffffff) && frame.call_check != call_check_) {
    stream.have_header = false;  // the frame is consumed: mismatch reads on
    stream.read = 0;
    mismatch(index, 0, 0);
  }
  InMessage &message = p.inbox[frame.message];
  if (message.total_known ? message.total != frame.total : (message.posted && frame.total != message.capacity)) {
    stream.have_header = false;  // the frame is consumed: mismatch reads on
    stream.read = 0;
    mismatch(index, frame.total, message.posted ? message.capacity : message.total);
  }
  if (frame.offset > frame.total || frame.payload_bytes > frame.total - frame.offset)
    failure(XFFL_EINTERNAL, index, "a frame at offset " + std::to_string(frame.offset) + " runs past its message");
  message.total = frame.total;
  message.total_known = true;
  message.call_check = frame.call_check;
  if (message.posted) {
    if (frame.payload_bytes) std::memcpy(message.data + frame.offset, payload, frame.payload_bytes);
  } else {
    if (message.early.size() < frame.total) message.early.resize(frame.total);
    if (frame.payload_bytes) std::memcpy(message.early.data() + frame.offset, payload, frame.payload_bytes);
  }
  message.received += frame.payload_bytes;
  // A message complete before its receive is posted waits in the inbox: recv() copies it.
  if (message.posted && message.received == message.total) {
    complete(message.request);
    p.inbox.erase(frame.message);
  }
}

void StripedLinks::progress(Clock::time_point deadline, int awaited) {
  try {
    hub_->poll_wait_hook();  // a coordinator may end the wait (comm/crossing_wait_hook.h)
  } catch (const Error &error) {
    failure(error.status(), awaited, error.what());
  }
  // Streams that peers dialled (WanHub::dials), accepted by the hub (here or in another group's wait).
  for (size_t i = 0; i < peers_.size(); ++i) {
    Peer &p = peers_[i];
    if (p.connected || static_cast<int>(i) == my_index_ || !p.accepts) continue;
    while (static_cast<int>(p.streams.size()) < hub_->settings().streams) {
      std::optional<Connection> claimed;
      try {
        claimed = hub_->claim(group_, p.rank, static_cast<int>(p.streams.size()));
      } catch (const Error &error) {
        failure(error.status(), static_cast<int>(i), error.what());
      }
      if (!claimed) break;
      p.relay = claimed->relay;
      p.streams.emplace_back();
      p.streams.back().connection = std::move(*claimed);
    }
    p.connected = static_cast<int>(p.streams.size()) == hub_->settings().streams;
  }

  std::vector<pollfd> fds;
  std::vector<std::pair<int, int>> owners;  // (member index, stream index) of each fd after the hub's
  fds.push_back({hub_->listen_fd(), POLLIN, 0});
  hub_->add_relayed_fds(&fds);  // relayed streams being made, of any group
  const size_t hub_fds = fds.size();
  for (size_t i = 0; i < peers_.size(); ++i) {
    Peer &p = peers_[i];
    if (!p.connected || p.closed) continue;
    bool more_to_send = false;
    for (const auto &[sequence, message] : p.outbox)
      if (message.next_offset < message.bytes || (message.bytes == 0 && !message.first_frame_sent)) more_to_send = true;
    for (size_t s = 0; s < p.streams.size(); ++s) {
      if (p.streams[s].closed) continue;
      const short events = static_cast<short>(POLLIN | (p.streams[s].sending || more_to_send ? POLLOUT : 0));
      fds.push_back({p.streams[s].connection.fd.get(), events, 0});
      owners.emplace_back(static_cast<int>(i), static_cast<int>(s));
    }
  }
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  const int slice = static_cast<int>(std::clamp<long long>(left, 0, kPollSliceMs));
  const int ready = ::poll(fds.data(), fds.size(), slice);
  if (ready < 0) {
    if (errno == EINTR) return;
    failure(XFFL_ENETWORK, awaited, "poll: " + net::errno_text(errno));
  }
  if (ready == 0) return;
  bool hub_ready = false;
  for (size_t f = 0; f < hub_fds; ++f) hub_ready = hub_ready || fds[f].revents != 0;
  if (hub_ready) hub_->accept_pending(Clock::now() + std::chrono::milliseconds(hub_->settings().timeout_ms));
  for (size_t f = hub_fds; f < fds.size(); ++f) {
    if (!fds[f].revents) continue;
    const auto [i, s] = owners[f - hub_fds];
    Peer &p = peers_[static_cast<size_t>(i)];
    Stream &stream = p.streams[static_cast<size_t>(s)];
    if (fds[f].revents & (POLLIN | POLLHUP | POLLERR)) read_some(p, stream, i, s);
    if (!stream.closed && (fds[f].revents & POLLOUT)) write_some(p, stream, i, s);
  }
}

Clock::time_point StripedLinks::notice_deadline() const {
  return Clock::now() + std::chrono::milliseconds(std::min(kNoticeWaitMs, std::max(1, hub_->settings().timeout_ms)));
}

void StripedLinks::mismatch(int index, uint64_t came, uint64_t expected) {
  const int me = hub_->settings().rank;
  const Clock::time_point deadline = notice_deadline();
  MismatchNotice notice;
  notice.notifier = me;
  notice.culprit = members_[static_cast<size_t>(index)];
  notice.mine = arguments_;
  notice.came = came;
  notice.expected = expected;
  send_notice(notice, deadline);
  const std::optional<MismatchNotice> reply = await_notice(deadline);
  if (reply && reply->mine != arguments_)
    failure(XFFL_EINVAL, index,
            "the members called with different arguments: " + describe_difference(reply->notifier, reply->mine, me,
                                                                                    arguments_));
  const std::string found = came || expected ? "a message of " + std::to_string(came) + " bytes came where " +
                                                   std::to_string(expected) + " were expected"
                                             : std::string("a message of a call with other arguments came");
  failure(XFFL_EINVAL, index,
          found + ": the members called with different arguments (this rank: " + describe_call(arguments_) +
              "; the peer sent no notice naming its own)");
}

void StripedLinks::on_notice(int index, const MismatchNotice &notice) {
  const int me = hub_->settings().rank;
  // A notice of the call before this one (this rank's part of it had completed) names that call.
  const bool earlier = notice.call != (call_ & 0xffffff);
  const CallSignature &mine = earlier ? last_arguments_ : arguments_;
  const std::string prefix =
      earlier ? "the previous call on this group did not match: " : "the members called with different arguments: ";
  if (notice.mine != mine) {
    // Tell every member this rank's arguments, so that the notifier can name both.
    MismatchNotice answer;
    answer.notifier = me;
    answer.culprit = notice.notifier;
    answer.culprit_known = true;
    answer.mine = mine;
    answer.theirs = notice.mine;
    send_notice(answer, notice_deadline());
    failure(XFFL_EINVAL, index, prefix + describe_difference(notice.notifier, notice.mine, me, mine));
  }
  if (notice.culprit_known && notice.theirs != mine)
    failure(XFFL_EINVAL, index, prefix + describe_difference(notice.culprit, notice.theirs, me, mine));
  // The notifier called as this rank did: the culprit's own notice names its arguments.
  const std::optional<MismatchNotice> more = await_notice(notice_deadline());
  if (more && more->mine != mine)
    failure(XFFL_EINVAL, index, prefix + describe_difference(more->notifier, more->mine, me, mine));
  failure(XFFL_EINVAL, index,
          prefix + "rank " + std::to_string(notice.notifier) + " received a message of " +
              (notice.came || notice.expected ? std::to_string(notice.came) + " bytes from rank " +
                                                    std::to_string(notice.culprit) + " where " +
                                                    std::to_string(notice.expected) + " were expected"
                                              : "a call with other arguments from rank " + std::to_string(notice.culprit)) +
              " (this rank and rank " + std::to_string(notice.notifier) + ": " + describe_call(mine) + ")");
}

void StripedLinks::send_notice(const MismatchNotice &notice, Clock::time_point deadline) noexcept {
  if (notice_sent_) return;
  notice_sent_ = true;
  uint8_t bytes[kNoticeBytes];
  encode_notice(notice, bytes);
  FrameHeader header;
  header.payload_bytes = static_cast<uint32_t>(kNoticeBytes);
  header.message = (static_cast<uint64_t>(call_ & 0xffffff) << 40) | (static_cast<uint64_t>(kNoticeStep) << 24);
  header.offset = 0;
  header.total = kNoticeBytes;
  for (size_t i = 0; i < peers_.size(); ++i) {
    Peer &p = peers_[i];
    if (static_cast<int>(i) == my_index_ || !p.connected || p.closed) continue;
    p.outbox.clear();  // no data frame follows the notice
    try {
      // Every frame under way first, on every stream: the peer reads frames whole, and a stream cut in
      // the middle of one would be its error before the notice.
      bool whole = true;
      for (Stream &stream : p.streams)
        if (!stream.closed && stream.sending) whole = write_now(stream, nullptr, nullptr, 0, deadline) && whole;
      if (!whole) continue;
      for (Stream &stream : p.streams)
        if (!stream.closed) {
          write_now(stream, &header, bytes, kNoticeBytes, deadline);
          break;
        }
    } catch (...) {  // a sealer at its limit, out of memory: the peer gets the closed streams instead
    }
  }
}

std::optional<MismatchNotice> StripedLinks::await_notice(Clock::time_point deadline) noexcept {
  awaiting_notice_ = true;
  heard_.reset();
  try {
    while (!heard_ && Clock::now() < deadline) {
      std::vector<pollfd> fds;
      std::vector<std::pair<int, int>> owners;
      for (size_t i = 0; i < peers_.size(); ++i)
        for (size_t s = 0; s < peers_[i].streams.size(); ++s)
          if (!peers_[i].closed && !peers_[i].streams[s].closed) {
            fds.push_back({peers_[i].streams[s].connection.fd.get(), POLLIN, 0});
            owners.emplace_back(static_cast<int>(i), static_cast<int>(s));
          }
      if (fds.empty()) break;
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      const int ready = ::poll(fds.data(), fds.size(), static_cast<int>(std::clamp<long long>(left, 0, kPollSliceMs)));
      if (ready < 0 && errno != EINTR) break;
      for (size_t f = 0; ready > 0 && f < fds.size() && !heard_; ++f)
        if (fds[f].revents) {
          const auto [i, s] = owners[f];
          read_some(peers_[static_cast<size_t>(i)], peers_[static_cast<size_t>(i)].streams[static_cast<size_t>(s)], i,
                    s);
        }
    }
  } catch (...) {  // the streams failed or closed: no notice will come
  }
  awaiting_notice_ = false;
  return heard_;
}

bool StripedLinks::write_now(Stream &stream, const FrameHeader *header, const uint8_t *payload, size_t bytes,
                             Clock::time_point deadline) {
  const size_t tag_bytes = encrypted_ ? kTagBytes : 0;
  std::vector<uint8_t> out;
  if (stream.sending) {  // the rest of the frame under way
    std::vector<uint8_t> frame(stream.header.begin(), stream.header.end());
    frame.insert(frame.end(), stream.payload, stream.payload + stream.payload_bytes);
    if (tag_bytes) frame.insert(frame.end(), stream.tag.begin(), stream.tag.begin() + tag_bytes);
    out.assign(frame.begin() + static_cast<std::ptrdiff_t>(std::min(stream.written, frame.size())), frame.end());
    stream.sending = false;
  }
  if (header) {
    const HeaderBytes encoded = encode(*header);
    out.insert(out.end(), encoded.begin(), encoded.end());
    if (encrypted_) {
      std::vector<uint8_t> sealed(bytes);
      std::array<uint8_t, kTagBytes> tag{};
      stream.connection.sealer->seal(encoded.data(), encoded.size(), payload, bytes, sealed.data(), tag.data());
      out.insert(out.end(), sealed.begin(), sealed.end());
      out.insert(out.end(), tag.begin(), tag.end());
    } else {
      out.insert(out.end(), payload, payload + bytes);
    }
  }
  const int fd = stream.connection.fd.get();
  size_t sent = 0;
  while (sent < out.size()) {
    const ssize_t n = ::send(fd, out.data() + sent, out.size() - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      sent += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) return false;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return false;
    pollfd writable{fd, POLLOUT, 0};
    ::poll(&writable, 1, static_cast<int>(std::min<long long>(left, kPollSliceMs)));
  }
  return true;
}

}  // namespace xffl::comm::wan
