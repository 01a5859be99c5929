// TickRecord encoding (round trip, every kind of damage rejected, the lock order's too),
// TickRecorder merging and its lock order from lock hand-offs, and ApplyTick replaying a live tick
// exactly (and refusing a log that does not fit the state).
#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <limits>
#include <mutex>
#include <thread>

#include "recovery/coding.h"
#include "server/areanode/areanode_tree.h"
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

// Four commands with the live lock order: 1 came after 0, 2 after none, 3 after 0, 1 and 2.
TickRecord LockOrderRecord() {
  TickRecord r = SampleRecord();
  r.commands.push_back({41, 7, Cmd(3, 90.0f)});
  r.lock_order = true;
  r.lock_depth = 4;
  r.commands[1].first_after = 0;
  r.commands[1].after_count = 1;
  r.commands[2].first_after = 1;
  r.commands[2].after_count = 0;
  r.commands[3].first_after = 1;
  r.commands[3].after_count = 3;
  r.after = {0, 0, 1, 2};
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
  REQUIRE(a.lock_order == b.lock_order);
  if (!a.lock_order) return;
  CHECK(a.lock_depth == b.lock_depth);
  for (size_t i = 0; i < a.commands.size(); ++i) {
    const TickCommand& x = a.commands[i];
    const TickCommand& y = b.commands[i];
    REQUIRE(x.after_count == y.after_count);
    for (uint32_t k = 0; k < x.after_count; ++k) CHECK(a.after[x.first_after + k] == b.after[y.first_after + k]);
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

  const TickRecord s = LockOrderRecord();
  EncodeTickRecord(s, &bytes);
  // A count byte per command, a distance byte per earlier command.
  CHECK(bytes.size() == kTickRecordHeaderSize + 2 * 8 + (13 + 5) + (13 + 31) + 4 * kTickCommandSize + 4 + 4);
  REQUIRE(DecodeTickRecord(bytes, &back).ok());
  CHECK(back.lock_order);
  RequireSame(s, back);
}

TEST_CASE("a version 2 record (no lock order) still decodes, but not with the lock-order flag") {
  std::string bytes;
  EncodeTickRecord(SampleRecord(), &bytes);
  bytes[0] = 2;
  TickRecord back;
  REQUIRE(DecodeTickRecord(bytes, &back).ok());
  CHECK_FALSE(back.lock_order);
  RequireSame(SampleRecord(), back);
  EncodeTickRecord(LockOrderRecord(), &bytes);
  bytes[0] = 2;
  CHECK(DecodeTickRecord(bytes, &back).code() == core::Status::Code::kCorruption);
}

TEST_CASE("a version 3 lock order decodes with its depth unknown, and a bad version 4 depth is rejected") {
  std::string bytes;
  EncodeTickRecord(LockOrderRecord(), &bytes);
  REQUIRE(bytes[2] == 4);
  TickRecord back;
  std::string b = bytes;
  b[0] = 3;  // a version 3 record: bytes 2-3 were reserved, 0
  b[2] = 0;
  REQUIRE(DecodeTickRecord(b, &back).ok());
  CHECK(back.lock_order);
  CHECK(back.lock_depth == kLockDepthUnknown);
  b[2] = 4;  // version 3 had no depth there
  CHECK(DecodeTickRecord(b, &back).code() == core::Status::Code::kCorruption);
  b = bytes;
  b[2] = 0;  // the global lock: a total order, any tree
  REQUIRE(DecodeTickRecord(b, &back).ok());
  CHECK(back.lock_depth == 0);
  b[2] = static_cast<char>(areanode::kMaxDepth);
  REQUIRE(DecodeTickRecord(b, &back).ok());
  b[2] = static_cast<char>(areanode::kMaxDepth + 1);  // deeper than any tree
  CHECK(DecodeTickRecord(b, &back).code() == core::Status::Code::kCorruption);
  b = bytes;
  b[3] = 1;  // reserved
  CHECK(DecodeTickRecord(b, &back).code() == core::Status::Code::kCorruption);
  EncodeTickRecord(SampleRecord(), &b);
  b[2] = 4;  // a depth without a lock order
  CHECK(DecodeTickRecord(b, &back).code() == core::Status::Code::kCorruption);
}

TEST_CASE("every truncation and any trailing byte is rejected") {
  for (const TickRecord& r : {SampleRecord(), LockOrderRecord()}) {
    std::string bytes;
    EncodeTickRecord(r, &bytes);
    TickRecord back;
    for (size_t n = 0; n < bytes.size(); ++n) {
      INFO("lock order " << r.lock_order << ", prefix of " << n << " bytes");
      const core::Status s = DecodeTickRecord(std::string_view(bytes).substr(0, n), &back);
      REQUIRE(s.code() == core::Status::Code::kCorruption);
    }
    REQUIRE(DecodeTickRecord(bytes + '\0', &back).code() == core::Status::Code::kCorruption);
  }
}

TEST_CASE("a lock order that could deadlock, repeats itself or is overlong is rejected") {
  TickRecord back;
  auto rejects = [&](const TickRecord& r) {
    std::string bytes;
    EncodeTickRecord(r, &bytes);
    return DecodeTickRecord(bytes, &back).code() == core::Status::Code::kCorruption;
  };
  REQUIRE_FALSE(rejects(LockOrderRecord()));
  TickRecord r = LockOrderRecord();
  r.after[0] = 1;  // command 1 after itself
  CHECK(rejects(r));
  r = LockOrderRecord();
  r.after[3] = 3;  // command 3 after itself
  CHECK(rejects(r));
  r = LockOrderRecord();
  r.after[2] = 0;  // command 3 after command 0 twice
  CHECK(rejects(r));
  r = LockOrderRecord();
  r.after[1] = 2;
  r.after[2] = 1;  // not ascending
  CHECK(rejects(r));
  r = LockOrderRecord();
  r.commands[0].after_count = 1;  // command 0 after a command before the first
  r.commands[0].first_after = 0;
  CHECK(rejects(r));
  // A count larger than the commands before it, and a varint of six bytes, by hand.
  std::string bytes;
  EncodeTickRecord(LockOrderRecord(), &bytes);
  const size_t order = bytes.size() - 8;  // the lock order: counts 0, 1, 0, 3 and distances 1, 3, 2, 1
  REQUIRE(bytes.substr(order, 8) == std::string("\x00\x01\x01\x00\x03\x03\x02\x01", 8));
  std::string b = bytes;
  b[order + 1] = 2;  // command 1 after 2 commands
  CHECK(DecodeTickRecord(b, &back).code() == core::Status::Code::kCorruption);
  b = bytes.substr(0, order) + std::string("\x80\x80\x80\x80\x80\x00", 6) + bytes.substr(order + 1);
  CHECK(DecodeTickRecord(b, &back).code() == core::Status::Code::kCorruption);
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
  b[1] = 4;  // unknown flag
  CHECK(rejects(b));
  b = good;
  b[2] = 1;  // a lock order depth without a lock order
  CHECK(rejects(b));
  b = good;
  b[3] = 1;  // reserved
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
  // (No flip of version 4 gives an older version that still reads; byte 2 is the lock order's
  // depth, which a record without one must leave 0.)
  CHECK(fixed_rejected == 31);
}

TEST_CASE("recorder merges per-thread buffers in execution order") {
  constexpr int kThreads = 3, kPerThread = 200;
  TickRecorder rec(kThreads, 1, 0);
  std::mutex region;  // every command "conflicts" (lock 0): the order under the lock is the true order
  static constexpr int kLock[] = {0};
  std::vector<uint64_t> true_order;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        std::lock_guard lock(region);
        const uint64_t seq = rec.Record(t, t + 1, Cmd(static_cast<uint32_t>(i + 1), 0), kLock);
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
  // The lock order: every command shared lock 0, so each comes after exactly the one before it.
  REQUIRE(r.lock_order);
  for (size_t i = 0; i < r.commands.size(); ++i) {
    const TickCommand& c = r.commands[i];
    if (i == 0) {
      CHECK(c.after_count == 0);
    } else {
      REQUIRE(c.after_count == 1);
      CHECK(r.after[c.first_after] == i - 1);
    }
  }
  std::string bytes;
  EncodeTickRecord(r, &bytes);
  TickRecord back;
  REQUIRE(DecodeTickRecord(bytes, &back).ok());
  RequireSame(r, back);
  rec.MergeInto(&r);
  CHECK(r.commands.empty());
}

TEST_CASE("the recorder's lock order: each command after the last holder of each of its locks") {
  TickRecorder rec(3, 8, 3);  // 8 leaves: a tree of depth 3
  auto record = [&](int thread, std::vector<int> locks) {
    rec.Record(thread, thread + 1, Cmd(1, 0), locks);
  };
  record(0, {1, 2});     // c0: first on 1 and 2
  record(1, {2, 3});     // c1: after c0 (2)
  record(1, {3});        // c2: after c1 (3), its own worker's
  record(0, {3, 4});     // c3: after c2 (3)
  record(2, {1, 2, 4});  // c4: after c0 (1), c1 (2), c3 (4)
  record(1, {5});        // c5: a lock nobody held
  record(2, {1, 4});     // c6: after c4, once though it took both its locks from it
  TickRecord r;
  rec.MergeInto(&r);
  REQUIRE(r.lock_order);
  CHECK(r.lock_depth == 3);
  REQUIRE(r.commands.size() == 7);
  const std::vector<std::vector<uint32_t>> want = {{}, {0}, {1}, {2}, {0, 1, 3}, {}, {4}};
  for (size_t i = 0; i < r.commands.size(); ++i) {
    INFO("command " << i);
    const TickCommand& c = r.commands[i];
    CHECK(std::vector<uint32_t>(r.after.begin() + c.first_after, r.after.begin() + c.first_after + c.after_count) ==
          want[i]);
  }
  std::string bytes;
  EncodeTickRecord(r, &bytes);
  TickRecord back;
  REQUIRE(DecodeTickRecord(bytes, &back).ok());
  RequireSame(r, back);
  // A new phase starts with clean stamps: the same hand-off is not an order any more.
  record(1, {2});
  rec.MergeInto(&r);
  REQUIRE(r.commands.size() == 1);
  CHECK(r.commands[0].after_count == 0);
  // One thread: no lock order at all.
  TickRecorder alone(1, 8, 3);
  alone.Record(0, 1, Cmd(1, 0), std::vector<int>{1});
  alone.MergeInto(&r);
  CHECK_FALSE(r.lock_order);
}

// Plays `ticks` serial ticks on `live`, recording each, with joins, a leave and a rejoin.
std::vector<TickRecord> PlayLive(game::World* live, int ticks) {
  std::vector<game::testing::ScriptedPlayer> bots;
  game::testing::ScriptOptions opts;
  opts.attack_percent = 30;
  std::vector<TickRecord> records;
  TickRecorder rec(1, 1, 0);
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
      if (live->ExecuteCommand(bot.player(), c).ok()) rec.Record(0, bot.player(), c, {});
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
