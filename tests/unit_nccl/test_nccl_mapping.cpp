// xffl's dtypes and reductions in NCCL's words (AVG, bf16 and f16 native), and CUDA's refusals as
// XFFL_EUNSUPPORTED / XFFL_EBACKEND carrying CUDA's own words.

#include "comm/nccl/nccl_types.h"
#include "nccl_harness.h"

// cmocka after the C++ headers: its fail() macro would clash with xffl::fail.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
extern "C" {  // cmocka has no extern "C" of its own
#include <cmocka.h>
}

using namespace xffl;
using namespace xffl::comm;
using xffl::test::FakeNccl;

namespace {

void dtypes_and_ops_map_to_nccl(void **) {
  assert_int_equal(nccl::to_nccl_type(XFFL_F32), nccl::kNcclFloat32);
  assert_int_equal(nccl::to_nccl_type(XFFL_F64), nccl::kNcclFloat64);
  assert_int_equal(nccl::to_nccl_type(XFFL_F16), nccl::kNcclFloat16);
  assert_int_equal(nccl::to_nccl_type(XFFL_BF16), nccl::kNcclBfloat16);
  assert_int_equal(nccl::to_nccl_type(XFFL_I8), nccl::kNcclInt8);
  assert_int_equal(nccl::to_nccl_type(XFFL_U8), nccl::kNcclUint8);
  assert_int_equal(nccl::to_nccl_type(XFFL_I32), nccl::kNcclInt32);
  assert_int_equal(nccl::to_nccl_type(XFFL_I64), nccl::kNcclInt64);
  assert_int_equal(nccl::to_nccl_op(XFFL_SUM), nccl::kNcclSum);
  assert_int_equal(nccl::to_nccl_op(XFFL_AVG), nccl::kNcclAvg);
  assert_int_equal(nccl::to_nccl_op(XFFL_MIN), nccl::kNcclMin);
  assert_int_equal(nccl::to_nccl_op(XFFL_MAX), nccl::kNcclMax);
  assert_int_equal(nccl::to_nccl_op(XFFL_PROD), nccl::kNcclProd);
}

void collectives_pass_native_types_roots_and_counts(void **) {
  auto fake = std::make_shared<FakeNccl>(1);
  auto outcomes = harness::run_ranks(fake, 2, 20000, [&](int rank, NcclBackend &backend) {
    GroupSpec world{topology::RankList::progression(0, 1, 2), rank, "world group", 1};
    backend.register_world(world);
    auto group = backend.create_communicator(world);
    unsigned short half[8] = {};
    group->allreduce(half, half, 8, XFFL_BF16, XFFL_AVG, nullptr);
    group->reduce_scatter(half, half + 4, 2, XFFL_F16, XFFL_MAX, nullptr);
    group->broadcast(half, 3, XFFL_BF16, 1, nullptr);
  });
  assert_all_ok(outcomes);
  std::vector<xffl::test::FakeCall> mine;
  for (const auto &call : fake->calls())
    if (call.rank == 0 && (call.name == "allreduce" || call.name == "reduce_scatter" || call.name == "broadcast"))
      mine.push_back(call);
  assert_int_equal(mine.size(), 3);
  assert_int_equal(mine[0].type, nccl::kNcclBfloat16);
  assert_int_equal(mine[0].op, nccl::kNcclAvg);
  assert_int_equal(mine[0].count, 8);
  assert_int_equal(mine[1].type, nccl::kNcclFloat16);
  assert_int_equal(mine[1].op, nccl::kNcclMax);
  assert_int_equal(mine[1].count, 2);
  assert_int_equal(mine[2].root, 1);
  assert_int_equal(mine[2].count, 3);
}

void status_of(const std::shared_ptr<FakeNccl> &fake, xffl_status_t expected, const char *words) {
  auto outcomes = harness::run_ranks(fake, 1, 1000, [](int, NcclBackend &) {});
  assert_int_equal(outcomes[0].status, expected);
  if (outcomes[0].message.find(words) == std::string::npos)
    fail_msg("'%s' does not carry '%s'", outcomes[0].message.c_str(), words);
}

void no_usable_cuda_is_unsupported_with_cudas_words(void **) {
  status_of(std::make_shared<FakeNccl>(0), XFFL_EUNSUPPORTED, "no CUDA-capable device is detected");
  auto no_driver = std::make_shared<FakeNccl>(1);
  no_driver->set_device_count_error(nccl::kCudaErrorInsufficientDriver);
  status_of(no_driver, XFFL_EUNSUPPORTED, "CUDA driver version is insufficient");
  auto broken = std::make_shared<FakeNccl>(1);
  broken->set_device_count_error(999);
  status_of(broken, XFFL_EBACKEND, "cudaError 999");
  assert_int_equal(nccl::status_of_async_nccl(nccl::kNcclSystemError), XFFL_EPEER);
  assert_int_equal(nccl::status_of_async_nccl(nccl::kNcclInvalidUsage), XFFL_EBACKEND);
}

}  // namespace

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(dtypes_and_ops_map_to_nccl),
      cmocka_unit_test(collectives_pass_native_types_roots_and_counts),
      cmocka_unit_test(no_usable_cuda_is_unsupported_with_cudas_words),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
