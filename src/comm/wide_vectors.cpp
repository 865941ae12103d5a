#include "comm/wide_vectors.h"

#include <atomic>

namespace xffl::comm {

namespace {

bool cpu_has_avx512() {
#if XFFL_HAS_AVX512_COPY
  return __builtin_cpu_supports("avx512f");
#else
  return false;
#endif
}

std::atomic<bool> portable_only{false};

}  // namespace

bool use_avx512() {
  static const bool has_avx512 = cpu_has_avx512();
  return has_avx512 && !portable_only.load(std::memory_order_relaxed);
}

void set_portable_kernels(bool portable) { portable_only.store(portable, std::memory_order_relaxed); }

}  // namespace xffl::comm
