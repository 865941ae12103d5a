// What rank 0 prints: the nccl-tests style table, or one JSON document with the same numbers.
#ifndef XFFL_TOOLS_XFFL_BENCH_REPORT_H
#define XFFL_TOOLS_XFFL_BENCH_REPORT_H

#include <cstddef>
#include <cstdio>
#include <string>
#include <vector>

#include "options.h"

namespace xffl_bench {

struct Row {
  size_t bytes = 0;
  size_t count = 0;
  double time_us = 0;      // per iteration, mean over ranks
  double time_max_us = 0;  // per iteration, slowest rank
  double cpu_us = 0;       // CPU time per iteration (user + system), mean over ranks; --json only
  double runqueue_us = -1; // time per iteration runnable but without a CPU, mean over ranks; -1 unknown
  double algbw_gbps = 0;   // bytes / time_us / 1e3 (GB/s, 1 GB = 1e9 bytes as in nccl-tests)
  double busbw_gbps = 0;
  long long wrong = -1;    // elements wrong over all ranks; -1 without --check
};

struct RunInfo {
  std::string group;       // group kind, or "federated" for federated_average
  std::string group_description;
  int group_size = 0;
  int peers = 0;           // n of the busbw factor
  int world_size = 0;
  std::string backend;
  double busbw_factor = 0;
};

class Report {
 public:
  Report(const Options &opts, RunInfo info, std::FILE *out) : opts_(opts), info_(std::move(info)), out_(out) {}
  void begin();
  void add(const Row &row);
  void end();

 private:
  double average_busbw() const;
  const Options &opts_;
  RunInfo info_;
  std::FILE *out_;
  std::vector<Row> rows_;
};

}  // namespace xffl_bench

#endif
