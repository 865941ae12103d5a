#include "federated/wire/vector_isa.h"

#include <atomic>

namespace xffl::federated::wire {

namespace {

bool cpu_has_avx2() {
#if XFFL_WIRE_HAS_AVX2_COPY
  return __builtin_cpu_supports("avx2");
#else
  return false;
#endif
}

std::atomic<bool> portable_only{false};

}  // namespace

bool use_avx2() {
  static const bool has_avx2 = cpu_has_avx2();
  return has_avx2 && !portable_only.load(std::memory_order_relaxed);
}

void set_portable_vectors(bool portable) { portable_only.store(portable, std::memory_order_relaxed); }

}  // namespace xffl::federated::wire
