// Federated averaging (DESIGN.md section 5) as strategies behind one interface: HIERARCHICAL and FLAT
// are one file each (hierarchical.cpp, flat.cpp); the state picks one by XFFL_OPT_FEDERATED_STRATEGY from
// its StrategyTable (registry.h). A strategy knows nothing of the state: it is handed this rank's
// numbers from the plan (Placement) and the groups' communicators (Groups), and decides its roles
// (which groups it uses, who sends), its weights rule and its schedule (the order of the collectives).
#ifndef XFFL_SRC_FEDERATED_STRATEGY_H
#define XFFL_SRC_FEDERATED_STRATEGY_H

#include <cstddef>
#include <vector>

#include "comm/communicator.h"
#include "xffl/types.h"

namespace xffl::federated {

namespace wire {
class ErrorFeedback;  // federated/wire/error_feedback.h
class HopScratch;     // federated/wire/hop_scratch.h
}

// This rank's numbers from the plan, the same kind on every rank.
struct Placement {
  int federated_groups = 1;  // G
  int federated_rank = 0;    // f: this rank's federated group
  bool is_sender = true;     // this rank crosses facilities (every rank without HSDP)
  bool hsdp = false;         // the layout has REPLICA groups
  int sender_index = 0;      // with hsdp: this rank's sender among its REPLICA members
  std::vector<int> federated_sizes;  // the ranks of each federated group (federated_local_size)
  std::vector<double> weights;       // FedAvg weight of each federated group; empty for the plain mean
};

// The groups' communicators, made when first asked for: a strategy asks only for those it uses (making
// one may check the stream, or be a collective of the group's family).
class Groups {
 public:
  virtual ~Groups() = default;
  // This rank's FEDERATED group instance (a group of one for a non-sender of an asymmetric layout).
  virtual comm::Communicator &federated() = 0;
  // This rank's REPLICA group (only with Placement::hsdp).
  virtual comm::Communicator &replica() = 0;
};

// This rank's part in one average, as a strategy's roles() decides it and its schedule reads it.
struct Roles {
  // The FEDERATED group instance; always set: the buckets of average_many live in its memory.
  comm::Communicator *federated = nullptr;
  comm::Communicator *replica = nullptr;  // REPLICA group where the strategy relays through it, else null
  bool is_sender = true;
  int sender_index = 0;      // index of this rank's sender among the REPLICA members
  int federated_groups = 1;  // G: the size of every sender's FEDERATED group
  int federated_rank = 0;    // f: this rank's federated group, its sender's index in the FEDERATED group
  // Factor applied to this rank's copy before the cross-group reduction (weights.h). 1: none.
  double weight_factor = 1.0;
  bool weighted = false;  // weights are set (the same on every rank, unlike weight_factor)
  // The WAN hop (federated/wire/wan_hop.h), set by the state after roles(): XFFL_OPT_WIRE_FORMAT, the
  // residuals of XFFL_OPT_ERROR_FEEDBACK (null when off), and whether the buffers are device memory
  // (NCCL), where only F32 crosses unless the crossing groups run on a host backend (host_crossing:
  // comm::Backend::crossing_on_host, the same on every rank), whose staging the compressed hop uses.
  xffl_wire_format_t wire_format = XFFL_WIRE_F32;
  wire::ErrorFeedback *error_feedback = nullptr;
  wire::HopScratch *hop_scratch = nullptr;  // the state's, kept between averages; null: one per hop
  bool device_memory = false;
  bool host_crossing = false;
};

class Strategy {
 public:
  virtual ~Strategy() = default;

  // Which groups this rank uses, who sends, the weights rule: from the plan's numbers, asking `groups`
  // for the communicators it uses. Refuses (xffl::Error) a layout it cannot average: the same answer
  // on every rank, before any message.
  virtual Roles roles(const Placement &placement, Groups &groups) const = 0;

  // In place: afterwards every copy of the shard holds the mean over federated groups (or whatever the
  // strategy defines). check(), then schedule(). On failure the buffer's content is unspecified (as
  // with any failed collective).
  void average(const Roles &roles, void *buf, size_t count, xffl_dtype_t dtype, void *stream) const;
  // Several buffers: check(), then schedule_many().
  void average_many(const Roles &roles, void *const *bufs, const size_t *counts, size_t n, xffl_dtype_t dtype,
                    void *stream) const;

 protected:
  // Refuses what the roles cannot average, on every rank before any message (were only some ranks to
  // refuse, the others would wait until the timeout). Default: weights need a floating-point dtype.
  virtual void check(const Roles &roles, xffl_dtype_t dtype) const;
  // One buffer, in place.
  virtual void schedule(const Roles &roles, void *buf, size_t count, xffl_dtype_t dtype, void *stream) const = 0;
  // Several buffers. Default: buffers smaller than a bucket (16 MiB) are coalesced into buckets in the
  // federated communicator's memory and each bucket goes through schedule(); larger ones are averaged
  // in place (buckets.h).
  virtual void schedule_many(const Roles &roles, void *const *bufs, const size_t *counts, size_t n,
                             xffl_dtype_t dtype, void *stream) const;
};

// A strategy with this rank's roles: what one call of xffl_federated_average(_many) runs.
struct Averaging {
  const Strategy *strategy = nullptr;
  Roles roles;

  void average(void *buf, size_t count, xffl_dtype_t dtype, void *stream) const {
    begin_error_feedback(&buf, &count, 1);
    strategy->average(roles, buf, count, dtype, stream);
  }
  void average_many(void *const *bufs, const size_t *counts, size_t n, xffl_dtype_t dtype, void *stream) const {
    begin_error_feedback(bufs, counts, n);
    strategy->average_many(roles, bufs, counts, n, dtype, stream);
  }
  // Tells the residuals of error feedback which buffers this call averages (wire/error_feedback.h).
  void begin_error_feedback(void *const *bufs, const size_t *counts, size_t n) const;
};

}  // namespace xffl::federated

#endif
