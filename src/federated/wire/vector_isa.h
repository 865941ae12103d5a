// Which vector instructions the wire formats' per-value loops run with (int8_block.cpp,
// int4_block.cpp): AVX2 when the CPU has it, else the build's baseline (SSE2 on x86-64, NEON on
// aarch64). Each such loop is compiled twice from one body, once for the baseline and once under
// XFFL_WIRE_AVX2, and picked per call by use_avx2(): the library stays one binary for every node of
// every facility, and a quiet core encodes int8_block or int4_block about twice as fast with AVX2
// (bench/facilities/README.md). Both copies compute the same bytes and the same floats: the loops use
// only exactly rounded operations (division, addition, the products of two floats, conversions of
// small integers), and the files are built with -ffp-contract=off (src/CMakeLists.txt), so no fused
// multiply-add changes a rounding. tests/unit_wire/test_codecs.cpp compares the two copies bit for bit.
#ifndef XFFL_SRC_FEDERATED_WIRE_VECTOR_ISA_H
#define XFFL_SRC_FEDERATED_WIRE_VECTOR_ISA_H

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define XFFL_WIRE_HAS_AVX2_COPY 1
// A function compiled for AVX2; what it inlines (XFFL_WIRE_INLINE) is compiled for AVX2 with it.
#define XFFL_WIRE_AVX2 __attribute__((target("avx2")))
#else
#define XFFL_WIRE_HAS_AVX2_COPY 0
#define XFFL_WIRE_AVX2
#endif

#if defined(__GNUC__) || defined(__clang__)
// A loop body that must be inlined into both copies (a body left out of line would run with the
// baseline instructions in the AVX2 copy too).
#define XFFL_WIRE_INLINE inline __attribute__((always_inline))
#else
#define XFFL_WIRE_INLINE inline
#endif

// Defines NAME PARAMS (in the enclosing namespace) from the loop body BODY (XFFL_WIRE_INLINE): one copy
// for the baseline, one for AVX2, and NAME, which runs the one use_avx2() picks.
//   XFFL_WIRE_VECTOR_COPIES(decode, decode_values, (const unsigned char *in, size_t count, float *out), (in, count, out))
#define XFFL_WIRE_VECTOR_COPIES(NAME, BODY, PARAMS, ARGS)   \
  void NAME##_baseline PARAMS { BODY ARGS; }                \
  XFFL_WIRE_AVX2 void NAME##_avx2 PARAMS { BODY ARGS; }     \
  void NAME PARAMS {                                        \
    if (::xffl::federated::wire::use_avx2())                \
      NAME##_avx2 ARGS;                                     \
    else                                                    \
      NAME##_baseline ARGS;                                 \
  }

namespace xffl::federated::wire {

// Whether the per-value loops take their AVX2 copy: the CPU has AVX2 and the build made the copy,
// unless set_portable_vectors(true) said otherwise. Cheap (one relaxed atomic load after the first call).
bool use_avx2();
// Tests: true makes every later call take the baseline copy, false restores the choice by the CPU.
void set_portable_vectors(bool portable);

}  // namespace xffl::federated::wire

#endif
