// Where the fake backend's thread-ranks meet: one Meeting per group (by tag and members), shared by
// the threads of this process. Each collective is two bounded rounds: every member shows its input,
// each computes its own result from all inputs, and nobody leaves before everyone has read.
#ifndef XFFL_TESTS_UNIT_FAKE_BACKEND_FAKE_FABRIC_H
#define XFFL_TESTS_UNIT_FAKE_BACKEND_FAKE_FABRIC_H

#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "common/error.h"

namespace fake {

class Meeting {
 public:
  explicit Meeting(int size) : inputs_(static_cast<size_t>(size)) {}

  // Shows `input` as member `index`'s and returns every member's, once all have shown theirs.
  const std::vector<const void *> &show(int index, const void *input, int timeout_ms, const std::string &who) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      inputs_[static_cast<size_t>(index)] = input;
    }
    round(timeout_ms, who, "every member's input");
    return inputs_;
  }
  // Returns once every member has read the inputs (they may then change).
  void done(int timeout_ms, const std::string &who) { round(timeout_ms, who, "every member to finish reading"); }

 private:
  void round(int timeout_ms, const std::string &who, const char *awaited) {
    std::unique_lock<std::mutex> lock(mutex_);
    const unsigned long long generation = generation_;
    if (++arrived_ == inputs_.size()) {
      arrived_ = 0;
      ++generation_;
      changed_.notify_all();
      return;
    }
    if (!changed_.wait_for(lock, std::chrono::milliseconds(timeout_ms), [&] { return generation_ != generation; }))
      (xffl::fail)(XFFL_ETIMEOUT, who, ": timed out after ", timeout_ms, " ms waiting for ", awaited);
  }

  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<const void *> inputs_;
  size_t arrived_ = 0;
  unsigned long long generation_ = 0;
};

// The process's meetings: the same group (tag and members) on every thread-rank gets the same one.
inline std::shared_ptr<Meeting> meeting(unsigned long long tag, const std::vector<int> &members) {
  static std::mutex mutex;
  static std::map<std::pair<unsigned long long, std::vector<int>>, std::shared_ptr<Meeting>> meetings;
  std::lock_guard<std::mutex> lock(mutex);
  auto &found = meetings[{tag, members}];
  if (!found) found = std::make_shared<Meeting>(static_cast<int>(members.size()));
  return found;
}

}  // namespace fake

#endif
