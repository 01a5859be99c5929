// The record store of offline players through the tick's apply path: a returning player resumes
// its record; --max-players bounds only the players online; a full store evicts the offline
// record seen least recently, as a logged part of the leave; an evicted player starts afresh;
// and a log of leaves, evictions and rejoins replays to the same state hash.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "server/durability/tick_apply.h"
#include "server/durability/tick_record.h"
#include "server/game/game_test_util.h"

namespace durability {
namespace {

using game::EntityId;
using game::testing::CmdSpec;

game::testing::TestWorld Arena(int max_players, int max_records) {
  game::testing::TestMap m;
  m.Floor(1024).Box({-1024, -1024, 0}, {-1000, 1024, 256}).Box({1000, -1024, 0}, {1024, 1024, 256});
  for (int i = 0; i < 6; ++i) m.Spawn({-800.0f + 300 * i, -800.0f + 250 * (i % 3), 24});
  m.Pickup("item_health", {500, 500, 0});
  game::WorldConfig config;
  config.max_players = max_players;
  config.max_records = max_records;
  return game::testing::MakeWorld(m.Finish(), config);
}

EntityId Join(game::World* w, const std::string& name, uint64_t token, TickRecord* r) {
  const game::JoinResult j = ApplyJoin(w, name, token, r);
  REQUIRE(j.status.ok());
  return j.player;
}

TEST_CASE("a returning player resumes its record, and new names reuse the freed slots") {
  auto t = Arena(2, 8);
  game::World* w = t.world.get();
  const EntityId a = Join(w, "alice", 11, nullptr);
  game::testing::RunCmds(w, a, 20, CmdSpec{.forward = 400});
  const game::Edict before = w->Get(a);
  REQUIRE(ApplyLeave(w, a, nullptr).ok());
  CHECK(w->FindPlayer("alice") == 0);
  CHECK(w->Get(a).kind == game::EntityKind::kFree);
  REQUIRE(w->FindRecord("alice") != 0);
  CHECK(w->offline_records() == 1);
  // Two new names fill both slots (--max-players 2); a third is refused, alice's record stays.
  const EntityId b = Join(w, "bob", 1, nullptr);
  Join(w, "carol", 2, nullptr);
  CHECK(b == a);  // the lowest free slot
  CHECK_FALSE(ApplyJoin(w, "dave", 3, nullptr).status.ok());
  CHECK_FALSE(ApplyJoin(w, "alice", 11, nullptr).status.ok());  // full: no slot to resume in
  REQUIRE(ApplyLeave(w, b, nullptr).ok());
  CHECK(ApplyJoin(w, "alice", 99, nullptr).status.code() == core::Status::Code::kRefused);  // token
  const game::JoinResult back = ApplyJoin(w, "alice", 11, nullptr);
  REQUIRE(back.status.ok());
  CHECK(back.resumed);
  const game::Edict& e = w->Get(back.player);
  CHECK(e.last_cmd_sequence == before.last_cmd_sequence);
  CHECK(e.last_cmd_sequence == 20);
  CHECK(e.origin == before.origin);
  CHECK(e.frags == before.frags);
  CHECK(e.health == before.health);
  CHECK((e.flags & game::kFlagConnected));
  CHECK(w->FindRecord("alice") == 0);
  CHECK(w->FindRecord("bob") != 0);
}

TEST_CASE("a full store evicts the record seen least recently, and the evicted starts afresh") {
  auto t = Arena(4, 2);
  game::World* w = t.world.get();
  TickRecord r;
  const EntityId a = Join(w, "a", 1, nullptr), b = Join(w, "b", 2, nullptr), c = Join(w, "c", 3, nullptr);
  game::testing::RunCmds(w, a, 5, CmdSpec{.forward = 400});
  REQUIRE(ApplyLeave(w, a, &r).ok());  // store: a
  REQUIRE(ApplyLeave(w, b, &r).ok());  // store: a b (full)
  CHECK(w->RecordStoreFull());
  CHECK(w->LeastRecentlySeenRecord() == w->FindRecord("a"));
  const EntityId a_record = w->FindRecord("a");
  REQUIRE(ApplyLeave(w, c, &r).ok());  // evicts a
  REQUIRE(r.leaves.size() == 3);
  CHECK(r.leaves[0] == TickLeave{a, 0});
  CHECK(r.leaves[1] == TickLeave{b, 0});
  CHECK(r.leaves[2] == TickLeave{c, a_record});  // the eviction is part of the logged leave
  CHECK(w->FindRecord("a") == 0);
  CHECK(w->FindRecord("b") != 0);
  CHECK(w->FindRecord("c") != 0);
  CHECK(w->globals().records_evicted == 1);
  // "a" is a new identity now: any token, a fresh record, no commands of its own.
  const game::JoinResult again = ApplyJoin(w, "a", 777, nullptr);
  REQUIRE(again.status.ok());
  CHECK_FALSE(again.resumed);
  CHECK(w->Get(again.player).last_cmd_sequence == 0);
  // Without the eviction a leave into a full store is refused, not silently dropped.
  REQUIRE(ApplyLeave(w, again.player, nullptr).ok());  // evicts b
  const EntityId d = Join(w, "d", 4, nullptr);
  CHECK(w->Leave(d).code() == core::Status::Code::kRefused);
  CHECK(w->EvictRecord(d).code() == core::Status::Code::kInvalidArgument);  // not a record
}

TEST_CASE("leaves, evictions and rejoins replay from their records to the same hash") {
  auto live_t = Arena(3, 3);
  auto replay_t = Arena(3, 3);
  game::World* live = live_t.world.get();
  std::vector<TickRecord> log;
  // 40 ticks of churn: names n0..n9 come and go, so the 3-record store evicts all the time.
  for (int tick = 0; tick < 40; ++tick) {
    TickRecord r;
    for (EntityId id = 1; id <= live->max_players(); ++id) {
      const game::Edict& e = live->Get(id);
      if (e.kind == game::EntityKind::kPlayer && (tick + id) % 3 == 0) REQUIRE(ApplyLeave(live, id, &r).ok());
    }
    for (int k = 0; k < 2; ++k) {
      const std::string name = "n" + std::to_string((tick * 7 + k * 3) % 10);
      if (live->FindPlayer(name) == 0) ApplyJoin(live, name, 5, &r);  // refused when full: fine
    }
    ApplyWorldPhase(live, true, &r);
    std::string bytes;
    EncodeTickRecord(r, &bytes);
    TickRecord decoded;
    REQUIRE(DecodeTickRecord(bytes, &decoded).ok());
    log.push_back(decoded);
  }
  CHECK(live->globals().records_evicted > 5);
  for (const TickRecord& r : log) REQUIRE(ApplyTick(replay_t.world.get(), r).ok());
  CHECK(replay_t.world->StateHash() == live->StateHash());
  CHECK(replay_t.world->globals().records_evicted == live->globals().records_evicted);
  // A record logged with another eviction than the state allows is damage, not a guess.
  TickRecord bad;
  bad.leaves.push_back({1, 2});  // object 2 is a player slot, not a record
  CHECK(ApplyTick(replay_t.world.get(), bad).code() == core::Status::Code::kCorruption);
}

}  // namespace
}  // namespace durability
