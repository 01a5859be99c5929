// TickRecord encoding (round trip, every kind of damage rejected), TickRecorder merging, and
// ApplyTick replaying a live tick exactly (and refusing a log that does not fit the state).
#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <limits>
#include <mutex>
#include <thread>

#include "recovery/coding.h"
#include "server/durability/tick_apply.h"
#include "server/durability/tick_record.h"
#include "server/durability/tick_recorder.h"
#include "server/game/cmd_script.h"
#include "server/game/game_test_util.h"

namespace durability {
namespace {

game::UserCmd Cmd(uint32_t seq, float yaw) {
  game::UserCmd c;
  c.sequence = seq;
  c.duration_ms = 33;
  c.view_angles = core::Vec3{-12.5f, yaw, 0.25f};
  c.forward_move = 400;
  c.side_move = -400;
  c.up_move = -1;
  c.buttons = game::kButtonAttack | game::kButtonJump;
  c.impulse = game::kImpulseRocketLauncher;
  return c;
}

TickRecord SampleRecord() {
  TickRecord r;
  r.leaves = {{3, 0}, {17, 40000}};
  r.joins.push_back({"alice", 0x0123456789abcdefULL, 3});
  r.joins.push_back({std::string(game::kMaxNameLength, 'z'), 0, 64});
  r.world_phase_ran = true;
  r.world_tick = 123456;
  r.commands.push_back({10, 5, Cmd(1, -0.0f)});
  r.commands.push_back({11, 3, Cmd(7, 359.99f)});
  r.commands.push_back({40, 5, Cmd(2, std::numeric_limits<float>::denorm_min())});
  return r;
}

bool SameCmd(const game::UserCmd& a, const game::UserCmd& b) {
  return a.sequence == b.sequence && a.duration_ms == b.duration_ms &&
         std::bit_cast<uint32_t>(a.view_angles.x) == std::bit_cast<uint32_t>(b.view_angles.x) &&
         std::bit_cast<uint32_t>(a.view_angles.y) == std::bit_cast<uint32_t>(b.view_angles.y) &&
         std::bit_cast<uint32_t>(a.view_angles.z) == std::bit_cast<uint32_t>(b.view_angles.z) &&
         a.forward_move == b.forward_move && a.side_move == b.side_move &&
         a.up_move == b.up_move && a.buttons == b.buttons && a.impulse == b.impulse;
}

void RequireSame(const TickRecord& a, const TickRecord& b) {
  REQUIRE(a.leaves == b.leaves);
  REQUIRE(a.joins.size() == b.joins.size());
  for (size_t i = 0; i < a.joins.size(); ++i) {
    CHECK(a.joins[i].name == b.joins[i].name);
    CHECK(a.joins[i].token == b.joins[i].token);
    CHECK(a.joins[i].player == b.joins[i].player);
  }
  REQUIRE(a.world_phase_ran == b.world_phase_ran);
  REQUIRE(a.world_tick == b.world_tick);
  REQUIRE(a.commands.size() == b.commands.size());
  for (size_t i = 0; i < a.commands.size(); ++i) {
    CHECK(a.commands[i].exec_seq == b.commands[i].exec_seq);
    CHECK(a.commands[i].player == b.commands[i].player);
    CHECK(SameCmd(a.commands[i].cmd, b.commands[i].cmd));
  }
}

TEST_CASE("tick record round trip is bit exact") {
  const TickRecord r = SampleRecord();
  std::string bytes;
  EncodeTickRecord(r, &bytes);
  CHECK(bytes.size() ==
        kTickRecordHeaderSize + 2 * 8 + (13 + 5) + (13 + 31) + 3 * kTickCommandSize);
  TickRecord back;
  REQUIRE(DecodeTickRecord(bytes, &back).ok());
  RequireSame(r, back);

  TickRecord empty;
  EncodeTickRecord(empty, &bytes);
  CHECK(bytes.size() == kTickRecordHeaderSize);
  REQUIRE(DecodeTickRecord(bytes, &back).ok());
  RequireSame(empty, back);
}

TEST_CASE("every truncation and any trailing byte is rejected") {
  std::string bytes;
  EncodeTickRecord(SampleRecord(), &bytes);
  TickRecord back;
  for (size_t n = 0; n < bytes.size(); ++n) {
    INFO("prefix of " << n << " bytes");
    const core::Status s = DecodeTickRecord(std::string_view(bytes).substr(0, n), &back);
    REQUIRE(s.code() == core::Status::Code::kCorruption);
  }
  REQUIRE(DecodeTickRecord(bytes + '\0', &back).code() == core::Status::Code::kCorruption);
}

TEST_CASE("damaged header, counts, names, ids and order are rejected") {
  std::string good;
  EncodeTickRecord(SampleRecord(), &good);
  TickRecord back;
  auto rejects = [&](std::string bytes) {
    return DecodeTickRecord(bytes, &back).code() == core::Status::Code::kCorruption;
  };
  std::string b = good;
  b[0] = 1;  // version 1: leaves without their eviction
  CHECK(rejects(b));
  b = good;
  b[1] = 2;  // unknown flag
  CHECK(rejects(b));
  b = good;
  b[2] = 1;  // reserved
  CHECK(rejects(b));
  b = good;
  recovery::EncodeFixed32(&b[4], 0x80000000u);  // negative world tick
  CHECK(rejects(b));
  for (int field = 0; field < 3; ++field) {  // each count huge: refused before any allocation
    b = good;
    recovery::EncodeFixed32(&b[8 + 4 * field], 0xffffffffu);
    CHECK(rejects(b));
    b = good;
    recovery::EncodeFixed32(&b[8 + 4 * field], recovery::DecodeFixed32(&b[8 + 4 * field]) + 1);
    CHECK(rejects(b));
  }
  const size_t join0 = kTickRecordHeaderSize + 2 * 8;
  b = good;
  b[join0 + 12] = 0;  // empty name
  CHECK(rejects(b));
  b = good;
  b[join0 + 13] = '\n';  // unprintable name
  CHECK(rejects(b));
  b = good;
  recovery::EncodeFixed32(&b[kTickRecordHeaderSize], 0);  // leave of player 0
  CHECK(rejects(b));
  b = good;
  recovery::EncodeFixed32(&b[kTickRecordHeaderSize + 4], 0xffffffffu);  // eviction of object -1
  CHECK(rejects(b));

  TickRecord r = SampleRecord();
  r.commands[1].exec_seq = r.commands[0].exec_seq;  // not strictly increasing
  EncodeTickRecord(r, &b);
  CHECK(rejects(b));
  r = SampleRecord();
  r.commands[2].player = 0;
  EncodeTickRecord(r, &b);
  CHECK(rejects(b));
  r = SampleRecord();
  r.joins[0].name = std::string(40, 'a');  // too long for the game: refused on decode
  EncodeTickRecord(r, &b);
  CHECK(rejects(b));
}

TEST_CASE("any single bit flip decodes cleanly or is rejected, never crashes") {
  std::string good;
  EncodeTickRecord(SampleRecord(), &good);
  TickRecord back;
  int fixed_rejected = 0;  // flips in version, flags and reserved (bytes 0..3)
  for (size_t i = 0; i < good.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string b = good;
      b[i] = static_cast<char>(b[i] ^ (1 << bit));
      const core::Status s = DecodeTickRecord(b, &back);
      REQUIRE((s.ok() || s.code() == core::Status::Code::kCorruption));
      if (i < 4 && !s.ok()) ++fixed_rejected;
    }
  }
  // All 32 flips there are caught but one: bit 0 of the flags is the world-phase flag itself.
  CHECK(fixed_rejected == 31);
}

TEST_CASE("recorder merges per-thread buffers in execution order") {
  constexpr int kThreads = 3, kPerThread = 200;
  TickRecorder rec(kThreads);
  std::mutex region;  // every command "conflicts": the order under the lock is the true order
  std::vector<uint64_t> true_order;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        std::lock_guard lock(region);
        const uint64_t seq = rec.Record(t, t + 1, Cmd(static_cast<uint32_t>(i + 1), 0));
        true_order.push_back(seq);
      }
    });
  }
  for (auto& th : threads) th.join();
  TickRecord r;
  rec.MergeInto(&r);
  REQUIRE(r.commands.size() == size_t{kThreads * kPerThread});
  for (size_t i = 0; i < r.commands.size(); ++i) REQUIRE(r.commands[i].exec_seq == true_order[i]);
  // Each player's (thread's) commands keep their own order.
  std::vector<uint32_t> last(kThreads + 1, 0);
  for (const TickCommand& c : r.commands) {
    REQUIRE(c.cmd.sequence == last[c.player] + 1);
    last[c.player] = c.cmd.sequence;
  }
  rec.MergeInto(&r);
  CHECK(r.commands.empty());
}

// Plays `ticks` serial ticks on `live`, recording each, with joins, a leave and a rejoin.
std::vector<TickRecord> PlayLive(game::World* live, int ticks) {
  std::vector<game::testing::ScriptedPlayer> bots;
  game::testing::ScriptOptions opts;
  opts.attack_percent = 30;
  std::vector<TickRecord> records;
  TickRecorder rec(1);
  for (int t = 1; t <= ticks; ++t) {
    TickRecord r;
    if (t == 10) REQUIRE(ApplyLeave(live, bots[2].player(), &r).ok());
    if (t <= 8 || t == 14) {
      const int k = t == 14 ? 2 : t - 1;
      const game::JoinResult j = ApplyJoin(live, "p" + std::to_string(k), 1000 + k, &r);
      REQUIRE(j.status.ok());
      if (t <= 8) bots.emplace_back(j.player, 5 + t, opts);
    }
    ApplyWorldPhase(live, t % 3 != 0, &r);  // request-mode frames without a world phase too
    for (auto& bot : bots) {
      if (!(live->Get(bot.player()).flags & game::kFlagConnected)) continue;
      const game::UserCmd c = bot.Next(*live);
      if (live->ExecuteCommand(bot.player(), c).ok()) rec.Record(0, bot.player(), c);
    }
    rec.MergeInto(&r);
    records.push_back(r);
  }
  return records;
}

TEST_CASE("ApplyTick replays logged ticks to the live state, through encode and decode") {
  auto live = game::testing::LoadWorld("maps/dm_arena.map");
  auto replay = game::testing::LoadWorld("maps/dm_arena.map");
  const std::vector<TickRecord> records = PlayLive(live.world.get(), 40);
  std::string bytes;
  TickRecord decoded;
  for (const TickRecord& r : records) {
    EncodeTickRecord(r, &bytes);
    REQUIRE(DecodeTickRecord(bytes, &decoded).ok());
    REQUIRE(ApplyTick(replay.world.get(), decoded).ok());
  }
  REQUIRE(replay.world->StateHash() == live.world->StateHash());
  REQUIRE(records[13].joins.size() == 1);  // the rejoin resumed player 3's record
  CHECK(records[13].joins[0].player == records[2].joins[0].player);
}

TEST_CASE("ApplyTick refuses a log that does not fit the state") {
  auto live = game::testing::LoadWorld("maps/dm_arena.map");
  const std::vector<TickRecord> records = PlayLive(live.world.get(), 12);
  auto fresh = [] { return game::testing::LoadWorld("maps/dm_arena.map"); };
  {
    auto w = fresh();
    TickRecord r = records[0];
    r.joins[0].player = 9;  // the join gives player 1
    const core::Status s = ApplyTick(w.world.get(), r);
    CHECK(s.code() == core::Status::Code::kCorruption);
    CHECK_THAT(s.message(), Catch::Contains("the log says player 9"));
  }
  {
    auto w = fresh();
    REQUIRE(ApplyTick(w.world.get(), records[0]).ok());
    REQUIRE(records[0].commands.size() == 1);
    const core::Status s = ApplyTick(w.world.get(), records[0]);  // again: join, same commands
    CHECK(s.code() == core::Status::Code::kCorruption);
  }
  {
    auto w = fresh();
    TickRecord r = records[0];
    r.world_tick += 1;
    CHECK(ApplyTick(w.world.get(), r).code() == core::Status::Code::kCorruption);
  }
  {
    auto w = fresh();
    TickRecord r = records[0];
    r.leaves.push_back({5, 0});  // never joined
    CHECK(ApplyTick(w.world.get(), r).code() == core::Status::Code::kCorruption);
  }
}

}  // namespace
}  // namespace durability
