// LockPollingFirst and AcquireFlagPollingFirst: the caller gets the mutex (the flag) only once its
// holder has let it go, whether the holder lets go while the caller polls or after the caller has
// gone to block on it (to yield between polls).
#include <catch2/catch.hpp>

#include <atomic>
#include <mutex>
#include <thread>
#include <type_traits>

#include "server/core/spin_wait.h"
#include "server/core/steady_clock.h"

namespace {

// The two locks behind one interface: Hold and Let for the holder thread, TryTake for the caller's
// first try (false: busy), Take for the function under test, Drop for the caller when done.
struct MutexLock {
  std::mutex mu;
  void Hold() { mu.lock(); }
  void Let() { mu.unlock(); }
  bool TryTake() { return mu.try_lock(); }
  uint64_t Take(uint64_t spin_ns) { return core::LockPollingFirst(mu, spin_ns); }
  void Drop() { mu.unlock(); }
};

struct FlagLock {
  std::atomic<bool> flag{false};
  void Hold() { flag.store(true, std::memory_order_relaxed); }  // free until now: nobody else sets it
  void Let() { flag.store(false, std::memory_order_release); }
  bool TryTake() { return !flag.exchange(true, std::memory_order_acquire); }
  uint64_t Take(uint64_t spin_ns) { return core::AcquireFlagPollingFirst(flag, spin_ns); }
  void Drop() { flag.store(false, std::memory_order_release); }
};

// Holds the lock in another thread until `release` is set, writes, then lets it go; the caller
// takes it with Take (spin budget `spin_ns`) and must see the holder's write made before the
// release.
template <class Lock>
void TakeFromHolder(uint64_t spin_ns, bool release_while_polling) {
  Lock lock;
  std::atomic<bool> held{false}, release{false}, waiting{false};
  int written = 0;  // guarded by the lock: written by the holder, read by the caller
  std::thread holder([&] {
    lock.Hold();
    held.store(true);
    while (!release.load()) std::this_thread::yield();
    written = 42;
    lock.Let();
  });
  while (!held.load()) std::this_thread::yield();
  REQUIRE_FALSE(lock.TryTake());
  std::thread releaser([&] {
    while (!waiting.load()) std::this_thread::yield();
    if (!release_while_polling) {
      // Past the caller's polling budget: it is blocked in lock(), or yielding between polls.
      const uint64_t t0 = core::SteadyNs();
      while (core::SteadyNs() - t0 < spin_ns + 5'000'000) std::this_thread::yield();
    }
    release.store(true);
  });
  waiting.store(true);
  CHECK(lock.Take(spin_ns) > 0);
  CHECK(written == 42);
  CHECK(release.load());
  if constexpr (std::is_same_v<Lock, FlagLock>) CHECK(lock.flag.load());  // the caller holds it now
  lock.Drop();
  holder.join();
  releaser.join();
}

}  // namespace

TEST_CASE("LockPollingFirst takes a mutex its holder lets go while the caller polls", "[spin_wait]") {
  TakeFromHolder<MutexLock>(/*spin_ns=*/1'000'000'000, /*release_while_polling=*/true);
}

TEST_CASE("LockPollingFirst blocks once its polling budget is spent, then takes the mutex",
          "[spin_wait]") {
  TakeFromHolder<MutexLock>(/*spin_ns=*/1'000, /*release_while_polling=*/false);
}

TEST_CASE("AcquireFlagPollingFirst takes a flag its holder clears while the caller polls",
          "[spin_wait]") {
  TakeFromHolder<FlagLock>(/*spin_ns=*/1'000'000'000, /*release_while_polling=*/true);
}

TEST_CASE("AcquireFlagPollingFirst yields once its polling budget is spent, then takes the flag",
          "[spin_wait]") {
  TakeFromHolder<FlagLock>(/*spin_ns=*/1'000, /*release_while_polling=*/false);
}
