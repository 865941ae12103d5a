// Error feedback (XFFL_OPT_ERROR_FEEDBACK): each buffer's quantisation residual, carried into that
// buffer's next federated average, so that what one round's wire format rounds away is sent in a
// later round instead of lost (the sum of what crossed tracks the sum of the inputs).
//
// Residuals are keyed by the call's layout: the list of (address, count) of its buffers (one for
// xffl_federated_average, the whole list for _many); within a call, the k-th WAN hop (a bucket of
// _many, or a large buffer) uses the k-th residual. A call whose list shares an address with a stored
// list of a different layout drops that list's residuals (the buffer changed its count or company);
// a change of wire format drops them all. One f32 copy per averaged value, on ranks that cross.
#ifndef XFFL_SRC_FEDERATED_WIRE_ERROR_FEEDBACK_H
#define XFFL_SRC_FEDERATED_WIRE_ERROR_FEEDBACK_H

#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

#include "xffl/types.h"

namespace xffl::federated::wire {

class ErrorFeedback {
 public:
  // Starts one average over `count` buffers (addresses and counts), in `format`.
  void begin(const void *const *bufs, const size_t *counts, size_t n, xffl_wire_format_t format);
  // The residual of this call's next WAN hop of `count` values: zeros the first time, else what the
  // last call's hop at this position left (zeros again if its count differs).
  std::vector<float> &next(size_t count);
  // For a call that may be done again (a round redone among the survivors under
  // XFFL_FACILITY_FAULTS_CONTINUE, state/facility_rounds.h): save() copies the residuals of the call
  // begun last, as begin() found them; restore() puts that copy back and rewinds to the call's first
  // hop, so the next hop starts from the residual the call started from, however many hops the failed
  // attempt made. The copy (the call's residuals' size: 4 bytes per value) is kept until forget_saved(),
  // the next begin() or clear(). restore() without save() only rewinds.
  void save();
  void restore();
  void forget_saved();
  // An average whose outcome this facility did not learn in time (state/facility_rounds.h: it acked
  // its round, then the store stopped answering it): the others may have counted what it sent, or
  // redone the round without it. set_aside() keeps a copy of the residuals of the call begun last as
  // its attempt left them (call it before restore() puts back those the call started from); once the
  // outcome is known, settle() applies it to that layout's residuals: Counted, the set-aside copy
  // replaces them (what was sent counted: its residual is the one to carry); NotCounted, they stay as
  // restored; Unknown, they become zeros (neither copy: no residual is ever sent twice, and at most
  // one round's rounding is not carried). When the layout settled is the current call's, its saved
  // copy (save()) changes alike. The set-aside copy (4 bytes per value of that call) is kept until
  // settle(), another set_aside() or clear().
  enum class Settlement { Counted, NotCounted, Unknown };
  void set_aside();
  void settle(Settlement outcome);
  bool has_set_aside() const { return has_aside_; }
  // Drops every residual (the option turned off, the layout unset).
  void clear();
  // Bytes held, for tests and messages.
  size_t bytes() const;

 private:
  using Key = std::vector<uintptr_t>;  // address, count, address, count, ...
  std::map<Key, std::vector<std::vector<float>>> residuals_;
  xffl_wire_format_t format_ = XFFL_WIRE_F32;
  std::vector<std::vector<float>> *current_ = nullptr;
  size_t next_hop_ = 0;
  std::vector<std::vector<float>> saved_;  // save()'s copy of *current_
  bool has_saved_ = false;
  Key current_key_;                        // the key of *current_
  std::vector<std::vector<float>> aside_;  // set_aside()'s copy, of the layout aside_key_
  Key aside_key_;
  bool has_aside_ = false;
};

}  // namespace xffl::federated::wire

#endif
