// xffl-bench: collective benchmark in the style of nccl-tests, run under xffl-run (or any launcher
// xffl_state_from_env understands). Only the public C API is used, as any application would.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/time.h>

#include <xffl.h>

#include "collective_case.h"
#include "options.h"
#include "report.h"

namespace xffl_bench {
namespace {

int my_rank = -1;

[[noreturn]] void fail(const char *call, xffl_status_t rc) {
  std::fprintf(stderr, "xffl-bench: rank %d: %s: %s: %s\n", my_rank, call, xffl_status_string(rc),
               xffl_last_error_message());
  std::exit(1);
}

void check(const char *call, xffl_status_t rc) {
  if (rc != XFFL_OK) fail(call, rc);
}

struct StateDeleter {
  void operator()(xffl_state_t *st) const { xffl_state_destroy(st); }
};
using StatePtr = std::unique_ptr<xffl_state_t, StateDeleter>;

struct FreeDeleter {
  void operator()(void *p) const { std::free(p); }
};
using Buffer = std::unique_ptr<void, FreeDeleter>;

// Cache-line aligned so that vectorised reductions see the same alignment on every rank and run; with
// --hugepages 2 MiB aligned and marked for transparent huge pages, as an application may choose to do.
Buffer allocate(size_t bytes, bool hugepages) {
  constexpr size_t kHugePage = size_t{2} << 20;
  const size_t alignment = hugepages ? kHugePage : 64;
  const size_t rounded = hugepages ? (bytes + kHugePage - 1) / kHugePage * kHugePage : bytes;
  void *p = nullptr;
  if (posix_memalign(&p, alignment, rounded ? rounded : 64) != 0) {
    std::fprintf(stderr, "xffl-bench: rank %d: cannot allocate %zu bytes\n", my_rank, bytes);
    std::exit(1);
  }
#ifdef MADV_HUGEPAGE
  if (hugepages && rounded && madvise(p, rounded, MADV_HUGEPAGE) != 0)
    std::fprintf(stderr, "xffl-bench: rank %d: madvise(MADV_HUGEPAGE) refused; using normal pages\n", my_rank);
#endif
  return Buffer(p);
}

int get_int(xffl_state_t *st, xffl_attr_t attr, const char *what) {
  int value = 0;
  xffl_status_t rc = xffl_get_int(st, attr, &value);
  if (rc != XFFL_OK) fail(what, rc);
  return value;
}

std::vector<int> members_of(xffl_group_t *group) {
  int size = 0;
  check("xffl_group_size", xffl_group_size(group, &size));
  std::vector<int> ranks(static_cast<size_t>(size));
  size_t len = 0;
  check("xffl_group_ranks", xffl_group_ranks(group, ranks.data(), ranks.size(), &len));
  return ranks;
}

Participant participant(xffl_state_t *st, const Options &opts, RunInfo &info) {
  Participant who;
  who.state = st;
  who.global_rank = get_int(st, XFFL_ATTR_RANK, "xffl_get_int(RANK)");
  xffl_group_kind_t kind = opts.group;
  if (opts.op == Operation::federated_average) {
    if (!xffl_is_federated_scaling_setup(st)) {
      std::fprintf(stderr, "xffl-bench: rank %d: -o federated_average needs federated scaling "
                           "(xffl-run --federated ...)\n", my_rank);
      std::exit(2);
    }
    kind = XFFL_GROUP_FEDERATED;
    who.federated_rank = get_int(st, XFFL_ATTR_FEDERATED_RANK, "xffl_get_int(FEDERATED_RANK)");
    who.peers = get_int(st, XFFL_ATTR_FEDERATED_WORLD_SIZE, "xffl_get_int(FEDERATED_WORLD_SIZE)");
    // The shard this rank holds: its place in the replica with HSDP, in the federation without.
    who.replica_local_rank = xffl_is_hsdp_setup(st)
                                 ? get_int(st, XFFL_ATTR_REPLICA_LOCAL_RANK, "xffl_get_int(REPLICA_LOCAL_RANK)")
                                 : get_int(st, XFFL_ATTR_FEDERATED_LOCAL_RANK, "xffl_get_int(FEDERATED_LOCAL_RANK)");
  }
  xffl_status_t rc = xffl_get_group(st, kind, opts.op == Operation::federated_average ? 0 : opts.instance, &who.group);
  if (rc != XFFL_OK) {
    std::fprintf(stderr, "xffl-bench: rank %d: group %s (instance %d) is not available: %s: %s\n", my_rank,
                 group_name(kind), opts.instance, xffl_status_string(rc), xffl_last_error_message());
    std::exit(2);
  }
  who.members = members_of(who.group);
  check("xffl_group_rank", xffl_group_rank(who.group, &who.group_rank));
  if (opts.op != Operation::federated_average) who.peers = static_cast<int>(who.members.size());

  info.group = opts.op == Operation::federated_average ? "FEDERATED (federated_average)" : group_name(kind);
  info.group_description = xffl_group_description(who.group);
  info.group_size = static_cast<int>(who.members.size());
  info.peers = who.peers;
  info.world_size = get_int(st, XFFL_ATTR_WORLD_SIZE, "xffl_get_int(WORLD_SIZE)");
  const int backend = get_int(st, XFFL_ATTR_BACKEND, "xffl_get_int(BACKEND)");
  info.backend = backend == XFFL_BACKEND_UCX ? "ucx" : backend == XFFL_BACKEND_NCCL ? "nccl" : "none";
  info.busbw_factor = busbw_factor(opts.op, who.peers);
  return who;
}

// CPU seconds (user + system, all threads) this process has used so far.
double cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval &t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

// Seconds the main thread has spent runnable but waiting for a CPU (Linux schedstat; -1 elsewhere).
// With wall and CPU time it splits a call into working, waiting for a core, and sleeping on peers.
double runqueue_seconds() {
  std::FILE *f = std::fopen("/proc/thread-self/schedstat", "r");
  if (!f) return -1;
  unsigned long long on_cpu_ns = 0, waiting_ns = 0;
  const int got = std::fscanf(f, "%llu %llu", &on_cpu_ns, &waiting_ns);
  std::fclose(f);
  return got == 2 ? static_cast<double>(waiting_ns) * 1e-9 : -1;
}

struct LoopTime {
  double wall = 0;      // seconds per call
  double cpu = 0;       // CPU seconds per call: what the call costs on a shared machine, waiting included
  double runqueue = 0;  // seconds per call spent runnable without a CPU; negative if unknown
};

// Per-call time of this rank: a world barrier lines everyone up, then `iters` calls back to back.
LoopTime timed_loop(const CollectiveCase &work, xffl_group_t *world, int iters) {
  check("xffl_barrier(WORLD)", xffl_barrier(world));
  const double cpu_start = cpu_seconds();
  const double runqueue_start = runqueue_seconds();
  const auto start = std::chrono::steady_clock::now();
  for (int k = 0; k < iters; ++k) check("collective", work.run_once());
  const auto stop = std::chrono::steady_clock::now();
  const double cpu_stop = cpu_seconds();
  const double runqueue_stop = runqueue_seconds();
  const double runqueue = runqueue_start < 0 || runqueue_stop < 0 ? -1 : (runqueue_stop - runqueue_start) / iters;
  return LoopTime{std::chrono::duration<double>(stop - start).count() / iters, (cpu_stop - cpu_start) / iters, runqueue};
}

int run(const Options &opts) {
  xffl_state_t *raw = nullptr;
  check("xffl_state_from_env", xffl_state_from_env(&raw));
  StatePtr state(raw);
  my_rank = get_int(raw, XFFL_ATTR_RANK, "xffl_get_int(RANK)");
  xffl_group_t *world = nullptr;
  check("xffl_get_group(WORLD)", xffl_get_group(raw, XFFL_GROUP_WORLD, 0, &world));

  RunInfo info;
  const Participant who = participant(raw, opts, info);
  const std::vector<size_t> sizes = size_sequence(opts);
  const size_t element = dtype_size(opts.dtype);
  size_t send_capacity = 0, recv_capacity = 0;
  for (size_t bytes : sizes) {
    const Layout layout = layout_for(opts.op, opts.dtype, bytes, info.group_size);
    send_capacity = std::max(send_capacity, layout.send_count * element);
    recv_capacity = std::max(recv_capacity, layout.recv_count * element);
  }
  Buffer send = allocate(send_capacity, opts.hugepages), recv = allocate(recv_capacity, opts.hugepages);

  const bool printer = my_rank == 0;
  Report report(opts, info, stdout);
  if (printer) report.begin();
  for (size_t bytes : sizes) {
    const Layout layout = layout_for(opts.op, opts.dtype, bytes, info.group_size);
    const CollectiveCase work(opts, who, layout, send.get(), recv.get());
    work.prepare();
    long long wrong = -1;
    if (opts.check) {
      check("collective (check run)", work.run_once());
      wrong = static_cast<long long>(work.count_wrong());
      check("xffl_allreduce(#wrong)", xffl_allreduce(world, &wrong, &wrong, 1, XFFL_I64, XFFL_SUM, nullptr));
      work.prepare();
    }
    for (int k = 0; k < opts.warmup; ++k) check("collective (warmup)", work.run_once());
    const LoopTime measured = timed_loop(work, world, opts.iters);
    double sum = measured.wall, slowest = measured.wall, cpu = measured.cpu, runqueue = measured.runqueue;
    check("xffl_allreduce(time)", xffl_allreduce(world, &sum, &sum, 1, XFFL_F64, XFFL_SUM, nullptr));
    check("xffl_allreduce(cpu)", xffl_allreduce(world, &cpu, &cpu, 1, XFFL_F64, XFFL_SUM, nullptr));
    // MIN first: one rank without schedstat makes the whole figure unknown.
    double runqueue_known = runqueue;
    check("xffl_allreduce(runqueue)", xffl_allreduce(world, &runqueue_known, &runqueue_known, 1, XFFL_F64, XFFL_MIN, nullptr));
    check("xffl_allreduce(runqueue)", xffl_allreduce(world, &runqueue, &runqueue, 1, XFFL_F64, XFFL_SUM, nullptr));
    check("xffl_allreduce(time)", xffl_allreduce(world, &slowest, &slowest, 1, XFFL_F64, XFFL_MAX, nullptr));
    Row row;
    row.bytes = layout.bytes;
    row.count = layout.count;
    row.time_us = sum / info.world_size * 1e6;
    row.time_max_us = slowest * 1e6;
    row.cpu_us = cpu / info.world_size * 1e6;
    row.runqueue_us = runqueue_known < 0 ? -1 : runqueue / info.world_size * 1e6;
    row.algbw_gbps = row.time_us > 0 ? static_cast<double>(layout.bytes) / row.time_us / 1e3 : 0;
    row.busbw_gbps = row.algbw_gbps * info.busbw_factor;
    row.wrong = wrong;
    if (printer) report.add(row);
  }
  if (printer) report.end();
  check("xffl_barrier(WORLD)", xffl_barrier(world));
  return 0;
}

}  // namespace
}  // namespace xffl_bench

int main(int argc, char **argv) {
  using namespace xffl_bench;
  Options opts;
  try {
    opts = parse_options(argc, argv);
  } catch (const UsageError &e) {
    std::fprintf(stderr, "xffl-bench: error: %s\n", e.what());
    return 2;
  }
  if (opts.show_help) {
    std::fputs(usage_text(), stdout);
    return 0;
  }
  return run(opts);
}
