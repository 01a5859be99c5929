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

}  // namespace core
