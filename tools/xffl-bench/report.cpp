#include "report.h"

#include <cinttypes>

#include "collective_case.h"

namespace xffl_bench {
namespace {

std::string json_string(const std::string &text) {
  std::string out = "\"";
  for (char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char escaped[8];
          std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
          out += escaped;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

// federated_average always takes the mean, whatever -r says.
const char *redop_column(const Options &opts) {
  if (opts.op == Operation::federated_average) return "avg";
  return reduces(opts.op) ? redop_name(opts.redop) : "none";
}

}  // namespace

void Report::begin() {
  if (opts_.json) return;  // the document is written whole at the end
  std::fprintf(out_, "# xffl-bench: %s, backend %s, %d ranks\n", operation_name(opts_.op), info_.backend.c_str(),
               info_.world_size);
  std::fprintf(out_, "# group %s (%d members: %s), busbw factor %.4f (n = %d)\n", info_.group.c_str(),
               info_.group_size, info_.group_description.c_str(), info_.busbw_factor, info_.peers);
  std::fprintf(out_, "# iters %d, warmup %d, check %s\n#\n", opts_.iters, opts_.warmup, opts_.check ? "on" : "off");
  std::fprintf(out_, "#%12s %13s %6s %6s %11s %8s %8s %8s\n", "size", "count", "type", "redop", "time", "algbw",
               "busbw", "#wrong");
  std::fprintf(out_, "#%12s %13s %6s %6s %11s %8s %8s %8s\n", "(B)", "(elements)", "", "", "(us)", "(GB/s)", "(GB/s)",
               "");
  std::fflush(out_);
}

void Report::add(const Row &row) {
  rows_.push_back(row);
  if (opts_.json) return;
  char wrong[32];
  if (row.wrong < 0)
    std::snprintf(wrong, sizeof wrong, "N/A");
  else
    std::snprintf(wrong, sizeof wrong, "%lld", row.wrong);
  std::fprintf(out_, " %12zu %13zu %6s %6s %11.1f %8.2f %8.2f %8s\n", row.bytes, row.count, dtype_name(opts_.dtype),
               redop_column(opts_), row.time_us, row.algbw_gbps, row.busbw_gbps, wrong);
  std::fflush(out_);
}

double Report::average_busbw() const {
  double sum = 0;
  for (const Row &row : rows_) sum += row.busbw_gbps;
  return rows_.empty() ? 0 : sum / static_cast<double>(rows_.size());
}

void Report::end() {
  if (!opts_.json) {
    long long wrong = 0;
    bool checked = false;
    for (const Row &row : rows_)
      if (row.wrong >= 0) {
        wrong += row.wrong;
        checked = true;
      }
    if (checked) std::fprintf(out_, "# Out of bounds values : %lld %s\n", wrong, wrong ? "FAILED" : "OK");
    std::fprintf(out_, "# Avg bus bandwidth    : %.4f GB/s\n#\n", average_busbw());
    std::fflush(out_);
    return;
  }
  std::string doc = "{\"tool\": \"xffl-bench\"";
  doc += ", \"op\": " + json_string(operation_name(opts_.op));
  doc += ", \"dtype\": " + json_string(dtype_name(opts_.dtype));
  doc += ", \"redop\": " + json_string(redop_column(opts_));
  doc += ", \"backend\": " + json_string(info_.backend);
  doc += ", \"world_size\": " + std::to_string(info_.world_size);
  doc += ", \"group\": " + json_string(info_.group);
  doc += ", \"group_description\": " + json_string(info_.group_description);
  doc += ", \"group_size\": " + std::to_string(info_.group_size);
  doc += ", \"busbw_peers\": " + std::to_string(info_.peers);
  char number[64];
  std::snprintf(number, sizeof number, "%.6g", info_.busbw_factor);
  doc += std::string(", \"busbw_factor\": ") + number;
  doc += ", \"iters\": " + std::to_string(opts_.iters);
  doc += ", \"warmup\": " + std::to_string(opts_.warmup);
  doc += std::string(", \"check\": ") + (opts_.check ? "true" : "false");
  doc += ", \"results\": [";
  for (size_t k = 0; k < rows_.size(); ++k) {
    const Row &row = rows_[k];
    char runqueue[32] = "null";
    if (row.runqueue_us >= 0) std::snprintf(runqueue, sizeof runqueue, "%.3f", row.runqueue_us);
    char line[640];
    std::snprintf(line, sizeof line,
                  "%s\n  {\"size\": %zu, \"count\": %zu, \"type\": \"%s\", \"redop\": \"%s\", \"time_us\": %.3f, "
                  "\"time_max_us\": %.3f, \"cpu_us\": %.3f, \"runqueue_us\": %s, \"algbw_gbps\": %.6g, \"busbw_gbps\": %.6g, \"wrong\": ",
                  k ? "," : "", row.bytes, row.count, dtype_name(opts_.dtype), redop_column(opts_), row.time_us,
                  row.time_max_us, row.cpu_us, runqueue, row.algbw_gbps, row.busbw_gbps);
    doc += line;
    doc += row.wrong < 0 ? "null}" : std::to_string(row.wrong) + "}";
  }
  std::snprintf(number, sizeof number, "%.6g", average_busbw());
  doc += std::string("\n], \"avg_busbw_gbps\": ") + number + "}\n";
  std::fputs(doc.c_str(), out_);
  std::fflush(out_);
}

}  // namespace xffl_bench
