// bench-topology: what one rank pays to plan its place in a big federated job, through the public
// C API: xffl_state_create + xffl_set_global + xffl_federated_scaling (G unequal groups, HSDP) +
// xffl_state_destroy. The plan is O(G) per rank, so the cost must not grow with the world size W:
// the goal is median(W = 2^20) / median(W = 2^10) <= 2.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <xffl.h>

namespace {

struct Config {
  int groups = 1000;
  int samples = 10001;
  int min_log2 = 10, max_log2 = 20;
  unsigned seed = 42;
};

[[noreturn]] void die(const char *what) {
  std::fprintf(stderr, "bench-topology: %s: %s\n", what, xffl_last_error_message());
  std::exit(1);
}

// The largest of 4, 2, 1 that leaves every one of G groups at least one replica.
int hsdp_for(long long world, int groups) {
  for (int s : {4, 2, 1})
    if (static_cast<long long>(groups) * s <= world) return s;
  return 0;
}

// G unequal sizes, each a positive multiple of hsdp, summing to world exactly: every group gets one
// replica, the remaining replicas go to groups drawn with skewed weights (a few big facilities,
// many small ones, as in real federations).
std::vector<int> unequal_sizes(int world, int groups, int hsdp, std::mt19937 &rng) {
  std::vector<int> replicas(static_cast<std::size_t>(groups), 1);
  std::vector<double> weights(static_cast<std::size_t>(groups));
  std::exponential_distribution<double> skew(1.0);
  for (auto &w : weights) w = std::pow(skew(rng), 2.0) + 1e-3;
  std::discrete_distribution<int> pick(weights.begin(), weights.end());
  for (int left = world / hsdp - groups; left > 0; --left) ++replicas[static_cast<std::size_t>(pick(rng))];
  std::vector<int> sizes;
  sizes.reserve(replicas.size());
  for (int r : replicas) sizes.push_back(r * hsdp);
  return sizes;
}

double plan_one_rank_us(int world, int rank, const std::vector<int> &sizes, int hsdp) {
  const auto start = std::chrono::steady_clock::now();
  xffl_state_t *st = nullptr;
  if (xffl_state_create(&st) != XFFL_OK) die("xffl_state_create");
  if (xffl_set_global(st, XFFL_BACKEND_NONE, XFFL_DEVICE_CPU, "127.0.0.1", 0, rank, world) != XFFL_OK)
    die("xffl_set_global");
  if (xffl_federated_scaling(st, sizes.data(), sizes.size(), hsdp) != XFFL_OK) die("xffl_federated_scaling");
  xffl_state_destroy(st);
  const auto stop = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::micro>(stop - start).count();
}

double percentile(std::vector<double> values, double p) {
  const auto k = static_cast<std::size_t>(p * static_cast<double>(values.size() - 1));
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(k), values.end());
  return values[k];
}

double max_rss_mib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // Linux reports KiB
}

int parse_positive(const char *flag, const char *text) {
  char *end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (!*text || *end || value < 1 || value > 1000000) {
    std::fprintf(stderr, "bench-topology: %s expects a positive integer, got '%s'\n", flag, text);
    std::exit(2);
  }
  return static_cast<int>(value);
}

}  // namespace

int main(int argc, char **argv) {
  Config config;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--help" || flag == "-h") {
      std::printf("usage: bench-topology [--groups G] [--samples N] [--min-log2 A] [--max-log2 B] [--seed S]\n"
                  "Per-rank plan cost for W = 2^A .. 2^B (default 2^10 .. 2^20) with G unequal federated groups\n"
                  "(default 1000): median over N random ranks (default 10001). Goal: ratio largest/smallest W <= 2.\n");
      return 0;
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr, "bench-topology: %s needs a value (see --help)\n", flag.c_str());
      return 2;
    }
    const int value = parse_positive(flag.c_str(), argv[++i]);
    if (flag == "--groups") config.groups = value;
    else if (flag == "--samples") config.samples = value;
    else if (flag == "--min-log2") config.min_log2 = std::min(value, 30);
    else if (flag == "--max-log2") config.max_log2 = std::min(value, 30);
    else if (flag == "--seed") config.seed = static_cast<unsigned>(value);
    else {
      std::fprintf(stderr, "bench-topology: unknown argument '%s' (see --help)\n", flag.c_str());
      return 2;
    }
  }

  int major = 0, minor = 0, patch = 0;
  xffl_version(&major, &minor, &patch);
  std::printf("bench-topology (xffl %d.%d.%d): per-rank plan = state_create + set_global + federated_scaling + destroy\n",
              major, minor, patch);
  std::printf("G = %d unequal federated groups (sizes multiples of hsdp, summing to W), median of %d random ranks\n\n",
              config.groups, config.samples);
  std::printf("%10s %5s %9s %9s %11s %11s %11s %11s\n", "W", "hsdp", "min size", "max size", "median us", "p10 us",
              "p90 us", "maxrss MiB");

  std::mt19937 rng(config.seed);
  double first_median = 0, last_median = 0;
  int first_log2 = -1, last_log2 = -1;
  for (int lg = config.min_log2; lg <= config.max_log2; ++lg) {
    const int world = 1 << lg;
    const int hsdp = hsdp_for(world, config.groups);
    if (hsdp == 0) {
      std::printf("%10d  (skipped: fewer ranks than groups)\n", world);
      continue;
    }
    const std::vector<int> sizes = unequal_sizes(world, config.groups, hsdp, rng);
    std::uniform_int_distribution<int> any_rank(0, world - 1);
    for (int warm = 0; warm < 50; ++warm) plan_one_rank_us(world, any_rank(rng), sizes, hsdp);
    std::vector<double> us;
    us.reserve(static_cast<std::size_t>(config.samples));
    for (int s = 0; s < config.samples; ++s) us.push_back(plan_one_rank_us(world, any_rank(rng), sizes, hsdp));
    const double median = percentile(us, 0.5);
    const auto [lo, hi] = std::minmax_element(sizes.begin(), sizes.end());
    std::printf("%10d %5d %9d %9d %11.2f %11.2f %11.2f %11.1f\n", world, hsdp, *lo, *hi, median, percentile(us, 0.1),
                percentile(us, 0.9), max_rss_mib());
    if (first_log2 < 0) {
      first_log2 = lg;
      first_median = median;
    }
    last_log2 = lg;
    last_median = median;
  }
  if (first_log2 >= 0 && last_log2 > first_log2) {
    const double ratio = last_median / first_median;
    std::printf("\nratio median(W = 2^%d) / median(W = 2^%d) = %.2f (goal <= 2: %s)\n", last_log2, first_log2, ratio,
                ratio <= 2.0 ? "met" : "MISSED");
  }
  return 0;
}
