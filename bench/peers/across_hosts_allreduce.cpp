// The allreduce schedules of the path across hosts (UCX messages), each forced at every size, side by
// side: recursive doubling, halving-doubling and the ring (the crossovers of algorithm_choice.h,
// small_allreduce_bytes and halving_allreduce_bytes). Ranks are threads of this process, each with its
// own UCX worker, as in tests/unit_comm (ucx_harness.h); the members never read each other's memory
// (SingleCopy::never), so the messages go over what UCX_TLS allows: shared memory by default,
// UCX_TLS=tcp for TCP over loopback. Not a test: it prints a table, medians of the runs, schedules
// interleaved run by run.
//
//   across_hosts_allreduce [--ranks 4,8] [--min 16K] [--max 16M] [--repeat 5] [--iters-bytes 64M]
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "comm/algorithms/collectives.h"
#include "options.h"  // xffl-bench's: parse_size
#include "ucx_harness.h"

namespace {

using xffl::comm::algorithms::AllreduceSchedule;
using xffl::comm::algorithms::Tuning;

struct Settings {
  std::vector<int> ranks{4, 8};
  size_t min_bytes = 16 * 1024, max_bytes = 16 * 1024 * 1024;
  int repeat = 5;
  size_t iters_bytes = 64 * 1024 * 1024;  // timed calls per size: at least this many bytes, 5 .. 1000 calls
};

const char *name(AllreduceSchedule schedule) {
  switch (schedule) {
    case AllreduceSchedule::recursive_doubling: return "doubling";
    case AllreduceSchedule::halving_doubling: return "halving";
    case AllreduceSchedule::ring: return "ring";
  }
  return "?";
}

Tuning forcing(AllreduceSchedule schedule) {
  Tuning tuning;
  tuning.single_copy_on_host = xffl::comm::algorithms::SingleCopy::never;
  tuning.small_allreduce_bytes = schedule == AllreduceSchedule::recursive_doubling ? SIZE_MAX : 0;
  tuning.halving_allreduce_bytes = schedule == AllreduceSchedule::halving_doubling ? SIZE_MAX : 0;
  return tuning;
}

double thread_cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_THREAD, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-6;
}

struct Sample {
  double us_per_call = 0;      // slowest rank
  double cpu_us_per_call = 0;  // mean over ranks
};

// One launch of `world` thread-ranks: every size once, the schedule forced; per size, the time per
// call of the slowest rank and the CPU per call averaged over ranks.
std::vector<Sample> run_once(int world, AllreduceSchedule schedule, const std::vector<size_t> &sizes,
                             const Settings &settings) {
  std::vector<std::vector<Sample>> per_rank(static_cast<size_t>(world), std::vector<Sample>(sizes.size()));
  harness::Options options;
  options.tuning = forcing(schedule);
  options.timeout_ms = 120000;
  const std::string errors = harness::run_ranks(world, [&](int rank, int n, xffl::comm::UcxBackend &backend) {
    auto comm = harness::make_group(backend, harness::first_ranks(n), rank, "world group", 1);
    for (size_t s = 0; s < sizes.size(); ++s) {
      const size_t count = sizes[s] / sizeof(float);
      std::vector<float> data(count, 1.0f);
      const size_t calls = std::clamp<size_t>(settings.iters_bytes / sizes[s], 5, 1000);
      for (size_t w = 0; w < calls / 10 + 2; ++w)
        comm->allreduce(data.data(), data.data(), count, XFFL_F32, XFFL_AVG, nullptr);
      comm->barrier();
      const double cpu = thread_cpu_seconds();
      const auto start = std::chrono::steady_clock::now();
      for (size_t c = 0; c < calls; ++c) comm->allreduce(data.data(), data.data(), count, XFFL_F32, XFFL_AVG, nullptr);
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      Sample &sample = per_rank[static_cast<size_t>(rank)][s];
      sample.us_per_call = seconds / static_cast<double>(calls) * 1e6;
      sample.cpu_us_per_call = (thread_cpu_seconds() - cpu) / static_cast<double>(calls) * 1e6;
    }
  }, options);
  if (!errors.empty()) {
    std::fprintf(stderr, "%s", errors.c_str());
    std::exit(1);
  }
  std::vector<Sample> samples(sizes.size());
  for (size_t s = 0; s < sizes.size(); ++s) {
    for (const auto &rank : per_rank) {
      samples[s].us_per_call = std::max(samples[s].us_per_call, rank[s].us_per_call);
      samples[s].cpu_us_per_call += rank[s].cpu_us_per_call / world;
    }
  }
  return samples;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

std::string size_name(size_t bytes) {
  if (bytes >= (size_t{1} << 20)) return std::to_string(bytes >> 20) + "M";
  return std::to_string(bytes >> 10) + "K";
}

int usage(const char *program) {
  std::fprintf(stderr, "usage: %s [--ranks 4,8] [--min 16K] [--max 16M] [--repeat 5] [--iters-bytes 64M]\n", program);
  return 2;
}

}  // namespace

int main(int argc, char **argv) {
  Settings settings;
  try {
    for (int i = 1; i < argc; i += 2) {
      const std::string flag = argv[i];
      if (i + 1 == argc) return usage(argv[0]);  // every flag takes a value
      if (flag == "--ranks") {
        settings.ranks.clear();
        for (char *part = std::strtok(argv[i + 1], ","); part; part = std::strtok(nullptr, ","))
          settings.ranks.push_back(std::atoi(part));
      } else if (flag == "--min") {
        settings.min_bytes = xffl_bench::parse_size(flag, argv[i + 1]);
      } else if (flag == "--max") {
        settings.max_bytes = xffl_bench::parse_size(flag, argv[i + 1]);
      } else if (flag == "--repeat") {
        settings.repeat = std::atoi(argv[i + 1]);
      } else if (flag == "--iters-bytes") {
        settings.iters_bytes = xffl_bench::parse_size(flag, argv[i + 1]);
      } else {
        return usage(argv[0]);
      }
    }
  } catch (const xffl_bench::UsageError &error) {
    std::fprintf(stderr, "%s\n", error.what());
    return usage(argv[0]);
  }
  std::vector<size_t> sizes;
  for (size_t bytes = settings.min_bytes; bytes <= settings.max_bytes; bytes *= 2) sizes.push_back(bytes);
  const AllreduceSchedule schedules[] = {AllreduceSchedule::recursive_doubling, AllreduceSchedule::halving_doubling,
                                         AllreduceSchedule::ring};
  const char *tls = std::getenv("UCX_TLS");
  std::printf("allreduce f32 across hosts (UCX messages, UCX_TLS=%s), thread-ranks, median of %d runs "
              "interleaved\n",
              tls ? tls : "default", settings.repeat);
  for (int world : settings.ranks) {
    // [schedule][size] -> the runs
    std::vector<std::vector<std::vector<Sample>>> runs(3, std::vector<std::vector<Sample>>(sizes.size()));
    for (int r = 0; r < settings.repeat; ++r)
      for (size_t k = 0; k < 3; ++k) {
        const std::vector<Sample> samples = run_once(world, schedules[k], sizes, settings);
        for (size_t s = 0; s < sizes.size(); ++s) runs[k][s].push_back(samples[s]);
      }
    double load[3] = {0, 0, 0};
    getloadavg(load, 3);
    std::printf("\n%d ranks (load at the end %.2f)\n%8s", world, load[0], "size");
    for (const AllreduceSchedule schedule : schedules) std::printf(" %10s us %7s cpu", name(schedule), "");
    std::printf("   halving/ring halving/doubling (time)\n");
    for (size_t s = 0; s < sizes.size(); ++s) {
      std::printf("%8s", size_name(sizes[s]).c_str());
      double time[3];
      for (size_t k = 0; k < 3; ++k) {
        std::vector<double> us, cpu;
        for (const Sample &sample : runs[k][s]) us.push_back(sample.us_per_call), cpu.push_back(sample.cpu_us_per_call);
        time[k] = median(us);
        std::printf(" %13.1f %11.1f", time[k], median(cpu));
      }
      std::printf("   %12.2f %16.2f\n", time[1] / time[2], time[1] / time[0]);
    }
  }
  return 0;
}
