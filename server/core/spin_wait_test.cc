// LockPollingFirst and AcquireFlagPollingFirst: the caller gets the mutex (the flag) only once its
// holder has let it go, whether the holder lets go while the caller polls or after the caller has
// gone to block on it (to yield between polls).
#include <catch2/catch.hpp>

#include <atomic>
#include <mutex>
#include <thread>

#include "server/core/spin_wait.h"
#include "server/core/steady_clock.h"

namespace {

// Holds `mu` in another thread until `release` is set, then lets it go; the caller takes it with
// LockPollingFirst (spin budget `spin_ns`) and must see the holder's write made before unlock.
void TakeFromHolder(uint64_t spin_ns, bool release_while_polling) {
  std::mutex mu;
  std::atomic<bool> held{false}, release{false}, waiting{false};
  int written = 0;  // guarded by mu: written by the holder, read by the caller
  std::thread holder([&] {
    std::lock_guard<std::mutex> lock(mu);
    held.store(true);
    while (!release.load()) std::this_thread::yield();
    written = 42;
  });
  while (!held.load()) std::this_thread::yield();
  REQUIRE_FALSE(mu.try_lock());
  std::thread releaser([&] {
    while (!waiting.load()) std::this_thread::yield();
    if (!release_while_polling) {
      // Past the caller's polling budget: it is blocked in lock() (or about to be).
      const uint64_t t0 = core::SteadyNs();
      while (core::SteadyNs() - t0 < spin_ns + 5'000'000) std::this_thread::yield();
    }
    release.store(true);
  });
  waiting.store(true);
  CHECK(core::LockPollingFirst(mu, spin_ns) > 0);
  CHECK(written == 42);
  CHECK(release.load());
  mu.unlock();
  holder.join();
  releaser.join();
}

}  // namespace

TEST_CASE("LockPollingFirst takes a mutex its holder lets go while the caller polls", "[spin_wait]") {
  TakeFromHolder(/*spin_ns=*/1'000'000'000, /*release_while_polling=*/true);
}

TEST_CASE("LockPollingFirst blocks once its polling budget is spent, then takes the mutex",
          "[spin_wait]") {
  TakeFromHolder(/*spin_ns=*/1'000, /*release_while_polling=*/false);
}

namespace {

// The same for AcquireFlagPollingFirst: a holder thread sets `flag`, writes, and clears it
// (release) once `release` is set; the caller must get the flag only after that, and see the write.
void TakeFlagFromHolder(uint64_t spin_ns, bool release_while_polling) {
  std::atomic<bool> flag{false}, held{false}, release{false}, waiting{false};
  int written = 0;  // guarded by flag
  std::thread holder([&] {
    flag.store(true, std::memory_order_relaxed);  // free until now: nobody else sets it
    held.store(true);
    while (!release.load()) std::this_thread::yield();
    written = 42;
    flag.store(false, std::memory_order_release);
  });
  while (!held.load()) std::this_thread::yield();
  REQUIRE(flag.exchange(true, std::memory_order_acquire));  // busy: the caller's first try
  std::thread releaser([&] {
    while (!waiting.load()) std::this_thread::yield();
    if (!release_while_polling) {
      // Past the caller's polling budget: it is yielding between polls.
      const uint64_t t0 = core::SteadyNs();
      while (core::SteadyNs() - t0 < spin_ns + 5'000'000) std::this_thread::yield();
    }
    release.store(true);
  });
  waiting.store(true);
  CHECK(core::AcquireFlagPollingFirst(flag, spin_ns) > 0);
  CHECK(written == 42);
  CHECK(flag.load());  // the caller holds it now
  flag.store(false, std::memory_order_release);
  holder.join();
  releaser.join();
}

}  // namespace

TEST_CASE("AcquireFlagPollingFirst takes a flag its holder clears while the caller polls",
          "[spin_wait]") {
  TakeFlagFromHolder(/*spin_ns=*/1'000'000'000, /*release_while_polling=*/true);
}

TEST_CASE("AcquireFlagPollingFirst yields once its polling budget is spent, then takes the flag",
          "[spin_wait]") {
  TakeFlagFromHolder(/*spin_ns=*/1'000, /*release_while_polling=*/false);
}
