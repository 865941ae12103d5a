// Groups on the UCX backend: subsets, custom member orders, disjoint groups at the same time,
// groups sharing members used alternately (their messages must never mix), K instances of one
// member list, and the last tag of the 20 bits (tags beyond are refused). Creating a group sends nothing: a member that never uses
// its group does not hold the others up. A group that crosses facilities runs its schedules with the
// crossing's window.
#include "collective_checks.h"
#include "comm/ucx/ucx_communicator.h"
#include "ucx_harness.h"

// cmocka last: its fail() macro would rewrite xffl::fail in the headers above. It has no
// extern "C" of its own.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" {
#include <cmocka.h>
}

namespace {

void expect_ok(const std::string &errors) {
  if (!errors.empty()) fail_msg("%s", errors.c_str());
}

int index_in(const std::vector<int> &members, int rank) {
  for (size_t i = 0; i < members.size(); ++i)
    if (members[i] == rank) return static_cast<int>(i);
  return -1;
}

void subsets_in_custom_orders(void **) {
  expect_ok(harness::run_ranks(4, [](int rank, int, xffl::comm::UcxBackend &backend) {
    // {1, 3} and {2, 0} at the same time, then {3, 0, 2} without rank 1.
    const std::vector<int> pair = rank % 2 ? std::vector<int>{1, 3} : std::vector<int>{2, 0};
    auto pair_comm = harness::make_group(backend, pair, rank, "pair group", 10 + rank % 2);
    checks::full_matrix(*pair_comm, index_in(pair, rank), 2, {1, 600});
    const std::vector<int> trio = {3, 0, 2};
    if (index_in(trio, rank) >= 0) {
      auto trio_comm = harness::make_group(backend, trio, rank, "trio group", 20);
      checks::full_matrix(*trio_comm, index_in(trio, rank), 3, {5, 700});
    }
  }, [] {
    harness::Options options;
    options.tuning.chunk_bytes = 1024;
    options.tuning.small_allreduce_bytes = 512;
    options.tuning.small_broadcast_bytes = 512;
    return options;
  }()));
}

// Both groups hold every rank, one in reverse order; their collectives have the same sequence
// numbers and senders' indices, so only the group's tag keeps them apart. Fast ranks run ahead into
// the next group's collective while slow ones still finish the previous one.
void groups_sharing_members_alternate_without_mixing(void **) {
  expect_ok(harness::run_ranks(4, [](int rank, int n, xffl::comm::UcxBackend &backend) {
    const std::vector<int> forward = {0, 1, 2, 3}, backward = {3, 2, 1, 0};
    auto a = harness::make_group(backend, forward, rank, "group A", 100);
    auto b = harness::make_group(backend, backward, rank, "group B", 101);
    auto c = harness::make_group(backend, forward, rank, "group A instance 2", (1ull << 20) - 1);  // the last tag
    for (int round = 0; round < 20; ++round) {
      checks::allreduce(*a, index_in(forward, rank), n, 33 + round, XFFL_I32, XFFL_SUM, round % 2);
      checks::allreduce(*b, index_in(backward, rank), n, 35 + round, XFFL_I32, XFFL_SUM, round % 2);
      checks::broadcast(*c, index_in(forward, rank), 17, XFFL_F32, round % n);
      checks::allgather(*b, index_in(backward, rank), n, 9, XFFL_I64, false);
    }
  }));
}

void creating_a_group_sends_nothing(void **) {
  expect_ok(harness::run_ranks(3, [](int rank, int, xffl::comm::UcxBackend &backend) {
    // Everyone creates the world group, only ranks 0 and 2 use their pair: rank 1 never calls anything.
    auto world = harness::make_group(backend, {0, 1, 2}, rank, "world group", 1);
    if (rank != 1) {
      auto pair = harness::make_group(backend, {0, 2}, rank, "pair group", 2);
      checks::allreduce(*pair, rank / 2, 2, 100, XFFL_F64, XFFL_AVG, false);
      pair->barrier();
    }
  }));
}

// GroupSpec::crosses_facilities: the ring of a group that crosses facilities keeps
// Tuning::crossing_window chunks in flight, one that does not keeps Tuning::window, on the same members
// and the same worker. Seen in the staging the worker keeps after each call (one 1 MiB slot per chunk in
// flight, in whole 2 MiB pages): 1 slot for the plain group, 4 once the crossing group has run, on a call
// of 4.5 chunks per member. Both exact.
void a_group_that_crosses_facilities_takes_the_crossing_window(void **) {
  expect_ok(harness::run_ranks(2, [](int rank, int, xffl::comm::UcxBackend &backend) {
    constexpr size_t kMiB = size_t{1} << 20;
    xffl::comm::algorithms::Tuning tuning;
    tuning.chunk_bytes = kMiB;
    tuning.window = 1;
    tuning.crossing_window = 4;
    tuning.single_copy_on_host = xffl::comm::algorithms::SingleCopy::never;  // the ring, as across hosts
    backend.set_tuning(tuning);
    auto plain = harness::make_group(backend, {0, 1}, rank, "replica group", 30);
    xffl::comm::GroupSpec spec;
    spec.members = xffl::topology::RankList::explicit_ranks({0, 1});
    spec.my_index = rank;
    spec.description = "federated group";
    spec.tag = 31;
    spec.crosses_facilities = true;
    auto crossing = backend.create_communicator(spec);
    auto retained = [&] { return dynamic_cast<xffl::comm::ucx::UcxCommunicator &>(*plain).scratch_retained(); };
    const size_t count = 9 * kMiB / 4 + 3;  // 9 MiB of f32: 4.5 chunks per member
    checks::allreduce(*plain, rank, 2, count, XFFL_F32, XFFL_SUM, false);
    if (retained() > 2 * kMiB) (xffl::fail)(XFFL_EINTERNAL, "the plain group staged ", retained(), " bytes: want 1 slot");
    checks::allreduce(*crossing, rank, 2, count, XFFL_F32, XFFL_SUM, false);
    if (retained() < 4 * kMiB)
      (xffl::fail)(XFFL_EINTERNAL, "the crossing group staged ", retained(), " bytes: want 4 slots");
    checks::allreduce(*plain, rank, 2, count, XFFL_F32, XFFL_SUM, false);
  }));
}

void invalid_group_specs_are_refused(void **) {
  expect_ok(harness::run_ranks(2, [](int rank, int, xffl::comm::UcxBackend &backend) {
    xffl::comm::GroupSpec spec;
    spec.members = xffl::topology::RankList::explicit_ranks({0, 1});
    spec.my_index = 1 - rank;  // not my own index
    spec.description = "wrong group";
    try {
      backend.create_communicator(spec);
      (xffl::fail)(XFFL_EINTERNAL, "a spec with the wrong index was accepted");
    } catch (const xffl::Error &error) {
      if (error.status() != XFFL_EINTERNAL) throw;
    }
    spec.members = xffl::topology::RankList::explicit_ranks({rank, 5});
    spec.my_index = 0;
    try {
      backend.create_communicator(spec);
      (xffl::fail)(XFFL_EINTERNAL, "a member outside the world was accepted");
    } catch (const xffl::Error &error) {
      if (std::string(error.what()).find("rank 5") == std::string::npos) throw;
    }
    // Tags are below 2^20 by construction (communicator.h): one beyond is a broken invariant, never
    // folded into 20 bits where it could meet another group's.
    spec.members = xffl::topology::RankList::explicit_ranks({0, 1});
    spec.my_index = rank;
    spec.tag = 1ull << 20;
    try {
      backend.create_communicator(spec);
      (xffl::fail)(XFFL_EINTERNAL, "a tag beyond 20 bits was accepted");
    } catch (const xffl::Error &error) {
      if (error.status() != XFFL_EINTERNAL || std::string(error.what()).find("outside [0, 2^20)") == std::string::npos)
        throw;
    }
  }));
}

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(subsets_in_custom_orders),
      cmocka_unit_test(groups_sharing_members_alternate_without_mixing),
      cmocka_unit_test(creating_a_group_sends_nothing),
      cmocka_unit_test(a_group_that_crosses_facilities_takes_the_crossing_window),
      cmocka_unit_test(invalid_group_specs_are_refused),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
