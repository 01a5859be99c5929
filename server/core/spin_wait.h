// Spin-waiting: the pause between polls, a mutex taken by polling for a while before blocking on
// it, and a flag lock taken by polling before yielding. A thread that blocks at once on a mutex held for a few microseconds is woken
// through the kernel (the holder's unlock makes a futex wake, then the scheduler runs the
// waiter), which took about 25 us per blocked command in a 2-thread replay.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <thread>

#include "server/core/steady_clock.h"

namespace core {

// How long a command waiting for another command's lock polls before it blocks. Commands hold
// their locks for their execution: a few microseconds, tens with many traces.
inline constexpr uint64_t kLockSpinNs = 30'000;

// x86's `pause` (it also tells the core that the loop is a spin); elsewhere a yield.
inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#else
  std::this_thread::yield();
#endif
}

// Takes `mu`, which a try_lock just found busy: polls it for up to `spin_ns`, then blocks on it.
// Returns the nanoseconds it waited (the callers' lock-wait statistics).
inline uint64_t LockPollingFirst(std::mutex& mu, uint64_t spin_ns = kLockSpinNs) {
  const uint64_t t0 = SteadyNs();
  for (;;) {
    for (int i = 0; i < 32; ++i) {
      CpuRelax();
      if (mu.try_lock()) return SteadyNs() - t0;
    }
    if (SteadyNs() - t0 >= spin_ns) break;
  }
  mu.lock();
  return SteadyNs() - t0;
}

// Sets `held` from false to true (acquire), for a flag just found set: polls it for up to
// `spin_ns`, then yields the core between polls, so that a holder preempted on an oversubscribed
// machine gets to run. For locks held well under a microsecond, where a mutex's library calls cost
// more than the hold (AreanodeTree's parent locks). Returns the nanoseconds it waited.
inline uint64_t AcquireFlagPollingFirst(std::atomic<bool>& held, uint64_t spin_ns = kLockSpinNs) {
  const uint64_t t0 = SteadyNs();
  for (bool yield = false;;) {
    for (int i = 0; i < 32; ++i) {
      if (yield) {
        std::this_thread::yield();
      } else {
        CpuRelax();
      }
      if (held.load(std::memory_order_relaxed)) continue;
      if (!held.exchange(true, std::memory_order_acquire)) return SteadyNs() - t0;
    }
    yield = yield || SteadyNs() - t0 >= spin_ns;
  }
}

}  // namespace core
