// Tests for CommandValidator (duplicate / backwards / far-ahead / speed-hack / flood rules) and
// RateWindow (kick after K invalid packets in a window).
#include "server/protocol/command_validator.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <random>

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

// ---- Whole streams: a client, its network and the worker's frames, on a simulated clock -------

// A client sends one CommandPacket every 1000 / packet_hz ms of real time, carrying a new command
// of cmd_ms and up to 3 earlier ones (the protocol's redundancy). `arrival_ms` maps a send time
// to the time the packet reaches the server's socket (the network and kernel in between). The
// worker reads its socket once per 33 ms frame, so a packet is judged at the first frame
// boundary at or after its arrival, and `frame_ms` maps that boundary to when the frame really
// ran (a stalled server runs it late). As the worker does, a packet with any rejected command
// counts one invalid packet, and RateWindow{20, 5000} decides the kick.
struct Stream {
  double packet_hz = 30;
  uint8_t cmd_ms = 33;
  double seconds = 20;
  std::function<double(double)> arrival_ms = [](double t) { return t; };
  std::function<double(double)> frame_ms = [](double t) { return t; };
};

struct Outcome {
  uint32_t sent = 0;                  // commands sent
  uint32_t last_accepted = 0;         // validator's last accepted sequence at the end
  uint64_t invalid_packets = 0;
  std::optional<double> kick_s;       // real time of the kick
  double max_excess_ms = -1e9;        // max over time of accepted command time - real time
};

Outcome Simulate(const Stream& s) {
  struct Packet {
    double judge_ms;
    uint32_t seq;
  };
  std::vector<Packet> packets;
  const double period = 1000.0 / s.packet_hz;
  constexpr double kFrame = 1000.0 / 30;
  uint32_t seq = 0;
  for (double t = period; t <= s.seconds * 1000; t += period) {
    const double frame = std::ceil(s.arrival_ms(t) / kFrame) * kFrame;
    packets.push_back({s.frame_ms(frame), ++seq});
  }
  std::stable_sort(packets.begin(), packets.end(),
                   [](const Packet& a, const Packet& b) { return a.judge_ms < b.judge_ms; });
  Outcome out;
  out.sent = seq;
  CommandValidator v(0, 0);
  RateWindow invalid(20, 5000);
  double accepted_ms = 0;
  for (const Packet& p : packets) {
    const auto now = static_cast<uint64_t>(p.judge_ms);
    bool rejected = false;
    for (uint32_t k = std::min<uint32_t>(p.seq, 4); k >= 1; --k) {  // oldest first
      const CommandCheck c = v.Check(Cmd(p.seq - k + 1, s.cmd_ms), now);
      if (Accepted(c)) accepted_ms += s.cmd_ms;
      rejected = rejected || c.verdict == CommandVerdict::kReject;
    }
    out.max_excess_ms = std::max(out.max_excess_ms, accepted_ms - static_cast<double>(now));
    if (rejected) {
      ++out.invalid_packets;
      if (invalid.Record(now) && !out.kick_s) out.kick_s = static_cast<double>(now) / 1000;
    }
  }
  out.last_accepted = v.last_accepted_sequence();
  return out;
}

// Packets sent in [from_ms, from_ms + hold_ms) are held and all released at its end.
std::function<double(double)> HeldThenReleased(double from_ms, double hold_ms) {
  return [=](double t) { return t >= from_ms && t < from_ms + hold_ms ? from_ms + hold_ms : t; };
}

TEST_CASE("a backlog released after a delay of up to 4.8 s costs an honest client nothing",
          "[validator][stall]") {
  for (double hold_ms : {500.0, 1000.0, 2000.0, 4000.0, 4800.0}) {
    for (double hz : {30.0, 60.0, 125.0}) {
      Stream s;
      s.packet_hz = hz;
      s.cmd_ms = static_cast<uint8_t>(std::lround(1000 / hz));
      // Delayed in the network or in the kernel's queue: the backlog arrives at once.
      s.arrival_ms = HeldThenReleased(5000, hold_ms);
      INFO("hold " << hold_ms << " ms at " << hz << " Hz");
      Outcome o = Simulate(s);
      CHECK(o.invalid_packets == 0);
      CHECK(o.last_accepted == o.sent);
      // The server itself stalled: frames in the stall run when it resumes.
      Stream stalled = s;
      stalled.arrival_ms = [](double t) { return t; };
      stalled.frame_ms = HeldThenReleased(5000, hold_ms);
      o = Simulate(stalled);
      CHECK(o.invalid_packets == 0);
      CHECK(o.last_accepted == o.sent);
    }
  }
}

TEST_CASE("the allowance is bounded: a 6 s backlog is not accepted whole", "[validator][stall]") {
  Stream s;
  s.arrival_ms = HeldThenReleased(5000, 6000);
  const Outcome o = Simulate(s);
  CHECK(o.invalid_packets > 0);
  CHECK(o.max_excess_ms <= 1000 + 4200 + 0.05 * s.seconds * 1000);
}

TEST_CASE("a 250 Hz client's backlog after a 2 s stall fits the command-count bucket too",
          "[validator][stall]") {
  Stream s;
  s.packet_hz = 250;
  s.cmd_ms = 4;
  s.frame_ms = HeldThenReleased(3000, 2000);
  const Outcome o = Simulate(s);
  CHECK(o.invalid_packets == 0);
  CHECK(o.last_accepted == o.sent);
}

TEST_CASE("jittery and repeatedly delayed honest clients are never rejected", "[validator][stall]") {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> jitter(0, 150);
  Stream s;
  s.seconds = 60;
  std::vector<double> delay_ms(static_cast<size_t>(s.seconds * 1000 / 33) + 1);  // one per t / 33
  for (double& d : delay_ms) d = jitter(rng);
  // Up to 150 ms of random delay per packet, plus a 1 s hold every 10 s.
  s.arrival_ms = [&](double t) {
    const double held = std::fmod(t, 10'000) < 1000 ? t - std::fmod(t, 10'000) + 1000 : t;
    return held + delay_ms.at(static_cast<size_t>(t / 33));
  };
  const Outcome o = Simulate(s);
  CHECK(o.invalid_packets == 0);
  CHECK(o.last_accepted == o.sent);
}

// Before delay credit this model kicked them after 0.17, 0.23, 7.07 and 6.97 s: no slower now.
TEST_CASE("speed hacks are still kicked within about 7 s", "[validator][stall]") {
  struct Hack {
    const char* what;
    double packet_hz;
    uint8_t cmd_ms;
  };
  for (const Hack& h : {Hack{"long msec: 250 ms commands at 150 Hz", 150, 250},
                        Hack{"250 Hz of 33 ms commands", 250, 33},
                        Hack{"1.2x real time at 30 Hz", 30, 40},
                        Hack{"1.2x real time at 60 Hz", 60, 20}}) {
    Stream s;
    s.packet_hz = h.packet_hz;
    s.cmd_ms = h.cmd_ms;
    s.seconds = 20;
    const Outcome o = Simulate(s);
    INFO(h.what);
    REQUIRE(o.kick_s.has_value());
    CHECK(*o.kick_s <= 7.1);
  }
}

TEST_CASE("delay credit bounds a lag switch: command time stays within real time + 5.2 s",
          "[validator][stall]") {
  CommandLimits limits;
  // Silent 4 s, then everything at once, then 1.2x real time.
  Stream s;
  s.packet_hz = 30;
  s.cmd_ms = 40;
  s.seconds = 30;
  s.arrival_ms = HeldThenReleased(0, 4000);
  const Outcome o = Simulate(s);
  const double bound_ms = limits.burst_ms + limits.max_delay_ms * 1.05;  // 5200 ms
  CHECK(o.max_excess_ms <= bound_ms + 0.05 * s.seconds * 1000);
  REQUIRE(o.kick_s.has_value());
  CHECK(*o.kick_s <= 4 + 1 + 7.0);  // the hold of the credit, then as without the silence
}

TEST_CASE("RateWindow kicks after K invalid packets within the window", "[validator]") {
  RateWindow t(3, 1000);
  CHECK_FALSE(t.Record(0));
  CHECK_FALSE(t.Record(10));
  CHECK(t.Record(999));  // third within 1000 ms
  RateWindow slow(3, 1000);
  CHECK_FALSE(slow.Record(0));
  CHECK_FALSE(slow.Record(600));
  CHECK_FALSE(slow.Record(1200));  // oldest of the last three is 1200 ms old
  CHECK_FALSE(slow.Record(1900));
  CHECK(slow.Record(2100));  // 1200, 1900, 2100
  CHECK(slow.total() == 5);
  RateWindow one(1, 1000);
  CHECK(one.Record(5));
}

}  // namespace
}  // namespace proto
