// Monotonic time as plain integers (std::chrono::steady_clock), for timeouts and measurements.
// Never the wall clock (NTP steps it), and never inside game state (the world has no clock).
#pragma once

#include <chrono>
#include <cstdint>

namespace core {

inline uint64_t SteadyNs() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

inline uint64_t SteadyMs() { return SteadyNs() / 1'000'000; }

// Milliseconds (fractional) since t0, for durations reported in statistics.
inline double MsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace core
