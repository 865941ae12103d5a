// PointToPoint without a network: members are threads of one process and messages are copied
// through mailboxes, one per (sender, receiver). Sends complete at once. Matching is UCX's: a
// receive takes the oldest message of its sender with the same step (the step is part of the UCX
// tag), and its size must agree. Counts what each member sent, so tests can check a schedule's shape.
#ifndef XFFL_TESTS_UNIT_COMM_FAKE_TRANSPORT_H
#define XFFL_TESTS_UNIT_COMM_FAKE_TRANSPORT_H

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "comm/algorithms/point_to_point.h"
#include "common/error.h"

namespace fake {

using xffl::comm::algorithms::PointToPoint;
using xffl::comm::algorithms::RequestId;
using xffl::comm::algorithms::Step;

struct Message {
  std::vector<unsigned char> bytes;
  int step = 0;
};

class Network {
 public:
  explicit Network(int size) : size_(size), mailboxes_(static_cast<size_t>(size * size)) {}
  int size() const { return size_; }

  void put(int from, int to, Message message) {
    std::lock_guard<std::mutex> lock(mutex_);
    box(from, to).push_back(std::move(message));
    arrived_.notify_all();
  }

  Message take(int from, int to, int step) {
    std::unique_lock<std::mutex> lock(mutex_);
    auto &mailbox = box(from, to);
    auto match = mailbox.end();
    auto found = [&] {
      for (match = mailbox.begin(); match != mailbox.end(); ++match)
        if (match->step == step) return true;
      return false;
    };
    if (!arrived_.wait_for(lock, std::chrono::seconds(20), found))
      (xffl::fail)(XFFL_ETIMEOUT, "fake network: member ", to, " waited 20 s for member ", from, " step ", step);
    Message message = std::move(*match);
    mailbox.erase(match);
    return message;
  }

  bool all_empty() {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto &mailbox : mailboxes_)
      if (!mailbox.empty()) return false;
    return true;
  }

 private:
  std::deque<Message> &box(int from, int to) { return mailboxes_[static_cast<size_t>(from * size_ + to)]; }
  int size_;
  std::mutex mutex_;
  std::condition_variable arrived_;
  std::vector<std::deque<Message>> mailboxes_;
};

class Transport final : public PointToPoint {
 public:
  Transport(Network &network, int index) : network_(network), index_(index) {}
  int size() const override { return network_.size(); }
  int index() const override { return index_; }

  RequestId send(int peer, const void *data, size_t bytes, Step step) override {
    check_step(step);
    Message message;
    message.bytes.assign(static_cast<const unsigned char *>(data), static_cast<const unsigned char *>(data) + bytes);
    message.step = step.index;
    network_.put(index_, peer, std::move(message));
    ++messages_sent;
    bytes_sent += bytes;
    if (bytes > largest_message) largest_message = bytes;
    if (step.index + 1 > steps_seen) steps_seen = step.index + 1;
    requests_.push_back(Pending{peer, nullptr, bytes, step, true, true});
    return requests_.size() - 1;
  }

  RequestId recv(int peer, void *data, size_t bytes, Step step) override {
    check_step(step);
    requests_.push_back(Pending{peer, data, bytes, step, false, false});
    return requests_.size() - 1;
  }

  void wait(RequestId id) override {
    // Messages of one sender and step match in order: complete the earlier such receives first.
    while (!requests_[id].done) {
      size_t oldest = id;
      for (size_t k = 0; k < id; ++k)
        if (!requests_[k].done && !requests_[k].is_send && requests_[k].peer == requests_[id].peer &&
            requests_[k].step.index == requests_[id].step.index) {
          oldest = k;
          break;
        }
      deliver(requests_[oldest]);
    }
  }

  void wait_all() override {
    for (size_t k = 0; k < requests_.size(); ++k) wait(k);
  }

  size_t messages_sent = 0;
  size_t bytes_sent = 0;
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
  };

  void check_step(Step step) {
    if (step.index < 0 || step.index >= step.total)
      (xffl::fail)(XFFL_EINTERNAL, "member ", index_, ": step ", step.index, " outside total ", step.total);
    declared_total = step.total;
  }

  void deliver(Pending &pending) {
    Message message = network_.take(pending.peer, index_, pending.step.index);
    if (message.bytes.size() != pending.bytes)
      (xffl::fail)(XFFL_EINTERNAL, "member ", index_, " expected step ", pending.step.index, " with ", pending.bytes,
                 " bytes from member ", pending.peer, ", got step ", message.step, " with ", message.bytes.size());
    if (pending.bytes) std::memcpy(pending.data, message.bytes.data(), pending.bytes);
    pending.done = true;
  }

  Network &network_;
  int index_;
  std::vector<Pending> requests_;
};

struct Stats {
  size_t messages_sent = 0;
  size_t bytes_sent = 0;
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
      stats->push_back(Stats{t.messages_sent, t.bytes_sent, t.largest_message, t.steps_seen, t.declared_total});
  }
  for (const auto &error : errors)
    if (!error.empty()) return error;
  return "";
}

}  // namespace fake

#endif
