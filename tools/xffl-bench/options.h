// Command line of xffl-bench, in the spelling of nccl-tests (-b -e -f -n -w -c) plus xffl's group
// and operation names. Parsing is pure: no state, no I/O beyond the returned error text.
#ifndef XFFL_TOOLS_XFFL_BENCH_OPTIONS_H
#define XFFL_TOOLS_XFFL_BENCH_OPTIONS_H

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include <xffl.h>

namespace xffl_bench {

enum class Operation { allreduce, broadcast, allgather, reduce_scatter, federated_average };

struct Options {
  size_t min_bytes = 32 << 20;
  size_t max_bytes = 32 << 20;
  double factor = 2.0;  // next size = size * factor (nccl-tests' -f)
  Operation op = Operation::allreduce;
  xffl_dtype_t dtype = XFFL_F32;
  xffl_redop_t redop = XFFL_SUM;
  int iters = 20;
  int warmup = 5;
  xffl_group_kind_t group = XFFL_GROUP_WORLD;
  int instance = 0;  // which stream instance of FEDERATED / REPLICA
  bool check = false;
  bool json = false;
  bool hugepages = false;  // madvise the buffers for transparent huge pages
  bool show_help = false;
};

// A command-line mistake; main prints it after "xffl-bench: error: " and exits 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

Options parse_options(int argc, const char *const *argv);
const char *usage_text();

// "64M" -> 67108864; suffixes K, M, G (powers of 1024), optional trailing B; throws UsageError.
size_t parse_size(const std::string &option, const std::string &text);

// The byte sizes to run, from min to max multiplying by factor (always including min; max when reached).
std::vector<size_t> size_sequence(const Options &opts);

const char *operation_name(Operation op);
const char *dtype_name(xffl_dtype_t dtype);
const char *redop_name(xffl_redop_t redop);
const char *group_name(xffl_group_kind_t kind);
size_t dtype_size(xffl_dtype_t dtype);

}  // namespace xffl_bench

#endif
