// LogWriter under real concurrency (run under TSan): the tick thread appends while frame threads
// wait, and in sync mode a waiter may write and sync the queue itself (the leader).
#include <atomic>
#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "recovery/fault_env.h"
#include "recovery/log_reader.h"
#include "recovery/log_writer.h"

namespace recovery {

namespace {

std::string PayloadOf(uint64_t tick) { return std::string(tick % 23, static_cast<char>('a' + tick % 26)); }

}  // namespace

// Several frame threads wait for each tick while the tick thread appends: whoever finds the
// queue waiting (a waiter as leader, or the log thread) writes it; every tick is acknowledged
// once durable and reads back in order.
TEST_CASE("log sync mode with concurrent waiters: every wait returns once its tick is durable",
          "[log]") {
  FaultEnv env;
  LogOptions o;
  o.env = &env;
  o.dir = "/db";
  o.sync_mode = SyncMode::kSync;
  o.next_tick = 1;
  o.segment_bytes = 2000;  // rotations under the waiters
  std::unique_ptr<LogWriter> log;
  REQUIRE(LogWriter::Open(o, &log).ok());
  constexpr uint64_t kTicks = 400;
  constexpr int kWaiters = 3;
  std::atomic<uint64_t> appended{0};
  std::atomic<int> bad{0};
  std::vector<std::thread> waiters;
  for (int w = 0; w < kWaiters; ++w) {
    waiters.emplace_back([&] {
      for (uint64_t t = 1; t <= kTicks; ++t) {
        while (appended.load() < t) std::this_thread::yield();
        if (!log->WaitDurable(t).ok() || log->durable_tick() < t) ++bad;
      }
    });
  }
  for (uint64_t t = 1; t <= kTicks; ++t) {
    REQUIRE(log->Append(t, PayloadOf(t)).ok());
    appended.store(t);
    if (t % 50 == 0) REQUIRE(log->WaitDurable(t).ok());  // the appender waits too, sometimes
  }
  for (auto& th : waiters) th.join();
  CHECK(bad == 0);
  REQUIRE(log->Close().ok());
  CHECK(log->stats().records == kTicks);
  std::map<uint64_t, std::string> got;
  LogScanReport report;
  REQUIRE(ScanLog(&env, "/db", LogScanOptions{}, [&](uint64_t tick, std::string_view p) {
            got[tick] = std::string(p);
            return core::Status::OK();
          }, &report).ok());
  REQUIRE(got.size() == kTicks);
  for (uint64_t t = 1; t <= kTicks; ++t) REQUIRE(got[t] == PayloadOf(t));
}

}  // namespace recovery
