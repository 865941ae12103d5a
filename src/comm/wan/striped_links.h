// PointToPoint (comm/algorithms/point_to_point.h) over the cross-facility streams of one group: each
// pair of members holds N authenticated TCP streams (WanHub), made on the pair's first message (the
// lower global rank dials, unless the higher one does not listen, or both meet at a relay:
// WanHub::route). A message is cut into frames (framing.h) that go to whichever stream can take one
// (its socket accepts bytes), so a slow stream carries fewer frames instead of holding the
// others back; the receiver places each frame by offset. Messages between two members are matched in
// the order posted within each step of each call (message_key); a frame for a receive not posted yet
// is kept.
//
// Progress happens inside wait() (one thread drives a backend): it polls every stream and the hub's
// listener, so connections of other groups are accepted while this one waits. send() also makes one
// pass that does not wait, so a message starts to leave when it is posted. Every wait is bounded by
// the timeout; errors name this rank, the operation, the group, the peer and what was awaited. A peer
// whose stream closes is XFFL_EPEER; a frame that fails authentication is XFFL_EAUTH. After an error
// every stream is closed and the object is unusable: no caller buffer is touched later.
//
// Members that call with different arguments (call_arguments.h): the member that finds a message of
// another size than it expected, or a frame whose call check (framing.h) differs from its call's,
// sends a notice frame (its own arguments; step kNoticeStep of the call's key) to every member it is
// connected to, and waits briefly (kNoticeWaitMs at most) for the other side's notice; a member that
// receives a notice with other arguments than its own answers with its own notice first. Each
// returns XFFL_EINVAL naming both members and both values; a notice that comes after this member's
// part of the call completed fails its next call on the group.
#ifndef XFFL_SRC_COMM_WAN_STRIPED_LINKS_H
#define XFFL_SRC_COMM_WAN_STRIPED_LINKS_H

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "comm/algorithms/point_to_point.h"
#include "comm/wan/call_arguments.h"
#include "comm/wan/framing.h"
#include "comm/wan/wan_hub.h"

namespace xffl::comm::wan {

class StripedLinks final : public algorithms::PointToPoint {
 public:
  // members: global ranks; description: "federated group (instance 0)".
  StripedLinks(std::shared_ptr<WanHub> hub, std::vector<int> members, int my_index, GroupKey group,
               std::string description);
  ~StripedLinks() override;

  // The operation the next messages belong to, for messages ("allreduce"), and its arguments as every
  // member must give them.
  void begin(const char *operation, const CallSignature &arguments);

  int size() const override { return static_cast<int>(members_.size()); }
  int index() const override { return my_index_; }
  algorithms::RequestId send(int peer, const void *data, size_t bytes, algorithms::Step step) override;
  algorithms::RequestId recv(int peer, void *data, size_t bytes, algorithms::Step step) override;
  void wait(algorithms::RequestId request) override;
  void wait_all() override;

  // Closes every stream (after an error).
  void close() noexcept;

 private:
  struct OutMessage {
    const uint8_t *data = nullptr;
    size_t bytes = 0;
    size_t next_offset = 0;   // first byte not yet handed to a stream
    int frames_in_flight = 0; // handed to a stream, not yet written out
    bool first_frame_sent = false;
    algorithms::RequestId request = 0;
  };
  struct InMessage {
    uint8_t *data = nullptr;  // the posted receive; null until posted
    size_t capacity = 0;
    bool posted = false;
    size_t received = 0;
    uint64_t total = 0;
    bool total_known = false;
    std::vector<uint8_t> early;  // frames that came before the receive was posted
    uint8_t call_check = 0;      // of its first frame (framing.h)
    algorithms::RequestId request = 0;
  };
  struct Stream {
    Connection connection;
    // Sending: the frame being written (header, then payload or its ciphertext, then the tag).
    bool sending = false;
    uint64_t message = 0;
    HeaderBytes header{};
    const uint8_t *payload = nullptr;
    size_t payload_bytes = 0;
    std::vector<uint8_t> sealed;  // ciphertext and tag, with encryption
    std::array<uint8_t, 16> tag{};
    size_t written = 0;  // of header + payload (+ tag)
    // Receiving: the frame being read into `incoming` (header, payload, tag).
    std::vector<uint8_t> incoming;
    size_t read = 0;
    FrameHeader frame;
    bool have_header = false;
    bool closed = false;  // the peer closed it between frames
  };
  struct Peer {
    int rank = 0;  // global
    bool accepts = false;  // the peer dials this rank, or a relay pairs us (WanHub::route): progress() claims the streams
    std::vector<Stream> streams;
    bool connected = false;
    std::string relay;  // "host:port" of the relay its streams run through; empty: direct
    bool closed = false;  // the peer closed its streams with nothing of ours pending
    // Messages posted so far in this call, per step: the index part of the next one's key.
    std::map<int, uint32_t> sent, received;
    std::map<uint64_t, OutMessage> outbox;
    std::map<uint64_t, InMessage> inbox;
  };
  struct Request {
    bool done = false;
    bool is_send = false;
    int peer = 0;  // member index
    size_t bytes = 0;
    algorithms::Step step;
  };

  Peer &peer(int index, const char *what);
  static bool has_pending(const Peer &p);
  // A message's key, the same on both sides: the call's number, the step and the message's place among
  // those of that step between the two (the schedules rely on the order within a step only, as UCX's
  // tags give it). Advances `counts`.
  uint64_t message_key(algorithms::Step step, std::map<int, uint32_t> &counts);
  static std::string pending_text(const Peer &p);
  // What a stream closed under us asks: the peer, or the relay between (where() names it).
  static std::string fail_question(const Peer &p);  // "1 send(s) and 0 receive(s) of this rank" 
  void connect(int index, Clock::time_point deadline);
  // One round of polling, at most until `deadline`: accepts, reads, writes.
  void progress(Clock::time_point deadline, int awaited);
  bool take_frame(Peer &peer, Stream &stream);
  void write_some(Peer &peer, Stream &stream, int index, int stream_index);
  void read_some(Peer &peer, Stream &stream, int index, int stream_index);
  void deliver(Peer &peer, Stream &stream, int index, int stream_index);
  void complete(algorithms::RequestId request) { requests_.at(request).done = true; }
  [[noreturn]] void failure(xffl_status_t status, int index, const std::string &what);
  // A message of `came` bytes from member `index` where `expected` were expected (both 0: a message of
  // a call with other arguments, by its call check): notices, then EINVAL.
  [[noreturn]] void mismatch(int index, uint64_t came, uint64_t expected);
  // A notice frame came from member `index`: answers it when the arguments differ, then EINVAL.
  [[noreturn]] void on_notice(int index, const MismatchNotice &notice);
  // When a member that waits for the other side's notice stops waiting.
  Clock::time_point notice_deadline() const;
  // Sends this rank's notice to every connected member once, each write bounded by `deadline`; best
  // effort (a member that cannot take it gets the closed streams instead).
  void send_notice(const MismatchNotice &notice, Clock::time_point deadline) noexcept;
  // Reads frames until a notice comes from a member other than this one, its streams all close, or
  // the deadline passes; data frames are dropped.
  std::optional<MismatchNotice> await_notice(Clock::time_point deadline) noexcept;
  // Writes the rest of the frame a stream is sending, then (when given) one more frame, blocking up to
  // deadline. False when the stream could not take it.
  bool write_now(Stream &stream, const FrameHeader *header, const uint8_t *payload, size_t bytes,
                 Clock::time_point deadline);
  std::string where(int index) const;
  // "; the relay at ... did not pair ..." while a relayed stream of member `index` is being made; "".
  std::string relay_awaited(int index) const;

  std::shared_ptr<WanHub> hub_;
  std::vector<int> members_;
  int my_index_ = 0;
  GroupKey group_;
  std::string description_;
  const char *operation_ = "collective";
  uint32_t call_ = 0;  // collectives begun
  CallSignature arguments_, last_arguments_;  // this call's and the one before
  uint8_t call_check_ = 0;                     // signature_bits(arguments_)
  bool notice_sent_ = false;       // this rank told the members of a mismatch: the object is done
  bool awaiting_notice_ = false;   // inside await_notice: frames are read for notices only
  std::optional<MismatchNotice> heard_;  // a notice await_notice read
  std::vector<Peer> peers_;
  std::vector<Request> requests_;
  bool encrypted_ = false;
};

}  // namespace xffl::comm::wan

#endif
