// The numbers each rank contributes and the numbers it must get back, for --check. Contributions are
// small integers (0..3, or 1 and 2 for prod) so that sums, products and means are exact or nearly so
// in every dtype, f16 and bf16 included, for the group sizes a benchmark uses.
#ifndef XFFL_TOOLS_XFFL_BENCH_VALUES_H
#define XFFL_TOOLS_XFFL_BENCH_VALUES_H

#include <cstddef>
#include <vector>

#include <xffl.h>

namespace xffl_bench {

// Element i of the contribution of `source` (a global rank, or any id that tells contributors apart).
double contribution(int source, size_t i, xffl_redop_t redop);

// Writes contribution(source, first + k) for k < count into buf as dtype.
void fill(void *buf, size_t count, xffl_dtype_t dtype, int source, size_t first, xffl_redop_t redop);

// The reduction over `sources` of element i, rounded as the library rounds AVG for integers.
double reduced(const std::vector<int> &sources, size_t i, xffl_redop_t redop, xffl_dtype_t dtype);

double load(const void *buf, size_t i, xffl_dtype_t dtype);

// Whether `got` is `want` up to the rounding of dtype (exact for integer types).
bool matches(double got, double want, xffl_dtype_t dtype);

}  // namespace xffl_bench

#endif
