// How a backend publishes and looks up small blobs (UCX worker addresses, NCCL ids) during bring-up.
// The rendezvous store (bootstrap/) implements it; tests use an in-memory one.
#ifndef XFFL_SRC_COMM_EXCHANGE_H
#define XFFL_SRC_COMM_EXCHANGE_H

#include <cstdint>
#include <string>
#include <vector>

namespace xffl::comm {

class Exchange {
 public:
  virtual ~Exchange() = default;
  // Stores value under key for every rank of the job to read. Keys are written once.
  virtual void publish(const std::string &key, const std::vector<uint8_t> &value) = 0;
  // Waits until key exists, at most timeout_ms; throws xffl::Error(XFFL_ETIMEOUT) naming the key and
  // what was awaited, or XFFL_ENETWORK / XFFL_EPEER when the store is gone.
  virtual std::vector<uint8_t> fetch(const std::string &key, int timeout_ms) = 0;
  // Ranks of the job known to have left (their store connection closed), ascending; waits at most
  // timeout_ms for the answer; throws like fetch when the store is gone (XFFL_EPEER / XFFL_ENETWORK
  // naming it). Backends use it to name peers that left on other hosts, where /proc cannot see them.
  // The default (exchanges that cannot tell, such as the tests' in-memory ones) knows of none.
  virtual std::vector<int> departed_ranks(int timeout_ms) {
    (void)timeout_ms;
    return {};
  }
};

}  // namespace xffl::comm

#endif
