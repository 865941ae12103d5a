// The small collectives of members on one host through their shared segment
// (comm/ucx/host_collectives.h), with threads as ranks: every collective, dtype, op and placement
// below the sizes of comm/algorithm_choice.h, bit-identical floats on every rank (NaN payloads too, in
// the slots and in the rounds, each rank's output at another alignment), calls through the
// segment mixed with calls over UCX (the slots' reuse), members that disagree (inside the segment,
// and one in the segment against others over UCX): XFFL_EINVAL naming both values on every member,
// and a member that stays away: XFFL_ETIMEOUT naming it. The large allreduce's pipelined rounds
// through the segment: every dtype, op and placement on both sides of its crossover and at odd counts,
// many rounds with a short uneven last one, bit-identical floats on every rank, mixed with the small
// calls (the slots of both parities), members that disagree in it, and a member that stays away in
// the middle of it. The pipelined calls' copies into the output with streaming stores at odd counts,
// and where they start by default (buffers of 20 and 40 MiB). The multiproc tests run the same paths
// across processes, and faults.collective_loss_host_segment and faults.collective_loss_host_pipeline
// a member that dies in them. Sanitized builds run fewer cases through the rounds (pipelined_cases,
// pipelined_counts, and where streaming starts on 3 ranks only): about 40 s under TSan at load 5-8, 8 s
// of it the tests before the rounds; 23 s at load 1-3, 9 s of it where streaming starts (TSan's shadow
// of the buffers; on 2 and 3 ranks, 16 and 32 MiB then).
#include <functional>
#include <memory>
#include <utility>
#include <vector>
#include <random>
#include <thread>

#include "collective_checks.h"
#include "comm/algorithm_choice.h"
#include "comm/dtype.h"
#include "comm/ucx/host_segment.h"
#include "comm/ucx/ucx_communicator.h"
#include "ucx_harness.h"

// cmocka last: its fail() macro would rewrite xffl::fail in the headers above.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" {
#include <cmocka.h>
}

namespace {

using xffl::comm::ucx::UcxCommunicator;

void expect_ok(const std::string &errors) {
  if (!errors.empty()) fail_msg("%s", errors.c_str());
}

void expect_contains(const std::string &text, const std::string &part) {
  if (text.find(part) == std::string::npos) fail_msg("\"%s\" does not contain \"%s\"", text.c_str(), part.c_str());
}

bool has_segment(xffl::comm::Communicator &comm) {
  auto *ucx = dynamic_cast<UcxCommunicator *>(&comm);
  return ucx && ucx->has_host_segment();
}

uint64_t pipelined_calls(xffl::comm::Communicator &comm) {
  auto *ucx = dynamic_cast<UcxCommunicator *>(&comm);
  return ucx ? ucx->host_pipelined_calls() : 0;
}

// Runs `call` on this member over UCX messages only (its backend's tuning takes neither the segment nor
// single copy for it), and fails unless the call kept out of the segment's pipelined rounds.
template <typename Call>
void over_ucx_messages(xffl::comm::UcxBackend &backend, xffl::comm::Communicator &comm, Call &&call) {
  const xffl::comm::algorithms::Tuning before = backend.tuning();
  xffl::comm::algorithms::Tuning messages = before;
  messages.single_copy_on_host = xffl::comm::algorithms::SingleCopy::never;
  const uint64_t pipelined_before = pipelined_calls(comm);
  backend.set_tuning(messages);
  call();
  backend.set_tuning(before);
  if (pipelined_calls(comm) != pipelined_before) (xffl::fail)(XFFL_EINTERNAL, "a call over UCX took the segment's rounds");
}

uint64_t continued_calls(xffl::comm::Communicator &comm) {
  auto *ucx = dynamic_cast<UcxCommunicator *>(&comm);
  return ucx ? ucx->host_continued_calls() : 0;
}

uint64_t streamed_bytes(xffl::comm::Communicator &comm) {
  auto *ucx = dynamic_cast<UcxCommunicator *>(&comm);
  return ucx ? ucx->host_streamed_bytes() : 0;
}

uint64_t reduced_in_output_bytes(xffl::comm::Communicator &comm) {
  auto *ucx = dynamic_cast<UcxCommunicator *>(&comm);
  return ucx ? ucx->host_reduced_in_output_bytes() : 0;
}

// After an allreduce of `bytes` (the counters were `streamed_before` and `reduced_before` ahead of
// it): a pipelined one made some of its output with its own reduction (its parts) and, `streaming`,
// copied the rest into it with streaming stores, else none; one that was not made none there.
void expect_allreduce_output(xffl::comm::Communicator &comm, uint64_t streamed_before, uint64_t reduced_before,
                             size_t count, uint64_t bytes, bool pipelined, bool streaming) {
  const uint64_t streamed = streamed_bytes(comm) - streamed_before;
  const uint64_t reduced = reduced_in_output_bytes(comm) - reduced_before;
  const bool right = pipelined ? reduced > 0 && reduced < bytes && streamed == (streaming ? bytes - reduced : 0)
                               : reduced == 0 && streamed == 0;
  if (!right)
    (xffl::fail)(XFFL_EINTERNAL, "allreduce of ", count, (pipelined ? " (pipelined" : " (not pipelined"),
                 (streaming ? ", streaming)" : ")"), " made ", reduced, " bytes of its output and streamed ", streamed,
                 " of ", bytes);
}

// After a call (streamed_bytes was `before` ahead of it): it wrote exactly `expected` bytes of its
// output with streaming stores (every byte it wrote there, or none). `size`: the call's, for the message.
void expect_streamed(xffl::comm::Communicator &comm, uint64_t before, const char *what, size_t size,
                     uint64_t expected) {
  const uint64_t streamed = streamed_bytes(comm) - before;
  if (streamed != expected)
    (xffl::fail)(XFFL_EINTERNAL, what, " of ", size, " streamed ", streamed, " bytes of its output, expected ",
                 expected);
}

#ifdef XFFL_TEST_SANITIZED
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif

// The (dtype, op) pairs the pipelined matrices run: every one, or SUM and AVG of every dtype; in a
// sanitized build (whose loops run 5-20x slower) four pairs that take every branch of the reduction
// (in the type, widened, divided, integer).
std::vector<std::pair<xffl_dtype_t, xffl_redop_t>> pipelined_cases(bool every_op) {
  if (kSanitized) return {{XFFL_F32, XFFL_SUM}, {XFFL_BF16, XFFL_AVG}, {XFFL_I8, XFFL_MIN}, {XFFL_F64, XFFL_PROD}};
  std::vector<std::pair<xffl_dtype_t, xffl_redop_t>> cases;
  for (xffl_dtype_t dtype : checks::kDtypes)
    for (xffl_redop_t op : checks::kOps)
      if (every_op || op == XFFL_SUM || op == XFFL_AVG) cases.emplace_back(dtype, op);
  return cases;
}

// Counts around the first that takes the rounds: one below (the slots), it, and an odd one above; in
// a sanitized build the odd one alone (the choice of path is the ci build's to check).
std::vector<size_t> pipelined_counts(size_t first) {
  if (kSanitized) return {first + 1001};
  return {first - 1, first, first + 1001};
}

// Parts of 64 KiB: a 1 MiB call runs several rounds, and odd counts end with a short uneven one.
harness::Options small_parts() {
  harness::Options options;
  options.tuning.host_pipeline_chunk_bytes = 64 * 1024;
  return options;
}

// The same, with `streamed` every pipelined call writing its output with streaming stores
// (comm/streaming_copy.h; by default only from algorithm_choice::host_stream_output_from(members)
// bytes of output): the copies out start and end anywhere within a cache line at these counts.
harness::Options parts(bool streamed) {
  harness::Options options = small_parts();
  if (streamed) options.tuning.host_stream_output_from = 0;
  return options;
}

harness::Options short_timeout() {
  harness::Options options;
  options.timeout_ms = 1000;
  return options;
}

void every_collective_through_the_segment(int world) {
  expect_ok(harness::run_ranks(world, [](int rank, int n, xffl::comm::UcxBackend &backend) {
    auto comm = harness::make_group(backend, harness::first_ranks(n), rank, "world group", 1);
    checks::full_matrix(*comm, rank, n, {1, 2, 1001});
    if (!has_segment(*comm)) (xffl::fail)(XFFL_EINTERNAL, "the small collectives did not take the segment");
  }));
}

void every_collective_on_2_ranks(void **) { every_collective_through_the_segment(2); }
void every_collective_on_3_ranks(void **) { every_collective_through_the_segment(3); }
void every_collective_on_4_ranks(void **) { every_collective_through_the_segment(4); }

void random_floats_are_bit_identical_on_every_rank(void **) {
  std::string errors;
  const auto results = harness::random_f32_sums(4, 3001, 2, harness::Options(), &errors);
  expect_ok(errors);
  for (size_t r = 1; r < results.size(); ++r) assert_true(results[r] == results[0]);
}

// NaNs with a distinct payload on every rank in the same elements (harness::nan_f32_sums, each rank's
// output at another alignment), through the segment's slots (every member reduces every element
// itself, the same loops on the same count) and through its pipelined rounds (each element reduced by
// one member): the result holds the same bits on every rank, NaNs included, on 4 ranks.
void nan_payloads_are_bit_identical_on_every_rank(void **) {
  const size_t pipelined = xffl::comm::algorithm_choice::host_pipeline_allreduce_from(4) / sizeof(float) * 3 + 12345;
  std::string errors;
  const auto results = harness::nan_f32_sums(4, {1001, pipelined}, 25, harness::Options(), &errors);
  expect_ok(errors);
  for (size_t r = 1; r < results.size(); ++r)
    if (results[r] != results[0]) fail_msg("rank %zu holds other bits than rank 0", r);
}

// Calls over UCX messages (the broadcast of 300000 i32, its tuning switched for it on every member)
// and pipelined calls (the 600000 bf16 allreduce) between calls through the segment: a member writes a
// slot again only after every member has read it.
void calls_over_ucx_in_between(void **) {
  expect_ok(harness::run_ranks(3, [](int rank, int n, xffl::comm::UcxBackend &backend) {
    auto comm = harness::make_group(backend, harness::first_ranks(n), rank, "world group", 3);
    for (int round = 0; round < 4; ++round) {
      checks::allreduce(*comm, rank, n, 1000, XFFL_F32, XFFL_SUM, round % 2 == 0);
      over_ucx_messages(backend, *comm, [&] {
        checks::broadcast(*comm, rank, 300000, XFFL_I32, round % n);  // the root may leave first
      });
      checks::broadcast(*comm, rank, 1000, XFFL_I32, (round + 1) % n);
      checks::allreduce(*comm, rank, n, 600000, XFFL_BF16, XFFL_AVG, false);
      checks::reduce_scatter(*comm, rank, n, 300, XFFL_I8, XFFL_AVG, round % 2 == 1);
    }
    if (!has_segment(*comm)) (xffl::fail)(XFFL_EINTERNAL, "the small collectives did not take the segment");
  }));
}

// One allreduce through checks::allreduce (the reference), failing unless it took the pipelined path
// exactly when its buffer is at least the crossover, and then made its own parts of the output and
// (`streaming`: the tuning of parts(true)) copied the rest into it with streaming stores, else none.
void checked_allreduce(xffl::comm::Communicator &comm, int rank, int n, size_t count, xffl_dtype_t dtype,
                       xffl_redop_t op, bool in_place, bool streaming = false) {
  const uint64_t before = pipelined_calls(comm), streamed_before = streamed_bytes(comm);
  const uint64_t reduced_before = reduced_in_output_bytes(comm);
  checks::allreduce(comm, rank, n, count, dtype, op, in_place);
  const bool took = pipelined_calls(comm) != before;
  const bool expected = count * xffl::comm::dtype_size(dtype) >= xffl::comm::algorithm_choice::host_pipeline_allreduce_from(n);
  if (took != expected)
    (xffl::fail)(XFFL_EINTERNAL, "allreduce of ", count, " ", xffl::comm::dtype_name(dtype),
                 took ? " took" : " did not take", " the pipelined path");
  expect_allreduce_output(comm, streamed_before, reduced_before, count, count * xffl::comm::dtype_size(dtype), took,
                          streaming);
}

uint64_t done_flags_read(xffl::comm::Communicator &comm) {
  auto *ucx = dynamic_cast<UcxCommunicator *>(&comm);
  return ucx ? ucx->host_done_flags_read() : 0;
}

// Before writing its slot a member reads the others' "done" flags only when they have not all met it
// at a call since the slot's last use: none after calls on the segment, every other member's after a
// call over UCX messages in between (a broadcast, its tuning switched for it) and after a pipelined
// call (its rounds read both parities' slots after the meeting).
void done_flags_are_read_only_when_no_meeting_says_it(void **) {
  expect_ok(harness::run_ranks(3, [](int rank, int n, xffl::comm::UcxBackend &backend) {
    auto comm = harness::make_group(backend, harness::first_ranks(n), rank, "world group", 42);
    auto expect_read = [&](const char *call, uint64_t before, uint64_t expected) {
      const uint64_t read = done_flags_read(*comm) - before;
      if (read != expected)
        (xffl::fail)(XFFL_EINTERNAL, call, " read ", read, " done flags, ", expected, " expected");
    };
    for (int k = 0; k < 4; ++k) {  // the first two find no earlier call of their parity
      const uint64_t before = done_flags_read(*comm);
      checks::allreduce(*comm, rank, n, 1000, XFFL_F32, XFFL_SUM, k % 2 == 0);
      expect_read("a small allreduce after one", before, 0);
    }
    over_ucx_messages(backend, *comm, [&] { checks::broadcast(*comm, rank, 300000, XFFL_I32, 1); });
    uint64_t before = done_flags_read(*comm);
    checks::allreduce(*comm, rank, n, 1000, XFFL_F32, XFFL_SUM, false);
    expect_read("a small allreduce after a call over UCX", before, static_cast<uint64_t>(n - 1));
    before = done_flags_read(*comm);
    checks::allreduce(*comm, rank, n, 1000, XFFL_F32, XFFL_SUM, false);
    expect_read("a small allreduce after that", before, 0);
    checked_allreduce(*comm, rank, n, 600000, XFFL_BF16, XFFL_AVG, false);
    before = done_flags_read(*comm);
    checks::broadcast(*comm, rank, 1000, XFFL_I32, 2);
    expect_read("a small broadcast after a pipelined allreduce", before, static_cast<uint64_t>(n - 1));
  }));
}

// Rank `odd` calls with `odd_count`, the others with `count`: every member gets XFFL_EINVAL naming both.
// Before it, every member makes the same call: a barrier, or with `after_large` a pipelined allreduce
// (then a pipelined allreduce that follows goes to its rounds without meeting the others first).
void members_disagree(size_t count, size_t odd_count, unsigned long long tag, bool after_large = false) {
  const int world = 3, odd = 1;
  std::vector<std::string> messages(world);
  std::vector<int> statuses(world, XFFL_OK);
  expect_ok(harness::run_ranks(world, [&](int rank, int n, xffl::comm::UcxBackend &backend) {
    auto comm = harness::make_group(backend, harness::first_ranks(n), rank, "world group", tag);
    // The segment is set up: the call below meets the other members in it or over UCX.
    if (after_large)
      checked_allreduce(*comm, rank, n, xffl::comm::algorithm_choice::host_pipeline_allreduce_from(n) / sizeof(float),
                        XFFL_F32, XFFL_SUM, false);
    else
      comm->barrier();
    std::vector<float> data(std::max(count, odd_count), 1.0f);
    try {
      comm->allreduce(data.data(), data.data(), rank == odd ? odd_count : count, XFFL_F32, XFFL_SUM, nullptr);
    } catch (const xffl::Error &error) {
      statuses[static_cast<size_t>(rank)] = error.status();
      messages[static_cast<size_t>(rank)] = error.what();
    }
  }));
  for (int rank = 0; rank < world; ++rank) {
    assert_int_equal(statuses[static_cast<size_t>(rank)], XFFL_EINVAL);
    expect_contains(messages[static_cast<size_t>(rank)], "count " + std::to_string(count));
    expect_contains(messages[static_cast<size_t>(rank)], "count " + std::to_string(odd_count));
  }
}

void members_disagree_in_the_segment(void **) { members_disagree(100, 99, 4); }
// The flag line keeps signatures packed (host_segment.cpp): every kind, dtype and op, no op, no root, the
// largest root and count come back as published, on both parities.
// Up to 8 bytes a member's contribution sits on its flag line, by parity; from 9 bytes in its slot.
void small_contributions_sit_beside_the_flag(void **) {
  std::string why;
  auto segment = xffl::comm::ucx::HostSegment::create(2, 0, 4096, 0, &why);
  if (!segment) (xffl::fail)(XFFL_EINTERNAL, "no segment: ", why);
  constexpr size_t kInline = xffl::comm::ucx::HostSegment::kInlineBytes;
  static_assert(kInline == 8, "the test's sizes");
  for (int member = 0; member < 2; ++member)
    for (uint32_t sequence = 0; sequence < 2; ++sequence) {
      unsigned char *slot = segment->slot(member, sequence);
      assert_ptr_equal(segment->contribution(member, sequence, kInline + 1), slot);
      assert_ptr_equal(segment->contribution(member, sequence, 4096), slot);
      unsigned char *beside = segment->contribution(member, sequence, kInline);
      assert_ptr_equal(segment->contribution(member, sequence, 1), beside);
      assert_ptr_not_equal(beside, slot);
      // Not in any slot, and the two parities apart.
      for (int other = 0; other < 2; ++other)
        for (uint32_t parity = 0; parity < 2; ++parity) {
          unsigned char *any = segment->slot(other, parity);
          assert_true(beside + kInline <= any || beside >= any + segment->slot_bytes());
        }
      assert_ptr_not_equal(beside, segment->contribution(member, sequence + 1, kInline));
      assert_ptr_equal(beside, segment->contribution(member, sequence + 2, kInline));
    }
  assert_ptr_not_equal(segment->contribution(0, 0, kInline), segment->contribution(1, 0, kInline));
}

void the_segment_gives_back_every_signature_published(void **) {
  using xffl::comm::CallKind;
  using xffl::comm::CallSignature;
  std::string why;
  auto segment = xffl::comm::ucx::HostSegment::create(1, 0, 4096, 0, &why);
  if (!segment) (xffl::fail)(XFFL_EINTERNAL, "no segment: ", why);
  std::vector<CallSignature> signatures{CallSignature::barrier()};
  for (CallKind kind : {CallKind::Allreduce, CallKind::Broadcast, CallKind::Allgather, CallKind::ReduceScatter})
    for (xffl_dtype_t dtype : checks::kDtypes) {
      signatures.push_back(CallSignature::of(kind, 1, dtype));
      for (xffl_redop_t op : checks::kOps)
        signatures.push_back(CallSignature::of(kind, UINT64_MAX, dtype, op, INT32_MAX));
    }
  uint32_t sequence = 0;
  for (const CallSignature &published : signatures) {
    segment->publish(sequence, published);
    if (segment->signature(0, sequence) != published)
      (xffl::fail)(XFFL_EINTERNAL, "published ", xffl::comm::describe_call(published), ", read back ",
                   xffl::comm::describe_call(segment->signature(0, sequence)));
    ++sequence;
  }
}

// Calls of at most 8 bytes travel beside the flag (HostSegment::contribution), with the signature
// packed: both inline (8 and 4 bytes), and one inline against one in the slot (8 and 12 bytes).
void members_disagree_on_inline_calls(void **) {
  members_disagree(2, 1, 40);
  members_disagree(2, 3, 41);
}
// The odd member's call takes the segment's slots, the others' the large allreduce (the pipelined
// rounds since they start at single copy's crossover; single copy before), and the other way round.
void a_member_in_the_segment_disagrees_with_members_over_ucx(void **) { members_disagree(300000, 100, 5); }
void members_over_ucx_disagree_with_a_member_in_the_segment(void **) { members_disagree(100, 300000, 6); }

// A member whose call goes over UCX messages and only receives at first (a non-root of the binomial
// broadcast: its tuning takes no segment for this call) sends nothing the others could probe while they
// wait in the segment with other arguments. It finds their signatures in the segment itself
// (HostCollectives::check_elsewhere, among the periodic checks of its waits): every member gets
// XFFL_EINVAL naming both counts, not XFFL_TIMEOUT (with the check left out, all three time out).
void a_member_over_ucx_that_only_receives_sees_the_others_in_the_segment(void **) {
  const int world = 3, odd = 1;
  const size_t count = 99, odd_count = 100;
  harness::Options options;
  options.timeout_ms = 5000;
  std::vector<std::string> messages(world);
  std::vector<int> statuses(world, XFFL_OK);
  expect_ok(harness::run_ranks(world, [&](int rank, int n, xffl::comm::UcxBackend &backend) {
    auto comm = harness::make_group(backend, harness::first_ranks(n), rank, "world group", 43);
    comm->barrier();  // the segment is set up on every member
    std::vector<int32_t> data(odd_count, rank);
    try {
      if (rank == odd)
        over_ucx_messages(backend, *comm, [&] { comm->broadcast(data.data(), odd_count, XFFL_I32, 0, nullptr); });
      else
        comm->broadcast(data.data(), count, XFFL_I32, 0, nullptr);
    } catch (const xffl::Error &error) {
      statuses[static_cast<size_t>(rank)] = error.status();
      messages[static_cast<size_t>(rank)] = error.what();
    }
  }, options));
  for (int rank = 0; rank < world; ++rank) {
    if (statuses[static_cast<size_t>(rank)] != XFFL_EINVAL)
      fail_msg("rank %d: status %d, XFFL_EINVAL expected: %s", rank, statuses[static_cast<size_t>(rank)],
               messages[static_cast<size_t>(rank)].c_str());
    expect_contains(messages[static_cast<size_t>(rank)], "count " + std::to_string(count));
    expect_contains(messages[static_cast<size_t>(rank)], "count " + std::to_string(odd_count));
  }
}

void a_member_that_stays_away_times_out_the_others(void **) {
  std::vector<int> statuses(3, XFFL_OK);
  std::vector<std::string> messages(3);
  harness::Latch done(2);
  expect_ok(harness::run_ranks(3, [&](int rank, int, xffl::comm::UcxBackend &backend) {
    auto group = harness::make_group(backend, {0, 1, 2}, rank, "federated group (instance 0)", 7);
    group->barrier();  // the segment is set up
    if (rank == 2) {
      done.wait();  // stays away until the others have given up
      return;
    }
    try {
      group->barrier();
    } catch (const xffl::Error &error) {
      statuses[static_cast<size_t>(rank)] = error.status();
      messages[static_cast<size_t>(rank)] = error.what();
    }
    done.arrive();
  }, short_timeout()));
  for (int rank : {0, 1}) {
    assert_int_equal(statuses[static_cast<size_t>(rank)], XFFL_ETIMEOUT);
    expect_contains(messages[static_cast<size_t>(rank)],
                    "rank " + std::to_string(rank) + ": timed out after 1000 ms in barrier on federated group "
                    "(instance 0) waiting for rank 2");
  }
}

// Every dtype and op in and out of place: one element below the crossover (the segment's slots), the
// crossover itself, and an odd count above it; the output copied with streaming stores or not.
void pipelined_allreduce_every_dtype_and_op(int world, bool every_op, bool streamed = false) {
  expect_ok(harness::run_ranks(world, [&](int rank, int n, xffl::comm::UcxBackend &backend) {
    auto comm = harness::make_group(backend, harness::first_ranks(n), rank, "world group", 11);
    const size_t from = xffl::comm::algorithm_choice::host_pipeline_allreduce_from(n);
    for (const auto &[dtype, op] : pipelined_cases(every_op)) {
      const size_t first = (from + xffl::comm::dtype_size(dtype) - 1) / xffl::comm::dtype_size(dtype);
      for (size_t count : pipelined_counts(first))
        for (bool in_place : {false, true}) checked_allreduce(*comm, rank, n, count, dtype, op, in_place, streamed);
    }
  }, parts(streamed)));
}

void pipelined_allreduce_on_2_ranks(void **) { pipelined_allreduce_every_dtype_and_op(2, true); }
void pipelined_allreduce_on_3_ranks(void **) { pipelined_allreduce_every_dtype_and_op(3, false); }
void pipelined_allreduce_on_4_ranks(void **) { pipelined_allreduce_every_dtype_and_op(4, false); }
void pipelined_allreduce_streamed_on_2_ranks(void **) { pipelined_allreduce_every_dtype_and_op(2, true, true); }
void pipelined_allreduce_streamed_on_3_ranks(void **) { pipelined_allreduce_every_dtype_and_op(3, false, true); }

// With the default parts too (one round per 256 KiB a member), 4 ranks: every copy the same bits.
void pipelined_random_floats_are_bit_identical_on_every_rank(void **) {
  std::string errors;
  const size_t count = xffl::comm::algorithm_choice::host_pipeline_allreduce_from(4) / sizeof(float) * 3 + 12345;
  const auto results = harness::random_f32_sums(4, count, 12, harness::Options(), &errors);
  expect_ok(errors);
  for (size_t r = 1; r < results.size(); ++r) assert_true(results[r] == results[0]);
}

// Pipelined calls (allreduce and reduce_scatter) between small calls through the segment, in both
// parities of the sequence: no slot is written while a member reads it.
void pipelined_calls_among_small_ones(void **) {
  expect_ok(harness::run_ranks(3, [](int rank, int n, xffl::comm::UcxBackend &backend) {
    auto comm = harness::make_group(backend, harness::first_ranks(n), rank, "world group", 13);
    const size_t large = xffl::comm::algorithm_choice::host_pipeline_allreduce_from(n) / sizeof(float) + 777;
    for (int round = 0; round < (kSanitized ? 1 : 3); ++round) {
      checked_allreduce(*comm, rank, n, large, XFFL_F32, XFFL_SUM, round % 2 == 0);
      checked_allreduce(*comm, rank, n, large, XFFL_BF16, XFFL_AVG, false);
      checked_allreduce(*comm, rank, n, 1000, XFFL_F32, XFFL_MAX, false);
      checked_allreduce(*comm, rank, n, large, XFFL_I32, XFFL_PROD, true);
      checks::broadcast(*comm, rank, 1000, XFFL_I32, round % n);
      checks::reduce_scatter(*comm, rank, n, 400000, XFFL_F32, XFFL_SUM, false);  // pipelined too
      checked_allreduce(*comm, rank, n, large, XFFL_F64, XFFL_MIN, false);
      comm->barrier();
    }
  }, small_parts()));
}

// The same for reduce_scatter (its buffer: the whole send buffer).
void checked_reduce_scatter(xffl::comm::Communicator &comm, int rank, int n, size_t recv_count, xffl_dtype_t dtype,
                            xffl_redop_t op, bool in_place, bool streaming = false) {
  const uint64_t before = pipelined_calls(comm), streamed_before = streamed_bytes(comm);
  checks::reduce_scatter(comm, rank, n, recv_count, dtype, op, in_place);
  const bool took = pipelined_calls(comm) != before;
  const bool expected = recv_count * static_cast<size_t>(n) * xffl::comm::dtype_size(dtype) >=
                        xffl::comm::algorithm_choice::host_pipeline_reduce_scatter_from(n);
  if (took != expected)
    (xffl::fail)(XFFL_EINTERNAL, "reduce_scatter of ", recv_count, " ", xffl::comm::dtype_name(dtype),
                 took ? " took" : " did not take", " the pipelined path");
  expect_streamed(comm, streamed_before, "reduce_scatter", recv_count,
                  took && streaming ? recv_count * xffl::comm::dtype_size(dtype) : 0);
}

void pipelined_reduce_scatter_every_dtype_and_op(int world, bool every_op, bool streamed = false) {
  expect_ok(harness::run_ranks(world, [&](int rank, int n, xffl::comm::UcxBackend &backend) {
    auto comm = harness::make_group(backend, harness::first_ranks(n), rank, "world group", 17);
    const size_t from = xffl::comm::algorithm_choice::host_pipeline_reduce_scatter_from(n);
    for (const auto &[dtype, op] : pipelined_cases(every_op)) {
      const size_t block = static_cast<size_t>(n) * xffl::comm::dtype_size(dtype);
      const size_t first = (from + block - 1) / block;
      for (size_t count : pipelined_counts(first))
        for (bool in_place : {false, true})
          checked_reduce_scatter(*comm, rank, n, count, dtype, op, in_place, streamed);
    }
  }, parts(streamed)));
}

void pipelined_reduce_scatter_on_2_ranks(void **) { pipelined_reduce_scatter_every_dtype_and_op(2, true); }
void pipelined_reduce_scatter_on_3_ranks(void **) { pipelined_reduce_scatter_every_dtype_and_op(3, false); }
void pipelined_reduce_scatter_streamed_on_3_ranks(void **) { pipelined_reduce_scatter_every_dtype_and_op(3, false, true); }

// Broadcast and allgather through their rounds (no reduction: the dtype only sizes the elements):
// one element below the crossover (the slots), the crossover, an odd count above it with a short
// last round; every root; allgather in and out of place. Each call must take the pipelined path
// exactly when its buffer reaches the crossover, and with `streaming` then write the `written` bytes
// it puts in this member's output (a broadcast's root none, an allgather in place all but its own
// block) with streaming stores, else none.
void checked_copy_collective(xffl::comm::Communicator &comm, const char *what, size_t bytes, size_t from,
                             size_t written, bool streaming, const std::function<void()> &call) {
  const uint64_t before = pipelined_calls(comm), streamed_before = streamed_bytes(comm);
  call();
  const bool took = pipelined_calls(comm) != before;
  if (took != (bytes >= from))
    (xffl::fail)(XFFL_EINTERNAL, what, " of ", bytes, " bytes", took ? " took" : " did not take",
                 " the pipelined path");
  expect_streamed(comm, streamed_before, what, bytes, took && streaming ? written : 0);
}

void pipelined_broadcast_and_allgather(int world, bool streamed = false) {
  expect_ok(harness::run_ranks(world, [&](int rank, int n, xffl::comm::UcxBackend &backend) {
    auto comm = harness::make_group(backend, harness::first_ranks(n), rank, "world group", 19);
    const size_t broadcast_from = xffl::comm::algorithm_choice::host_pipeline_broadcast_from(n);
    const size_t allgather_from = xffl::comm::algorithm_choice::host_pipeline_allgather_from(n);
    for (xffl_dtype_t dtype : {XFFL_F32, XFFL_BF16, XFFL_F64}) {
      const size_t element = xffl::comm::dtype_size(dtype);
      const size_t first_broadcast = (broadcast_from + element - 1) / element;
      for (size_t count : pipelined_counts(first_broadcast))
        for (int root = 0; root < n; ++root)
          checked_copy_collective(*comm, "broadcast", count * element, broadcast_from,
                                  rank == root ? 0 : count * element, streamed,
                                  [&] { checks::broadcast(*comm, rank, count, dtype, root); });
      const size_t block = static_cast<size_t>(n) * element;
      const size_t first_allgather = (allgather_from + block - 1) / block;
      for (size_t count : pipelined_counts(first_allgather))
        for (bool in_place : {false, true})
          checked_copy_collective(*comm, "allgather", count * block, allgather_from,
                                  in_place ? count * block - count * element : count * block, streamed,
                                  [&] { checks::allgather(*comm, rank, n, count, dtype, in_place); });
      if (kSanitized) break;  // one dtype: the rounds copy bytes alike for every one
    }
  }, parts(streamed)));
}

void pipelined_broadcast_and_allgather_on_2_ranks(void **) { pipelined_broadcast_and_allgather(2); }
void pipelined_broadcast_and_allgather_on_3_ranks(void **) { pipelined_broadcast_and_allgather(3); }
void pipelined_broadcast_and_allgather_streamed_on_2_ranks(void **) { pipelined_broadcast_and_allgather(2, true); }

// With the default tuning, a pipelined call streams its output (an allreduce: what it copies there)
// exactly from algorithm_choice::host_stream_output_from(members) bytes of it, on 2 and 3 members: an
// allreduce one f32 below and three above (pseudo-random floats, the same bits on every rank), a
// broadcast of the size itself from each root.
void streaming_starts_at_its_crossover(int world) {
  const size_t from = xffl::comm::algorithm_choice::host_stream_output_from(world);
  std::vector<std::vector<float>> sums(static_cast<size_t>(world));
  expect_ok(harness::run_ranks(world, [&](int rank, int n, xffl::comm::UcxBackend &backend) {
    auto comm = harness::make_group(backend, harness::first_ranks(n), rank, "world group", 23);
    for (size_t count : {from / sizeof(float) - 1, from / sizeof(float) + 3}) {
      const uint64_t before = streamed_bytes(*comm), reduced_before = reduced_in_output_bytes(*comm);
      // Values in [-1, 1) with every bit of the mantissa in use, cheaper than std::mt19937 on 12 M of
      // them (this test runs under the sanitizers too).
      std::vector<float> data(count);
      uint32_t state = 2654435761u * static_cast<uint32_t>(rank + 1);
      for (float &x : data) {
        state = state * 1664525u + 1013904223u;
        x = static_cast<float>(state >> 8) / static_cast<float>(1u << 23) - 1.0f;
      }
      comm->allreduce(data.data(), data.data(), count, XFFL_F32, XFFL_SUM, nullptr);
      expect_allreduce_output(*comm, before, reduced_before, count, count * sizeof(float), true,
                              count * sizeof(float) >= from);
      sums[static_cast<size_t>(rank)] = std::move(data);
    }
    for (int root = 0; root < n; ++root) {
      const uint64_t before = streamed_bytes(*comm);
      checks::broadcast(*comm, rank, from / 8, XFFL_F64, root);
      expect_streamed(*comm, before, "broadcast", from / 8, rank == root ? 0 : from);
    }
  }));
  for (size_t r = 1; r < sums.size(); ++r) assert_true(sums[r] == sums[0]);
}

// Sanitized builds leave the 2-rank one (40 MiB buffers) to the ci build: the 3-rank one runs the same
// code on 20 MiB.
void streaming_starts_at_its_crossover_on_2_ranks(void **) {
  if (kSanitized) skip();
  streaming_starts_at_its_crossover(2);
}
void streaming_starts_at_its_crossover_on_3_ranks(void **) { streaming_starts_at_its_crossover(3); }

// An AVG whose type needs no widening (f32) reduces straight into the result and divides it there: a
// pipelined one takes no scratch from the worker (retained stays 0), where a widened one (bf16) does;
// both exact (checks::allreduce against the reference).
void an_average_without_widening_takes_no_scratch(void **) {
  expect_ok(harness::run_ranks(2, [](int rank, int n, xffl::comm::UcxBackend &backend) {
    auto comm = harness::make_group(backend, harness::first_ranks(n), rank, "world group", 24);
    auto &ucx = dynamic_cast<UcxCommunicator &>(*comm);
    const size_t bytes = xffl::comm::algorithm_choice::host_pipeline_allreduce_from(n) + 4096;
    const uint64_t before = ucx.host_pipelined_calls();
    checks::allreduce(*comm, rank, n, bytes / sizeof(float), XFFL_F32, XFFL_AVG, false);
    if (ucx.host_pipelined_calls() != before + 1)
      (xffl::fail)(XFFL_EINTERNAL, "the f32 average of ", bytes, " bytes did not take the rounds");
    if (ucx.scratch_retained() != 0)
      (xffl::fail)(XFFL_EINTERNAL, "the f32 average took ", ucx.scratch_retained(), " bytes of scratch");
    checks::allreduce(*comm, rank, n, bytes / 2, XFFL_BF16, XFFL_AVG, false);
    if (ucx.scratch_retained() == 0) (xffl::fail)(XFFL_EINTERNAL, "the bf16 average took no scratch");
  }));
}

// A member that stays away from a pipelined broadcast after one it took part in: the others fail
// with XFFL_ETIMEOUT naming it, whether it is the root (the others wait for its first part) or not
// (the root waits for it to read before it reuses a slot: three rounds or more).
void a_member_that_stays_away_from_a_pipelined_broadcast_times_out_the_others(void **) {
  for (int away : {0, 2}) {
    std::vector<int> statuses(3, XFFL_OK);
    std::vector<std::string> messages(3);
    harness::Latch done(2);
    expect_ok(harness::run_ranks(3, [&](int rank, int n, xffl::comm::UcxBackend &backend) {
      auto group = harness::make_group(backend, {0, 1, 2}, rank, "replica group (instance 0)", 20);
      const size_t bytes = xffl::comm::algorithm_choice::host_pipeline_broadcast_from(n) * 2;
      checked_copy_collective(*group, "broadcast", bytes, xffl::comm::algorithm_choice::host_pipeline_broadcast_from(n),
                              rank == 0 ? 0 : bytes, false,
                              [&] { checks::broadcast(*group, rank, bytes, XFFL_U8, 0); });  // the segment is set up
      if (rank == away) {
        done.wait();
        return;
      }
      try {
        checks::broadcast(*group, rank, bytes, XFFL_U8, 0);
      } catch (const xffl::Error &error) {
        statuses[static_cast<size_t>(rank)] = error.status();
        messages[static_cast<size_t>(rank)] = error.what();
      }
      done.arrive();
    }, short_timeout()));
    // The root away: both others wait for its first part. Member 2 away: the root waits for it to
    // read round 0 before it stages round 2; member 1 then waits for the root (it fails too, by its
    // own timeout or the root's notice).
    const std::vector<int> waiting = away == 0 ? std::vector<int>{1, 2} : std::vector<int>{0};
    for (int rank : waiting) {
      assert_int_equal(statuses[static_cast<size_t>(rank)], XFFL_ETIMEOUT);
      expect_contains(messages[static_cast<size_t>(rank)],
                      "rank " + std::to_string(rank) + ": timed out after 1000 ms in broadcast on replica group "
                      "(instance 0) waiting for rank " + std::to_string(away));
    }
    if (away == 2) {
      assert_int_not_equal(statuses[1], XFFL_OK);
      expect_contains(messages[1], "rank 1: ");
    }
  }
}

// Two members call a pipelined allreduce with one count, the third with another (both pipelined):
// every member gets XFFL_EINVAL naming both counts (members_disagree above).
void members_disagree_in_the_pipeline(void **) { members_disagree(300000, 300001, 14); }
// The same right after a pipelined allreduce: the members go to their rounds without meeting first,
// and compare signatures once round 0 is staged; or the odd member's call takes the slots and meets
// the others' in the segment (and the other way round).
void members_disagree_in_a_pipeline_that_follows_one(void **) {
  members_disagree(300000, 300001, 21, true);
  members_disagree(300000, 100, 22, true);
  members_disagree(100, 300000, 23, true);
}

// Right after a pipelined allreduce, rank 1 calls another collective (a pipelined broadcast, whose
// root stages round 0 as an allreduce member does; or a barrier) while the others call the allreduce
// again: every member gets XFFL_EINVAL, none hangs, none reads a slot.
void a_member_calls_another_collective_after_a_pipelined_allreduce(void **) {
  for (int other = 0; other < 2; ++other) {
    const int world = 3, odd = 1;
    std::vector<int> statuses(world, XFFL_OK);
    std::vector<std::string> messages(world);
    expect_ok(harness::run_ranks(world, [&](int rank, int n, xffl::comm::UcxBackend &backend) {
      auto comm = harness::make_group(backend, harness::first_ranks(n), rank, "world group",
                                      24 + static_cast<unsigned long long>(other));
      const size_t large = xffl::comm::algorithm_choice::host_pipeline_allreduce_from(n) / sizeof(float);
      checked_allreduce(*comm, rank, n, large, XFFL_F32, XFFL_SUM, false);
      const size_t bytes = xffl::comm::algorithm_choice::host_pipeline_broadcast_from(n);
      std::vector<unsigned char> data(std::max(large * sizeof(float), bytes), 1);
      try {
        if (rank != odd)
          comm->allreduce(data.data(), data.data(), large, XFFL_F32, XFFL_SUM, nullptr);
        else if (other == 0)
          comm->broadcast(data.data(), bytes, XFFL_U8, odd, nullptr);
        else
          comm->barrier();
      } catch (const xffl::Error &error) {
        statuses[static_cast<size_t>(rank)] = error.status();
        messages[static_cast<size_t>(rank)] = error.what();
      }
    }));
    for (int rank = 0; rank < world; ++rank) {
      if (statuses[static_cast<size_t>(rank)] != XFFL_EINVAL)
        fail_msg("other call %d: rank %d: status %d: %s", other, rank, statuses[static_cast<size_t>(rank)],
                 messages[static_cast<size_t>(rank)].c_str());
      expect_contains(messages[static_cast<size_t>(rank)], other == 0 ? "broadcast" : "barrier");
    }
  }
}

// Many pipelined allreduces back to back, of changing sizes and one round or many, then small calls
// and back: every result exact, and a pipelined allreduce goes to its rounds without meeting exactly
// when the call before it on the group was a pipelined allreduce too.
void pipelined_allreduces_back_to_back(void **) {
  for (int world : {2, 4}) {
    expect_ok(harness::run_ranks(world, [](int rank, int n, xffl::comm::UcxBackend &backend) {
      auto comm = harness::make_group(backend, harness::first_ranks(n), rank, "world group", 26);
      const size_t from = xffl::comm::algorithm_choice::host_pipeline_allreduce_from(n) / sizeof(float);
      bool after_pipelined = false;
      auto call = [&](size_t count, xffl_dtype_t dtype, xffl_redop_t op, bool in_place) {
        const uint64_t pipelined = pipelined_calls(*comm), continued = continued_calls(*comm);
        checked_allreduce(*comm, rank, n, count, dtype, op, in_place);
        const bool took = pipelined_calls(*comm) != pipelined, skipped = continued_calls(*comm) != continued;
        if (skipped != (took && after_pipelined))
          (xffl::fail)(XFFL_EINTERNAL, "allreduce of ", count, " ", xffl::comm::dtype_name(dtype),
                       skipped ? " went" : " did not go", " to its rounds without meeting");
        after_pipelined = took;
      };
      for (int round = 0; round < (kSanitized ? 2 : 6); ++round) {
        for (size_t count : {from, from * 3 + 17, from + 1, from * 5}) call(count, XFFL_F32, XFFL_SUM, round % 2 == 0);
        call(1000, XFFL_F32, XFFL_MAX, false);
        call(from, XFFL_BF16, XFFL_AVG, false);  // half the crossover's bytes: the slots
        call(from, XFFL_I32, XFFL_PROD, true);
      }
      comm->barrier();
      after_pipelined = false;
      call(from, XFFL_F32, XFFL_SUM, false);  // after a barrier: the meeting
      if (continued_calls(*comm) == 0) (xffl::fail)(XFFL_EINTERNAL, "no call went to its rounds without meeting");
    }, small_parts()));
  }
}

// A member that stays away from a pipelined allreduce after one it took part in: the others fail
// with XFFL_ETIMEOUT naming it (a member that dies in the middle of one: the fault test
// faults.collective_loss_host_pipeline, across processes).
void a_member_that_stays_away_in_the_pipeline_times_out_the_others(void **) {
  std::vector<int> statuses(3, XFFL_OK);
  std::vector<std::string> messages(3);
  harness::Latch done(2);
  expect_ok(harness::run_ranks(3, [&](int rank, int n, xffl::comm::UcxBackend &backend) {
    auto group = harness::make_group(backend, {0, 1, 2}, rank, "federated group (instance 0)", 16);
    const size_t large = xffl::comm::algorithm_choice::host_pipeline_allreduce_from(n) / sizeof(float);
    checked_allreduce(*group, rank, n, large, XFFL_F32, XFFL_SUM, false);  // the segment is set up
    if (rank == 2) {
      done.wait();  // stays away until the others have given up
      return;
    }
    try {
      checks::allreduce(*group, rank, n, large, XFFL_F32, XFFL_SUM, false);
    } catch (const xffl::Error &error) {
      statuses[static_cast<size_t>(rank)] = error.status();
      messages[static_cast<size_t>(rank)] = error.what();
    }
    done.arrive();
  }, short_timeout()));
  for (int rank : {0, 1}) {
    assert_int_equal(statuses[static_cast<size_t>(rank)], XFFL_ETIMEOUT);
    expect_contains(messages[static_cast<size_t>(rank)],
                    "rank " + std::to_string(rank) + ": timed out after 1000 ms in allreduce on federated group "
                    "(instance 0) waiting for rank 2");
  }
}

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_collective_on_2_ranks),
      cmocka_unit_test(every_collective_on_3_ranks),
      cmocka_unit_test(every_collective_on_4_ranks),
      cmocka_unit_test(random_floats_are_bit_identical_on_every_rank),
      cmocka_unit_test(nan_payloads_are_bit_identical_on_every_rank),
      cmocka_unit_test(calls_over_ucx_in_between),
      cmocka_unit_test(members_disagree_in_the_segment),
      cmocka_unit_test(members_disagree_on_inline_calls),
      cmocka_unit_test(the_segment_gives_back_every_signature_published),
      cmocka_unit_test(small_contributions_sit_beside_the_flag),
      cmocka_unit_test(done_flags_are_read_only_when_no_meeting_says_it),
      cmocka_unit_test(a_member_in_the_segment_disagrees_with_members_over_ucx),
      cmocka_unit_test(members_over_ucx_disagree_with_a_member_in_the_segment),
      cmocka_unit_test(a_member_over_ucx_that_only_receives_sees_the_others_in_the_segment),
      cmocka_unit_test(a_member_that_stays_away_times_out_the_others),
      cmocka_unit_test(pipelined_allreduce_on_2_ranks),
      cmocka_unit_test(pipelined_allreduce_on_3_ranks),
      cmocka_unit_test(pipelined_allreduce_on_4_ranks),
      cmocka_unit_test(pipelined_allreduce_streamed_on_2_ranks),
      cmocka_unit_test(pipelined_allreduce_streamed_on_3_ranks),
      cmocka_unit_test(pipelined_random_floats_are_bit_identical_on_every_rank),
      cmocka_unit_test(pipelined_reduce_scatter_on_2_ranks),
      cmocka_unit_test(pipelined_reduce_scatter_on_3_ranks),
      cmocka_unit_test(pipelined_reduce_scatter_streamed_on_3_ranks),
      cmocka_unit_test(pipelined_broadcast_and_allgather_on_2_ranks),
      cmocka_unit_test(pipelined_broadcast_and_allgather_on_3_ranks),
      cmocka_unit_test(pipelined_broadcast_and_allgather_streamed_on_2_ranks),
      cmocka_unit_test(streaming_starts_at_its_crossover_on_2_ranks),
      cmocka_unit_test(streaming_starts_at_its_crossover_on_3_ranks),
      cmocka_unit_test(an_average_without_widening_takes_no_scratch),
      cmocka_unit_test(a_member_that_stays_away_from_a_pipelined_broadcast_times_out_the_others),
      cmocka_unit_test(pipelined_calls_among_small_ones),
      cmocka_unit_test(members_disagree_in_the_pipeline),
      cmocka_unit_test(members_disagree_in_a_pipeline_that_follows_one),
      cmocka_unit_test(a_member_calls_another_collective_after_a_pipelined_allreduce),
      cmocka_unit_test(pipelined_allreduces_back_to_back),
      cmocka_unit_test(a_member_that_stays_away_in_the_pipeline_times_out_the_others),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
