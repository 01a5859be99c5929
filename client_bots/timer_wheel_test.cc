// TimerWheel: timers fire once, not early, in slot order; long timers go round; rescheduling.
#include "client_bots/timer_wheel.h"

#include <catch2/catch.hpp>

#include <vector>

using bots::TimerWheel;

TEST_CASE("timers fire at their due time, not before, once each") {
  TimerWheel w(4, 1000);
  w.Schedule(0, 1005);
  w.Schedule(1, 1002);
  w.Schedule(2, 1700);  // more than one turn of the wheel away
  w.Schedule(3, 900);   // in the past: fires at once
  std::vector<std::pair<uint32_t, uint64_t>> fired;
  auto record = [&](uint64_t now) { w.Advance(now, [&](uint32_t id) { fired.push_back({id, now}); }); };
  record(1001);
  REQUIRE(fired.size() == 1);
  CHECK(fired[0].first == 3);
  record(1005);
  REQUIRE(fired.size() == 3);
  CHECK(fired[1].first == 1);
  CHECK(fired[2].first == 0);
  record(1699);
  CHECK(fired.size() == 3);  // id 2 shares a slot with 1444 but waited for its own turn
  record(1700);
  REQUIRE(fired.size() == 4);
  CHECK(fired[3].first == 2);
  CHECK_FALSE(w.armed(2));
}

TEST_CASE("a timer re-armed from its own callback fires on a later Advance") {
  TimerWheel w(1, 0);
  w.Schedule(0, 10);
  int fires = 0;
  // Re-arm "now" every time: must not loop forever inside one Advance.
  w.Advance(10, [&](uint32_t id) {
    ++fires;
    w.Reschedule(id, 10);
  });
  CHECK(fires == 1);
  w.Advance(11, [&](uint32_t id) {
    ++fires;
    w.Reschedule(id, 40);
  });
  CHECK(fires == 2);
  w.Advance(39, [&](uint32_t) { ++fires; });
  CHECK(fires == 2);
  w.Advance(40, [&](uint32_t) { ++fires; });
  CHECK(fires == 3);
}

TEST_CASE("Reschedule moves an armed timer out of its old slot") {
  TimerWheel w(3, 0);
  w.Schedule(0, 50);
  w.Schedule(1, 50);
  w.Schedule(2, 50);
  w.Reschedule(1, 20);  // middle of the slot's list
  w.Reschedule(2, 80);  // head of the list
  std::vector<uint32_t> at20, at50, at80;
  w.Advance(20, [&](uint32_t id) { at20.push_back(id); });
  w.Advance(50, [&](uint32_t id) { at50.push_back(id); });
  w.Advance(80, [&](uint32_t id) { at80.push_back(id); });
  CHECK(at20 == std::vector<uint32_t>{1});
  CHECK(at50 == std::vector<uint32_t>{0});
  CHECK(at80 == std::vector<uint32_t>{2});
}
