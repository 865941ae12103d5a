// Error feedback's residual store (federated/wire/error_feedback.h): residuals per layout and per hop,
// dropped when the format, a count or the list of buffers changes; the property it exists for: over
// many rounds, what crossed sums to what was meant, within one round's error; and a call done again (a
// round redone among the survivors under XFFL_FACILITY_FAULTS_CONTINUE) starting from the residual the
// call started from, through the WAN hop itself (wan_hop.h) over a communicator that fails on demand.
#include <cmath>
#include <cstring>
#include <vector>

#include "common/error.h"
#include "comm/communicator.h"
#include "federated/strategy.h"
#include "federated/wire/error_feedback.h"
#include "federated/wire/hop_scratch.h"
#include "federated/wire/wan_hop.h"
#include "federated/wire/wire_format.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

extern "C" {  // Debian's cmocka.h declares its functions without C linkage for C++
#include <cmocka.h>
}

using namespace xffl::federated::wire;

namespace {

void begin_one(ErrorFeedback &feedback, void *buf, size_t count, xffl_wire_format_t format) {
  feedback.begin(&buf, &count, 1, format);
}

void test_residuals_kept_per_buffer_and_hop(void **) {
  ErrorFeedback feedback;
  float a[4], b[8];
  begin_one(feedback, a, 4, XFFL_WIRE_INT8_BLOCK);
  feedback.next(4)[0] = 1.0f;
  begin_one(feedback, b, 8, XFFL_WIRE_INT8_BLOCK);
  feedback.next(8)[0] = 2.0f;
  begin_one(feedback, a, 4, XFFL_WIRE_INT8_BLOCK);
  assert_true(feedback.next(4)[0] == 1.0f);  // a's own residual, b's kept apart
  begin_one(feedback, b, 8, XFFL_WIRE_INT8_BLOCK);
  assert_true(feedback.next(8)[0] == 2.0f);
  assert_int_equal(feedback.bytes(), 12 * sizeof(float));

  // Several hops of one call (buckets of _many): one residual each, in order.
  void *bufs[] = {a, b};
  size_t counts[] = {4, 8};
  feedback.begin(bufs, counts, 2, XFFL_WIRE_INT8_BLOCK);  // shares a and b: their single layouts go
  assert_int_equal(feedback.bytes(), 0);
  feedback.next(3)[0] = 5.0f;
  feedback.next(9)[0] = 6.0f;
  feedback.begin(bufs, counts, 2, XFFL_WIRE_INT8_BLOCK);
  assert_true(feedback.next(3)[0] == 5.0f);
  assert_true(feedback.next(9)[0] == 6.0f);
}

void test_changes_drop_residuals(void **) {
  ErrorFeedback feedback;
  float a[4];
  begin_one(feedback, a, 4, XFFL_WIRE_INT8_BLOCK);
  feedback.next(4)[1] = 1.0f;
  begin_one(feedback, a, 3, XFFL_WIRE_INT8_BLOCK);  // a new count at the same address
  assert_true(feedback.next(3)[1] == 0.0f);
  assert_int_equal(feedback.bytes(), 3 * sizeof(float));
  feedback.next(3);  // (a second hop of the same call)
  begin_one(feedback, a, 3, XFFL_WIRE_BF16);  // a new format
  assert_int_equal(feedback.bytes(), 0);
  feedback.next(3)[0] = 1.0f;
  feedback.clear();
  assert_int_equal(feedback.bytes(), 0);
}

// One rank's contribution x sent round after round: with error feedback the sum of what crossed is
// within one round's quantisation error of rounds * x; without, the same rounding repeats and the
// error grows with the rounds.
void test_accumulated_error_stays_bounded(void **) {
  const size_t count = 1000;
  const int rounds = 50;
  std::vector<float> x(count);
  for (size_t i = 0; i < count; ++i) x[i] = static_cast<float>(std::sin(0.37 * static_cast<double>(i)) * 0.01);
  for (const Codec *c : {&kBf16, &kF16, &kInt8Block, &kInt4Block}) {
    ErrorFeedback feedback;
    std::vector<double> sent_with(count, 0.0), sent_without(count, 0.0);
    std::vector<unsigned char> bytes(c->encoded_size(count));
    std::vector<float> input(count), decoded(count);
    for (int round = 0; round < rounds; ++round) {
      begin_one(feedback, x.data(), count, c->format);
      std::vector<float> &residual = feedback.next(count);
      for (size_t i = 0; i < count; ++i) input[i] = x[i] + residual[i];
      c->encode(input.data(), count, bytes.data());
      c->decode(bytes.data(), count, decoded.data());
      for (size_t i = 0; i < count; ++i) {
        residual[i] = input[i] - decoded[i];
        sent_with[i] += decoded[i];
      }
      c->encode(x.data(), count, bytes.data());
      c->decode(bytes.data(), count, decoded.data());
      for (size_t i = 0; i < count; ++i) sent_without[i] += decoded[i];
    }
    double worst_with = 0, worst_without = 0;
    for (size_t i = 0; i < count; ++i) {
      worst_with = std::fmax(worst_with, std::fabs(sent_with[i] - rounds * static_cast<double>(x[i])));
      worst_without = std::fmax(worst_without, std::fabs(sent_without[i] - rounds * static_cast<double>(x[i])));
    }
    // One round's error is at most relative_error * 0.01 (twice that for the residual's own share).
    const double one_round = 2 * c->relative_error * 0.01 + 1e-6;
    if (worst_with > one_round)
      fail_msg("%s: accumulated error %.3g after %d rounds exceeds one round's %.3g", c->name, worst_with, rounds,
               one_round);
    if (!(worst_without > worst_with))
      fail_msg("%s: without error feedback %.3g, with %.3g", c->name, worst_without, worst_with);
  }
}

// save() then hops, restore(): the next hop gets the residual the call started from, at the call's
// first hop, as often as the call is done again; forget_saved() and the next begin() end the copy.
void test_restore_rewinds_to_the_saved_residuals(void **) {
  ErrorFeedback feedback;
  float a[4];
  begin_one(feedback, a, 4, XFFL_WIRE_INT8_BLOCK);
  feedback.save();  // the first call: nothing stored yet
  feedback.next(4)[2] = 7.0f;
  feedback.restore();
  std::vector<float> &again = feedback.next(4);
  assert_true(again[2] == 0.0f);  // zeros again, at hop 0 (not a second hop)
  assert_int_equal(feedback.bytes(), 4 * sizeof(float));
  again[2] = 1.5f;  // this attempt counts
  feedback.forget_saved();

  begin_one(feedback, a, 4, XFFL_WIRE_INT8_BLOCK);
  feedback.save();
  for (int attempt = 0; attempt < 3; ++attempt) {  // two failed attempts, then the one that counts
    std::vector<float> &residual = feedback.next(4);
    assert_true(residual[2] == 1.5f);
    residual[2] = 100.0f + static_cast<float>(attempt);
    feedback.next(4)[0] = 9.0f;  // a second hop of the attempt
    if (attempt < 2) feedback.restore();
  }
  feedback.forget_saved();
  begin_one(feedback, a, 4, XFFL_WIRE_INT8_BLOCK);
  assert_true(feedback.next(4)[2] == 102.0f);  // the last attempt's
  assert_int_equal(feedback.bytes(), 8 * sizeof(float));

  // restore() without save(): a rewind only.
  begin_one(feedback, a, 4, XFFL_WIRE_INT8_BLOCK);
  feedback.next(4)[2] = 3.0f;
  feedback.restore();
  assert_true(feedback.next(4)[2] == 3.0f);
}

// A round whose outcome was not learnt (state/facility_rounds.h, "A round whose outcome is unknown"),
// as FacilityRounds drives it: the failed call sets the attempt's residual aside and restores the one
// it started from; the next call (begin, save) settles it before its hop. Counted: the attempt's
// residual is carried (and a redo of that next call restores it, not the stale one); not counted: the
// restored one; unknown: zeros. Either way no residual is carried twice.
void test_settle_an_unknown_round(void **) {
  using Settlement = ErrorFeedback::Settlement;
  const Settlement outcomes[] = {Settlement::Counted, Settlement::NotCounted, Settlement::Unknown};
  const float expected[] = {2.5f, 1.5f, 0.0f};
  for (int o = 0; o < 3; ++o) {
    ErrorFeedback feedback;
    float a[4], b[2];
    begin_one(feedback, a, 4, XFFL_WIRE_INT8_BLOCK);
    feedback.next(4)[1] = 1.5f;  // an earlier round that counted
    begin_one(feedback, a, 4, XFFL_WIRE_INT8_BLOCK);
    feedback.save();
    feedback.next(4)[1] = 2.5f;  // the attempt whose round's outcome is unknown
    feedback.set_aside();
    assert_true(feedback.has_set_aside());
    feedback.restore();
    feedback.forget_saved();
    assert_int_equal(feedback.bytes(), 8 * sizeof(float));  // the residual and the copy set aside
    // The next call, on the same layout: begin and save, then the outcome is learnt.
    begin_one(feedback, a, 4, XFFL_WIRE_INT8_BLOCK);
    feedback.save();
    feedback.settle(outcomes[o]);
    assert_false(feedback.has_set_aside());
    assert_int_equal(feedback.bytes(), 4 * sizeof(float));
    std::vector<float> &first = feedback.next(4);
    assert_true(first[1] == expected[o]);
    first[1] = 42.0f;  // this call's attempt fails too: a redo starts from the settled residual
    feedback.restore();
    assert_true(feedback.next(4)[1] == expected[o]);
    feedback.forget_saved();

    // Settled while another layout is the current call's: that layout's residual is untouched.
    begin_one(feedback, a, 4, XFFL_WIRE_INT8_BLOCK);
    feedback.save();
    feedback.next(4)[1] = 7.0f;
    feedback.set_aside();
    feedback.restore();
    begin_one(feedback, b, 2, XFFL_WIRE_INT8_BLOCK);
    feedback.save();
    feedback.next(2)[0] = 3.0f;
    feedback.settle(outcomes[o]);
    begin_one(feedback, a, 4, XFFL_WIRE_INT8_BLOCK);
    const float settled[] = {7.0f, expected[o], 0.0f};
    assert_true(feedback.next(4)[1] == settled[o]);
    begin_one(feedback, b, 2, XFFL_WIRE_INT8_BLOCK);
    assert_true(feedback.next(2)[0] == 3.0f);
  }
  // Without set_aside(), settle() does nothing; clear() drops the copy with the residuals.
  ErrorFeedback feedback;
  float a[4];
  begin_one(feedback, a, 4, XFFL_WIRE_INT8_BLOCK);
  feedback.next(4)[0] = 1.0f;
  feedback.settle(Settlement::Unknown);
  begin_one(feedback, a, 4, XFFL_WIRE_INT8_BLOCK);
  assert_true(feedback.next(4)[0] == 1.0f);
  feedback.set_aside();
  feedback.clear();
  assert_false(feedback.has_set_aside());
  assert_int_equal(feedback.bytes(), 0);
}

// A member of a group of two, in one thread: its allgather puts its own bytes at its index and the
// other member's (given) at the other; it fails once when told to, as a lost facility makes it fail.
class PairCommunicator final : public xffl::comm::Communicator {
 public:
  PairCommunicator(int index, std::vector<unsigned char> peer) : index_(index), peer_(std::move(peer)) {}
  bool fail_next = false;

  void allgather(const void *send, void *recv, size_t send_count, xffl_dtype_t, void *) override {
    if (fail_next) {
      fail_next = false;
      throw xffl::Error(XFFL_EPEER, "the peer is gone");
    }
    assert_int_equal(send_count, peer_.size());
    unsigned char *out = static_cast<unsigned char *>(recv);
    std::memcpy(out + static_cast<size_t>(index_) * send_count, send, send_count);
    std::memcpy(out + static_cast<size_t>(1 - index_) * send_count, peer_.data(), send_count);
  }
  // A group of one (the round redone by a facility left alone): the mean is the buffer itself.
  void allreduce(const void *send, void *recv, size_t count, xffl_dtype_t, xffl_redop_t, void *) override {
    if (send != recv) std::memcpy(recv, send, count * sizeof(float));
  }
  void broadcast(void *, size_t, xffl_dtype_t, int, void *) override { fail_msg("unexpected broadcast"); }
  void reduce_scatter(const void *, void *, size_t, xffl_dtype_t, xffl_redop_t, void *) override {
    fail_msg("unexpected reduce_scatter");
  }
  void barrier() override { fail_msg("unexpected barrier"); }

 private:
  int index_;
  std::vector<unsigned char> peer_;
};

struct Member {
  ErrorFeedback feedback;
  HopScratch scratch;
  PairCommunicator comm;
  xffl::federated::Roles roles;
  Member(int index, std::vector<unsigned char> peer) : comm(index, std::move(peer)) {
    roles.federated = &comm;
    roles.federated_groups = 2;
    roles.federated_rank = index;
    roles.weight_factor = 0.75;
    roles.wire_format = XFFL_WIRE_INT8_BLOCK;
    roles.error_feedback = &feedback;
    roles.hop_scratch = &scratch;
  }
  // One call on `input` (a copy), as FacilityRounds::average begins it; the mean comes back.
  std::vector<float> average(std::vector<float> input) {
    float *buf = input.data();
    size_t count = input.size();
    feedback.begin(reinterpret_cast<void *const *>(&buf), &count, 1, roles.wire_format);
    cross_facilities(roles, buf, count, XFFL_F32, nullptr);
    return input;
  }
};

bool same_bits(const std::vector<float> &a, const std::vector<float> &b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// The WAN hop of a round that fails after this member encoded (its residual already replaced), then
// is redone: with the residual put back (save/restore, as FacilityRounds does) the redo gives the bits
// of a round that never failed, mean and next residual alike; without it, it does not (the test can
// tell). A redo by a member left alone (no hop: one contributor) leaves the residual as it was.
void test_redo_of_a_failed_hop(void **) {
  const size_t count = 1000;  // four blocks, the last one partial
  std::vector<float> x1(count), x2(count), peer(count);
  for (size_t i = 0; i < count; ++i) {
    x1[i] = static_cast<float>(std::sin(0.37 * static_cast<double>(i)));
    x2[i] = static_cast<float>(std::cos(0.11 * static_cast<double>(i)) * 1.7);
    peer[i] = static_cast<float>(std::sin(1.3 + 0.5 * static_cast<double>(i)) * 2.0);
  }
  std::vector<unsigned char> peer_bytes(kInt8Block.encoded_size(count));
  kInt8Block.encode(peer.data(), count, peer_bytes.data());

  Member clean(0, peer_bytes);  // two rounds, no failure
  clean.average(x1);
  const std::vector<float> clean_mean = clean.average(x2);
  size_t key_count = count;

  for (int restores = 0; restores < 2; ++restores) {
    Member redone(0, peer_bytes);
    redone.average(x1);
    std::vector<float> input = x2;
    float *buf = input.data();
    redone.feedback.begin(reinterpret_cast<void *const *>(&buf), &key_count, 1, XFFL_WIRE_INT8_BLOCK);
    redone.feedback.save();
    redone.comm.fail_next = true;
    bool failed = false;
    try {
      cross_facilities(redone.roles, buf, count, XFFL_F32, nullptr);
    } catch (const xffl::Error &error) {
      failed = error.status() == XFFL_EPEER;
    }
    assert_true(failed);
    input = x2;  // the input put back, as for any redo
    if (restores)
      redone.feedback.restore();
    else  // a rewind only: the failed attempt's residual stays
      redone.feedback.begin(reinterpret_cast<void *const *>(&buf), &key_count, 1, XFFL_WIRE_INT8_BLOCK);
    cross_facilities(redone.roles, buf, count, XFFL_F32, nullptr);
    redone.feedback.forget_saved();
    if (restores)
      assert_true(same_bits(input, clean_mean));
    else
      assert_false(same_bits(input, clean_mean));  // the failed attempt's residual counted twice
  }

  // Residuals compared directly: the clean member's and a restored member's after the same rounds.
  Member a(0, peer_bytes), b(0, peer_bytes);
  std::vector<float> in_a = x1, in_b = x1;
  float *pa = in_a.data(), *pb = in_b.data();
  a.feedback.begin(reinterpret_cast<void *const *>(&pa), &key_count, 1, XFFL_WIRE_INT8_BLOCK);
  cross_facilities(a.roles, pa, count, XFFL_F32, nullptr);
  b.feedback.begin(reinterpret_cast<void *const *>(&pb), &key_count, 1, XFFL_WIRE_INT8_BLOCK);
  b.feedback.save();
  b.comm.fail_next = true;
  try {
    cross_facilities(b.roles, pb, count, XFFL_F32, nullptr);
    fail_msg("the hop did not fail");
  } catch (const xffl::Error &) {
  }
  in_b = x1;
  b.feedback.restore();
  cross_facilities(b.roles, pb, count, XFFL_F32, nullptr);
  assert_true(same_bits(in_a, in_b));
  a.feedback.begin(reinterpret_cast<void *const *>(&pa), &key_count, 1, XFFL_WIRE_INT8_BLOCK);
  b.feedback.begin(reinterpret_cast<void *const *>(&pb), &key_count, 1, XFFL_WIRE_INT8_BLOCK);
  const std::vector<float> residual_a = a.feedback.next(count), residual_b = b.feedback.next(count);
  assert_true(same_bits(residual_a, residual_b));
  bool carries = false;
  for (float r : residual_a) carries = carries || r != 0.0f;
  assert_true(carries);

  // The round redone by a member left alone: no hop, the residual as the call found it.
  b.feedback.begin(reinterpret_cast<void *const *>(&pb), &key_count, 1, XFFL_WIRE_INT8_BLOCK);
  b.feedback.save();
  b.comm.fail_next = true;
  in_b = x2;
  try {
    cross_facilities(b.roles, pb, count, XFFL_F32, nullptr);
  } catch (const xffl::Error &) {
  }
  in_b = x2;
  b.feedback.restore();
  b.roles.federated_groups = 1;
  b.roles.federated_rank = 0;
  b.roles.weight_factor = 1.0;
  cross_facilities(b.roles, pb, count, XFFL_F32, nullptr);
  assert_true(same_bits(in_b, x2));  // the exact mean of one
  b.feedback.forget_saved();
  b.feedback.begin(reinterpret_cast<void *const *>(&pb), &key_count, 1, XFFL_WIRE_INT8_BLOCK);
  assert_true(same_bits(b.feedback.next(count), residual_b));
}

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_residuals_kept_per_buffer_and_hop),
      cmocka_unit_test(test_changes_drop_residuals),
      cmocka_unit_test(test_accumulated_error_stays_bounded),
      cmocka_unit_test(test_restore_rewinds_to_the_saved_residuals),
      cmocka_unit_test(test_redo_of_a_failed_hop),
      cmocka_unit_test(test_settle_an_unknown_round),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
