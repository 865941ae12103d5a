// The clock and deadlines the UCX parts pass each other: every wait ends at a Clock::time_point,
// and the Exchange wants what is left of it in milliseconds. Header-only: two lines of arithmetic.
#ifndef XFFL_SRC_COMM_UCX_DEADLINE_H
#define XFFL_SRC_COMM_UCX_DEADLINE_H

#include <algorithm>
#include <chrono>
#include <limits>

namespace xffl::comm::ucx {

using Clock = std::chrono::steady_clock;

// Milliseconds until deadline, 0 once it has passed, at most INT_MAX.
inline int remaining_ms(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return static_cast<int>(std::clamp<long long>(left, 0, std::numeric_limits<int>::max()));
}

}  // namespace xffl::comm::ucx

#endif
