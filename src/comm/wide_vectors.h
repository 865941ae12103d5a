// The vector instructions the kernels of the collectives use: streaming stores where there are any, a
// cache line's size, and which vector width the reduction kernels run with (reduce.h's combine):
// AVX-512 where the CPU has it, else the build's baseline (SSE2 on x86-64). The AVX-512 copy of each
// loop is compiled next to the baseline one under XFFL_AVX512 and picked per call: the library stays
// one binary for every node. Both compute the same values (element-wise operations, each exactly
// rounded; no contraction), but not always the same NaN: a sum or product of two NaNs keeps the payload
// of the operand the instruction takes first, which the compiler picks per loop (and per part of a
// loop: vector body or scalar tail). So no two members may compute one element with different loops, or
// with one loop at different positions (algorithms/recursive_doubling.cpp).
// Measured: 64 MiB allreduce on 2 ranks 1.14x, 256 MiB 1.22x, 4 ranks 1.11-1.12x
// (bench/peers/README.md). The wire formats pick AVX2 the same way (federated/wire/vector_isa.h).
#ifndef XFFL_SRC_COMM_WIDE_VECTORS_H
#define XFFL_SRC_COMM_WIDE_VECTORS_H

#include <cstddef>

#if defined(__GNUC__) || defined(__clang__)
// A loop that must be inlined into both copies (one left out of line would run with the baseline
// instructions in the AVX-512 copy too).
#define XFFL_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define XFFL_ALWAYS_INLINE inline
#endif

// x86-64's SSE2 streaming stores (every x86-64 CPU has them), for the copies into a collective's
// output (streaming_copy.h); elsewhere those copies are memcpy.
#if defined(__x86_64__) && defined(__SSE2__)
#include <emmintrin.h>
#include <immintrin.h>
#define XFFL_STREAMING_STORES 1
#else
#define XFFL_STREAMING_STORES 0
#endif

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define XFFL_HAS_AVX512_COPY 1
// A function compiled for AVX-512F; what it inlines is compiled for AVX-512F with it.
#define XFFL_AVX512 __attribute__((target("avx512f")))
#else
#define XFFL_HAS_AVX512_COPY 0
#define XFFL_AVX512
#endif

namespace xffl::comm {

// Bytes: a cache line, what a streaming store writes whole (the loops above go a line at a time).
constexpr size_t kCacheLine = 64;

// Whether the kernels take their AVX-512 copy: the CPU has AVX-512F and the build made the copy,
// unless set_portable_kernels(true) said otherwise. Cheap (one relaxed atomic load after the first).
bool use_avx512();
// The same for one loop over `bytes` (of its output): only from kAvx512From. Below, the wide copy
// cost more than it gained: a 16 KiB allreduce on 2 ranks 3-5% slower with it, 256 KiB 2-4%
// (xffl-bench -n 2000, 4 runs each; its 128 KiB reductions); the pipelined rounds' parts of 256 KiB
// take it.
constexpr size_t kAvx512From = 256 * 1024;
inline bool use_avx512_for(size_t bytes) { return bytes >= kAvx512From && use_avx512(); }
// Tests: true makes every later call take the baseline copy, false restores the choice by the CPU.
void set_portable_kernels(bool portable);

}  // namespace xffl::comm

#endif
