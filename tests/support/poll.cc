#include "tests/support/poll.h"

#include <atomic>
#include <chrono>
#include <thread>

namespace testing_util {

bool PollUntil(const std::function<bool()>& done, int deadline_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(deadline_ms);
  // The answer is the check that ended the wait, never a second call: a condition seen true once
  // may be false a moment later (a descriptor count while a listener accepts and refuses).
  for (;;) {
    if (done()) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

bool ReturnsWithin(const std::function<void()>& call, int deadline_ms, const std::function<void()>& unblock) {
  std::atomic<bool> returned{false};
  std::thread t([&] {
    call();
    returned.store(true);
  });
  const bool in_time = PollUntil([&] { return returned.load(); }, deadline_ms);
  if (!in_time) unblock();
  t.join();
  return in_time;
}

}  // namespace testing_util
