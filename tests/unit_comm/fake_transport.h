// PointToPoint without a network: members are threads of one process. Matching is UCX's: a receive
// takes the oldest message of its sender with the same step (the step is part of the UCX tag), and its
// size must agree. Sends are rendezvous, as UCX's large ones: a message stays in the sender's buffer
// until the receive takes it, and the send completes only then. So a schedule that writes a buffer it
// is still sending from, or frees it, before waiting for the send, delivers other bytes (and TSan and
// ASan see it); one that waits for a send its peer can only receive later hangs here as it would on
// UCX (the wait fails after 20 s instead). Like a UCX worker, any wait progresses every receive posted
// so far, not only the one awaited. Counts what each member sent, so tests can check a schedule's shape.
#ifndef XFFL_TESTS_UNIT_COMM_FAKE_TRANSPORT_H
#define XFFL_TESTS_UNIT_COMM_FAKE_TRANSPORT_H

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "comm/algorithms/point_to_point.h"
#include "common/error.h"

namespace fake {

using xffl::comm::algorithms::PointToPoint;
using xffl::comm::algorithms::RequestId;
using xffl::comm::algorithms::Step;

struct Message {
  const unsigned char *data = nullptr;  // the sender's buffer, read when a receive takes the message
  size_t bytes = 0;
  int step = 0;
  std::shared_ptr<bool> taken;  // set under the network's lock once a receive has copied it
};

class Network {
 public:
  explicit Network(int size) : size_(size), mailboxes_(static_cast<size_t>(size * size)) {}
  int size() const { return size_; }

  void put(int from, int to, Message message) {
    std::lock_guard<std::mutex> lock(mutex_);
    box(from, to).push_back(std::move(message));
    changed();
  }

  // Copies the oldest message from `from` to `to` with `step` into data, if one is there: whether it did.
  bool try_take(int from, int to, int step, void *data, size_t bytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto &mailbox = box(from, to);
    for (auto match = mailbox.begin(); match != mailbox.end(); ++match) {
      if (match->step != step) continue;
      if (match->bytes != bytes)
        (xffl::fail)(XFFL_EINTERNAL, "member ", to, " expected step ", step, " with ", bytes, " bytes from member ",
                     from, ", got ", match->bytes);
      if (bytes) std::memcpy(data, match->data, bytes);
      *match->taken = true;
      mailbox.erase(match);
      changed();
      return true;
    }
    return false;
  }

  bool taken(const std::shared_ptr<bool> &flag) {
    std::lock_guard<std::mutex> lock(mutex_);
    return *flag;
  }

  // A count that changes with every message put or taken.
  uint64_t generation() {
    std::lock_guard<std::mutex> lock(mutex_);
    return generation_;
  }
  // Waits until the generation differs from `seen`; false at the deadline.
  bool wait_for_change(uint64_t seen, std::chrono::steady_clock::time_point deadline) {
    std::unique_lock<std::mutex> lock(mutex_);
    return changed_.wait_until(lock, deadline, [&] { return generation_ != seen; });
  }

  bool all_empty() {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto &mailbox : mailboxes_)
      if (!mailbox.empty()) return false;
    return true;
  }

 private:
  std::deque<Message> &box(int from, int to) { return mailboxes_[static_cast<size_t>(from * size_ + to)]; }
  void changed() {
    ++generation_;
    changed_.notify_all();
  }
  int size_;
  std::mutex mutex_;
  std::condition_variable changed_;
  uint64_t generation_ = 0;
  std::vector<std::deque<Message>> mailboxes_;
};

class Transport final : public PointToPoint {
 public:
  Transport(Network &network, int index)
      : bytes_sent_to(static_cast<size_t>(network.size()), 0), network_(network), index_(index) {}
  int size() const override { return network_.size(); }
  int index() const override { return index_; }

  RequestId send(int peer, const void *data, size_t bytes, Step step) override {
    check_step(step);
    Message message;
    message.data = static_cast<const unsigned char *>(data);
    message.bytes = bytes;
    message.step = step.index;
    message.taken = std::make_shared<bool>(false);
    requests_.push_back(Pending{peer, nullptr, bytes, step, true, false, message.taken});
    network_.put(index_, peer, std::move(message));
    ++messages_sent;
    bytes_sent += bytes;
    bytes_sent_to.at(static_cast<size_t>(peer)) += bytes;
    if (bytes > largest_message) largest_message = bytes;
    if (step.index + 1 > steps_seen) steps_seen = step.index + 1;
    return requests_.size() - 1;
  }

  RequestId recv(int peer, void *data, size_t bytes, Step step) override {
    check_step(step);
    requests_.push_back(Pending{peer, data, bytes, step, false, false, nullptr});
    return requests_.size() - 1;
  }

  void wait(RequestId id) override {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    for (;;) {
      const uint64_t seen = network_.generation();
      progress();
      Pending &request = requests_[id];
      if (request.is_send && !request.done && network_.taken(request.taken)) request.done = true;
      if (request.done) return;
      if (!network_.wait_for_change(seen, deadline))
        (xffl::fail)(XFFL_ETIMEOUT, "fake network: member ", index_, " waited 20 s for its ",
                     request.is_send ? "send to" : "receive from", " member ", request.peer, " step ",
                     request.step.index);
    }
  }

  void wait_all() override {
    for (size_t k = 0; k < requests_.size(); ++k) wait(k);
  }

  size_t messages_sent = 0;
  size_t bytes_sent = 0;
  std::vector<size_t> bytes_sent_to;  // by peer
  size_t largest_message = 0;
  int steps_seen = 0;
  int declared_total = 0;

 private:
  struct Pending {
    int peer;
    void *data;
    size_t bytes;
    Step step;
    bool is_send;
    bool done;
    std::shared_ptr<bool> taken;  // sends
  };

  void check_step(Step step) {
    if (step.index < 0 || step.index >= step.total)
      (xffl::fail)(XFFL_EINTERNAL, "member ", index_, ": step ", step.index, " outside total ", step.total);
    declared_total = step.total;
  }

  // Takes every message that has arrived for a receive posted so far, oldest receive first for each
  // sender and step (messages of one sender and step match in the order both sides posted them).
  void progress() {
    std::set<std::pair<int, int>> blocked;  // (sender, step) whose oldest pending receive found nothing yet
    for (; first_pending_ < requests_.size() && requests_[first_pending_].done; ++first_pending_) {
    }
    for (size_t k = first_pending_; k < requests_.size(); ++k) {
      Pending &request = requests_[k];
      if (request.is_send || request.done) continue;
      const std::pair<int, int> key{request.peer, request.step.index};
      if (blocked.count(key)) continue;
      if (network_.try_take(request.peer, index_, request.step.index, request.data, request.bytes))
        request.done = true;
      else
        blocked.insert(key);
    }
  }

  Network &network_;
  int index_;
  std::vector<Pending> requests_;
  size_t first_pending_ = 0;  // requests before it are all done
};

struct Stats {
  size_t messages_sent = 0;
  size_t bytes_sent = 0;
  std::vector<size_t> bytes_sent_to;  // by peer
  size_t largest_message = 0;
  int steps_seen = 0;
  int declared_total = 0;
};

// Runs body(transport) on n threads; returns the first error message ("" when all succeeded).
inline std::string run_members(int n, const std::function<void(Transport &)> &body,
                               std::vector<Stats> *stats = nullptr) {
  Network network(n);
  std::vector<Transport> transports;
  for (int i = 0; i < n; ++i) transports.emplace_back(network, i);
  std::vector<std::string> errors(static_cast<size_t>(n));
  std::vector<std::thread> threads;
  for (int i = 0; i < n; ++i)
    threads.emplace_back([&, i] {
      try {
        body(transports[static_cast<size_t>(i)]);
      } catch (const std::exception &error) {
        errors[static_cast<size_t>(i)] = error.what();
      }
    });
  for (auto &thread : threads) thread.join();
  if (!network.all_empty()) return "messages left undelivered";
  if (stats) {
    stats->clear();
    for (const Transport &t : transports)
      stats->push_back(Stats{t.messages_sent, t.bytes_sent, t.bytes_sent_to, t.largest_message, t.steps_seen, t.declared_total});
  }
  for (const auto &error : errors)
    if (!error.empty()) return error;
  return "";
}

}  // namespace fake

#endif
