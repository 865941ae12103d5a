// An in-memory comm::Exchange shared by threads acting as ranks (unit tests of the backends).
#ifndef XFFL_TESTS_COMMON_MEMORY_EXCHANGE_H
#define XFFL_TESTS_COMMON_MEMORY_EXCHANGE_H

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "bootstrap/group_registry.h"
#include "comm/exchange.h"
#include "common/error.h"

namespace xffl_test {

class MemoryExchange final : public xffl::comm::Exchange {
 public:
  void publish(const std::string &key, const std::vector<uint8_t> &value) override {
    std::lock_guard<std::mutex> lock(mutex_);
    values_[key] = value;
    published_.notify_all();
  }
  std::vector<uint8_t> fetch(const std::string &key, int timeout_ms) override {
    std::unique_lock<std::mutex> lock(mutex_);
    if (!published_.wait_for(lock, std::chrono::milliseconds(timeout_ms), [&] { return values_.count(key) > 0; }))
      (xffl::fail)(XFFL_ETIMEOUT, "timed out after ", timeout_ms, " ms waiting for key ", key, " in the test exchange");
    return values_[key];
  }
  // One registry for every thread acting as a rank, as the store is one for every rank.
  xffl::comm::GroupIdentity claim_group(const std::vector<int> &members, uint32_t creation, int timeout_ms) override {
    (void)timeout_ms;
    std::lock_guard<std::mutex> lock(mutex_);
    auto claim = groups_.claim(xffl::bootstrap::GroupRegistry::key(members, creation),
                               static_cast<uint32_t>(members.size()));
    if (!claim) (xffl::fail)(XFFL_ENOMEM, "the test exchange has no process-group slot left");
    return xffl::comm::GroupIdentity{claim->slot, claim->serial};
  }
  void release_group(uint32_t slot) noexcept override {
    std::lock_guard<std::mutex> lock(mutex_);
    groups_.release(slot);
  }

 private:
  xffl::bootstrap::GroupRegistry groups_;
  std::mutex mutex_;
  std::condition_variable published_;
  std::map<std::string, std::vector<uint8_t>> values_;
};

}  // namespace xffl_test

#endif
