// Shared by the gpu tests and the GPU benchmark: the in-memory Exchange of the unit tests (ranks that
// are threads of one process) and the skip rule (exit 77, ctest's SKIP_RETURN_CODE) when CUDA has no device.
#ifndef XFFL_TESTS_GPU_GPU_SUPPORT_H
#define XFFL_TESTS_GPU_GPU_SUPPORT_H

#include "memory_exchange.h"

namespace gpu {

constexpr int kSkip = 77;

using MemoryExchange = xffl_test::MemoryExchange;

}  // namespace gpu

#endif
