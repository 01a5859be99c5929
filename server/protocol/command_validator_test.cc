// Tests for CommandValidator (duplicate / backwards / far-ahead / speed-hack / flood rules) and
// InvalidInputTracker (kick after K invalid packets in a window).
#include "server/protocol/command_validator.h"

#include <catch2/catch.hpp>

namespace proto {
namespace {

UserCmd Cmd(uint32_t sequence, uint8_t duration_ms = 16) {
  UserCmd c;
  c.sequence = sequence;
  c.duration_ms = duration_ms;
  return c;
}

bool Accepted(CommandCheck c) { return c.verdict == CommandVerdict::kAccept; }

TEST_CASE("new commands are accepted and redundant copies are duplicates", "[validator]") {
  CommandValidator v(100, 0);
  CHECK(Accepted(v.Check(Cmd(101), 16)));
  CHECK(v.last_accepted_sequence() == 101);
  // The next packet carries 102 plus redundant 101, 100, 99: fed oldest first.
  CHECK(v.Check(Cmd(99), 32).verdict == CommandVerdict::kDuplicate);
  CHECK(v.Check(Cmd(100), 32).verdict == CommandVerdict::kDuplicate);
  CHECK(v.Check(Cmd(101), 32).verdict == CommandVerdict::kDuplicate);
  CHECK(Accepted(v.Check(Cmd(102), 32)));
  // A gap (lost packets beyond the redundancy) is accepted.
  CHECK(Accepted(v.Check(Cmd(110), 48)));
  CHECK(v.last_accepted_sequence() == 110);
}

TEST_CASE("sequences far behind or far ahead are rejected", "[validator]") {
  CommandLimits limits;
  CommandValidator v(1000, 0, limits);
  CommandCheck back = v.Check(Cmd(1000 - limits.duplicate_window), 0);
  CHECK(back.verdict == CommandVerdict::kReject);
  CHECK(back.reason == CommandReject::kBackwards);
  CHECK(v.Check(Cmd(1000 - limits.duplicate_window + 1), 0).verdict == CommandVerdict::kDuplicate);
  CommandCheck ahead = v.Check(Cmd(1000 + limits.max_ahead + 1), 0);
  CHECK(ahead.verdict == CommandVerdict::kReject);
  CHECK(ahead.reason == CommandReject::kFarAhead);
  CHECK(v.last_accepted_sequence() == 1000);
  CHECK(Accepted(v.Check(Cmd(1000 + limits.max_ahead), 0)));
}

TEST_CASE("real-time command streams pass for a long time", "[validator]") {
  CommandValidator v(0, 0);
  uint64_t now = 0;
  for (uint32_t seq = 1; seq <= 60 * 600; ++seq) {  // ten minutes at 60 Hz, 17 ms each
    now += 17;
    REQUIRE(Accepted(v.Check(Cmd(seq, 17), now)));
  }
  // A client clock running 2% fast is absorbed by the slack.
  CommandValidator fast(0, 0);
  now = 0;
  for (uint32_t seq = 1; seq <= 60 * 600; ++seq) {
    now += 50;
    REQUIRE(Accepted(fast.Check(Cmd(seq, 51), now)));
  }
}

TEST_CASE("more command time than real time is a speed hack", "[validator]") {
  CommandLimits limits;
  CommandValidator v(0, 0, limits);
  uint64_t now = 0;
  uint32_t seq = 0;
  // Twice real time: 32 ms of commands every 16 ms. The burst absorbs about a second, then
  // commands are rejected.
  int accepted = 0, speed_rejects = 0, other_rejects = 0;
  for (int i = 0; i < 200; ++i) {
    now += 16;
    CommandCheck c = v.Check(Cmd(++seq, 32), now);
    if (Accepted(c)) {
      ++accepted;
    } else {
      --seq;  // the client would resend it
      (c.reason == CommandReject::kSpeedHack ? speed_rejects : other_rejects)++;
    }
  }
  CHECK(speed_rejects > 0);
  CHECK(other_rejects == 0);
  // Accepted command time never exceeds burst + real time * 1.05.
  CHECK(accepted * 32 <= static_cast<int>(limits.burst_ms + now * 105 / 100));
  CHECK(accepted * 32 > static_cast<int>(now));
  // Waiting refills the bucket.
  CHECK(Accepted(v.Check(Cmd(seq + 1, 32), now + 100)));
}

TEST_CASE("too many commands per second are rejected", "[validator]") {
  CommandLimits limits;
  CommandValidator v(0, 0, limits);
  uint32_t seq = 0;
  CommandCheck c;
  // 1 ms commands, 1000 per real second: command time is fine, command count is not.
  for (uint64_t now = 1; now <= 2000; ++now) {
    c = v.Check(Cmd(++seq, 1), now);
    if (!Accepted(c)) break;
  }
  CHECK(c.verdict == CommandVerdict::kReject);
  CHECK(c.reason == CommandReject::kTooManyCommands);
}

TEST_CASE("a clock going backwards refills nothing", "[validator]") {
  CommandLimits limits;
  limits.burst_ms = 100;
  CommandValidator v(0, 1000, limits);
  CHECK(Accepted(v.Check(Cmd(1, 100), 1000)));
  CHECK(v.Check(Cmd(2, 10), 500).reason == CommandReject::kSpeedHack);
  CHECK(Accepted(v.Check(Cmd(2, 10), 1010)));
}

TEST_CASE("InvalidInputTracker kicks after K invalid packets within the window", "[validator]") {
  InvalidInputTracker t(3, 1000);
  CHECK_FALSE(t.Record(0));
  CHECK_FALSE(t.Record(10));
  CHECK(t.Record(999));  // third within 1000 ms
  InvalidInputTracker slow(3, 1000);
  CHECK_FALSE(slow.Record(0));
  CHECK_FALSE(slow.Record(600));
  CHECK_FALSE(slow.Record(1200));  // oldest of the last three is 1200 ms old
  CHECK_FALSE(slow.Record(1900));
  CHECK(slow.Record(2100));  // 1200, 1900, 2100
  CHECK(slow.total() == 5);
  InvalidInputTracker one(1, 1000);
  CHECK(one.Record(5));
}

}  // namespace
}  // namespace proto
