// How a backend publishes and looks up small blobs (UCX worker addresses, NCCL ids) during bring-up.
// The rendezvous store (bootstrap/) implements it; tests use an in-memory one.
#ifndef XFFL_SRC_COMM_EXCHANGE_H
#define XFFL_SRC_COMM_EXCHANGE_H

#include <cstdint>
#include <string>
#include <vector>

namespace xffl::comm {

// A process group's identity from the job's one authority (bootstrap/group_registry.h): slot is
// unique among the job's live process groups, below 2^19 (backends put it in their tag space); serial
// is unique for the whole job (it keys what a backend publishes for the group).
struct GroupIdentity {
  uint32_t slot = 0;
  uint64_t serial = 0;
};

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
  // The identity of the creation-th group (from 0) of these members (sorted, distinct) on this rank:
  // every member that claims it gets the same, and no other live group has its slot. Waits at most
  // timeout_ms; throws XFFL_ENOMEM when every slot is live, XFFL_EINVAL when members disagree on the
  // member count, and like fetch when the store is gone.
  virtual GroupIdentity claim_group(const std::vector<int> &sorted_members, uint32_t creation, int timeout_ms) = 0;
  // This rank is done with the group of this slot. Never blocks and never throws: a release that
  // cannot be delivered leaves the slot live (the job has 2^19 of them).
  virtual void release_group(uint32_t slot) noexcept = 0;
};

}  // namespace xffl::comm

#endif
