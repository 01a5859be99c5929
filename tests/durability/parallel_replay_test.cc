// Parallel recovery replay (server/durability/parallel_replay.h) against serial replay: a log of
// 150 ticks of 64 armed players on dm_small and on dm_arena (joins, leaves, several commands per
// player per tick, in shuffled order) is replayed serially, on pools of 2 and 4 threads, and on
// 3 threads taking ready commands in random order; after every tick every state must equal the
// live one. The log must hold real conflicts (replaying one
// tick's commands in another order changes the state), else the comparison would prove nothing.
// The same again for logs played by 3 workers at once under their leaf locks, whose records carry
// the live lock order that the pool then follows. A refused command is Corruption, in both modes.
// Run under TSan (label tsan) it also checks that the pool shares no unsynchronised state.
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "server/areanode/areanode_tree.h"
#include "server/durability/parallel_replay.h"
#include "server/durability/tick_apply.h"
#include "server/durability/tick_recorder.h"
#include "server/game/cmd_script.h"
#include "server/game/game_constants.h"
#include "server/game/game_test_util.h"
#include "server/game/region_locker.h"

namespace durability {
namespace {

constexpr int kPlayers = 64;
constexpr int kTicks = 150;

game::testing::TestWorld NewWorld(const std::string& map, int depth = areanode::kDefaultDepth) {
  game::WorldConfig config;
  config.max_players = kPlayers;
  config.areanode_depth = depth;
  config.max_records = 16;  // small: leaves must evict
  return game::testing::LoadWorld(map, config);
}

// The same start on every world: the players joined and armed (outside the log, identically).
void ArmPlayers(game::World* w) {
  for (int i = 0; i < kPlayers; ++i) {
    const game::EntityId id = game::testing::JoinOrDie(w, "p" + std::to_string(i), 100 + i);
    game::Edict& e = w->Mut(id);
    e.weapons_owned |= (1u << game::kWeaponRocketLauncher) | (1u << game::kWeaponShotgun);
    e.ammo_rockets = 200;
    e.ammo_shells = 200;
  }
}

struct Log {
  std::vector<TickRecord> ticks;
  std::vector<uint64_t> hashes;  // the live state after each tick
};

// One script per armed player, attacking and jumping now and then.
std::vector<game::testing::ScriptedPlayer> ArmedScripts(const game::World& w) {
  game::testing::ScriptOptions opts;
  opts.attack_percent = 30;
  opts.jump_percent = 10;
  opts.min_duration_ms = 10;
  opts.max_duration_ms = 40;
  std::vector<game::testing::ScriptedPlayer> bots;
  for (int i = 0; i < kPlayers; ++i) bots.emplace_back(w.FindPlayer("p" + std::to_string(i)), 9 + i, opts);
  return bots;
}

// A tick's world part, as the live master runs it: now and then a player leaves, and rejoins
// 5 ticks later (in its old slot if free); then the world phase.
void PlayWorldPart(game::World* w, int tick, std::vector<game::testing::ScriptedPlayer>* bots,
                   TickRecord* record) {
  for (int i = 0; i < kPlayers; ++i) {
    game::testing::ScriptedPlayer& b = (*bots)[i];
    if (b.player() != 0 && (tick + 7 * i) % 37 == 0) {
      REQUIRE(ApplyLeave(w, b.player(), record).ok());
      b.set_player(0);
    }
  }
  for (int i = 0; i < kPlayers; ++i) {
    game::testing::ScriptedPlayer& b = (*bots)[i];
    if (b.player() == 0 && (tick + 7 * i) % 37 == 5) {
      const game::JoinResult j = ApplyJoin(w, "p" + std::to_string(i), 100 + i, record);
      REQUIRE(j.status.ok());
      b.set_player(j.player);
    }
  }
  ApplyWorldPhase(w, true, record);
}

// Plays kTicks ticks on `w`: now and then a player leaves and rejoins later; every online player
// sends 1..3 commands, all players' commands shuffled together (each player's in its order).
Log PlayLive(game::World* w) {
  std::vector<game::testing::ScriptedPlayer> bots = ArmedScripts(*w);
  std::mt19937 rng(4242);
  Log log;
  uint64_t exec_seq = 0;
  for (int tick = 0; tick < kTicks; ++tick) {
    TickRecord record;
    PlayWorldPart(w, tick, &bots, &record);
    std::vector<int> order;
    for (int i = 0; i < kPlayers; ++i) {
      if (bots[i].player() == 0) continue;
      const int n = 1 + static_cast<int>(rng() % 3);
      for (int k = 0; k < n; ++k) order.push_back(i);
    }
    std::shuffle(order.begin(), order.end(), rng);
    for (int i : order) {
      const game::UserCmd cmd = bots[i].Next(*w);
      if (w->ExecuteCommand(bots[i].player(), cmd).ok()) {
        record.commands.push_back({++exec_seq, bots[i].player(), cmd});
      }
    }
    log.ticks.push_back(record);
    log.hashes.push_back(w->StateHash());
  }
  return log;
}

// As PlayLive, but the commands run as the server's workers run them: player i's on worker
// i % kWorkers, all workers at once, each command under its leaf locks (RegionLocker) and recorded
// while they are held, so the records carry the live lock order (TickRecord::lock_order).
constexpr int kWorkers = 3;
Log PlayLiveOnWorkers(game::World* w) {
  std::vector<game::testing::ScriptedPlayer> bots = ArmedScripts(*w);
  std::mt19937 rng(4243);
  w->tree().set_parent_locking(true);
  w->set_region_check(true);
  TickRecorder recorder(kWorkers, w->tree().leaf_count(), w->tree().depth());
  Log log;
  for (int tick = 0; tick < kTicks; ++tick) {
    TickRecord record;
    PlayWorldPart(w, tick, &bots, &record);
    // Each worker's players' commands, 1..3 per player, shuffled (each player's in its order),
    // drawn before the workers start (a script reads the world).
    std::vector<std::vector<int>> orders(kWorkers);
    for (int i = 0; i < kPlayers; ++i) {
      if (bots[i].player() == 0) continue;
      const int n = 1 + static_cast<int>(rng() % 3);
      for (int k = 0; k < n; ++k) orders[i % kWorkers].push_back(i);
    }
    // A script numbers its command from the world's last applied one: the k-th of a player's
    // commands drawn ahead takes k more.
    std::vector<std::vector<TickCommand>> cmds(kWorkers);
    std::vector<uint32_t> ahead(kPlayers, 0);
    for (int t = 0; t < kWorkers; ++t) {
      std::shuffle(orders[t].begin(), orders[t].end(), rng);
      for (int i : orders[t]) {
        game::UserCmd cmd = bots[i].Next(*w);
        cmd.sequence += ahead[i]++;
        cmds[t].push_back({0, bots[i].player(), cmd});
      }
    }
    std::vector<std::thread> workers;
    for (int t = 0; t < kWorkers; ++t) {
      workers.emplace_back([&, t] {
        game::RegionLocker locker(&w->tree(), /*optimized=*/true);
        for (const TickCommand& c : cmds[t]) {
          game::RegionLock region(&locker, *w, c.player, c.cmd);
          if (w->ExecuteCommand(c.player, c.cmd).ok()) recorder.Record(t, c.player, c.cmd, locker.held());
        }
      });
    }
    for (std::thread& t : workers) t.join();
    recorder.MergeInto(&record);
    log.ticks.push_back(record);
    log.hashes.push_back(w->StateHash());
  }
  w->tree().set_parent_locking(false);
  return log;
}

// Replays the log on a fresh armed world whose tree has `depth` (serially if threads == 1) and
// requires every tick's state to equal the live one. shuffle_seed != 0: the pool runs ready
// commands in random order. Returns the pool's statistics (zero for serial replay).
ParallelReplay::Stats ReplayAndCompare(const std::string& map, const Log& log, int threads,
                                       uint64_t shuffle_seed = 0, int depth = areanode::kDefaultDepth) {
  game::testing::TestWorld t = NewWorld(map, depth);
  game::World* w = t.world.get();
  ArmPlayers(w);
  w->set_region_check(true);  // the game's own check that each command stays in its region
  std::unique_ptr<ParallelReplay> pool;
  if (threads > 1) {
    pool = std::make_unique<ParallelReplay>(
        w, ParallelReplay::Options{threads, 1, shuffle_seed, /*adaptive=*/false});
  }
  for (size_t i = 0; i < log.ticks.size(); ++i) {
    INFO("threads " << threads << ", shuffle " << shuffle_seed << ", tick " << i << ", "
                    << log.ticks[i].commands.size() << " commands");
    const core::Status s = ApplyTick(w, log.ticks[i], pool.get());
    REQUIRE(s.ok());
    REQUIRE(w->StateHash() == log.hashes[i]);
  }
  if (pool) {
    const ParallelReplay::Stats st = pool->stats();
    CHECK(st.parallel_ticks == log.ticks.size());
    CHECK(st.serial_ticks == 0);
    // A log with the live lock order is linked from it, every tick, if this tree is at least as
    // deep as the live one; another by the walk.
    const bool lock_order = log.ticks.front().lock_order;
    const bool follows = lock_order && log.ticks.front().lock_depth <= depth;
    CHECK(st.lock_order_ticks == (follows ? log.ticks.size() : 0));
    CHECK(st.coarse_tree_ticks == (lock_order && !follows ? log.ticks.size() : 0));
    CHECK((st.dispatch_stalls == 0 || !follows));
    return st;
  }
  return {};
}

void CheckParallelEqualsSerial(const std::string& map, bool on_workers) {
  game::testing::TestWorld live = NewWorld(map);
  ArmPlayers(live.world.get());
  const Log log = on_workers ? PlayLiveOnWorkers(live.world.get()) : PlayLive(live.world.get());
  for (const TickRecord& r : log.ticks) REQUIRE(r.lock_order == on_workers);
  size_t commands = 0;
  for (const TickRecord& r : log.ticks) commands += r.commands.size();
  REQUIRE(commands > static_cast<size_t>(kTicks * kPlayers));  // several per player per tick

  // The log holds conflicts: the same ticks with each tick's commands reversed end elsewhere.
  {
    game::testing::TestWorld t = NewWorld(map);
    ArmPlayers(t.world.get());
    bool differs = false;
    for (size_t i = 0; i < log.ticks.size() && !differs; ++i) {
      // The players in reverse order of their first command, each player's commands in order
      // (its sequences must increase).
      TickRecord reversed = log.ticks[i];
      std::vector<game::EntityId> players;
      for (const TickCommand& c : log.ticks[i].commands) {
        if (std::find(players.begin(), players.end(), c.player) == players.end()) players.push_back(c.player);
      }
      reversed.commands.clear();
      for (auto p = players.rbegin(); p != players.rend(); ++p) {
        for (const TickCommand& c : log.ticks[i].commands) {
          if (c.player == *p) reversed.commands.push_back(c);
        }
      }
      (void)ApplyTick(t.world.get(), reversed);
      differs = t.world->StateHash() != log.hashes[i];
    }
    REQUIRE(differs);
  }

  ReplayAndCompare(map, log, 1);
  ReplayAndCompare(map, log, 2);
  ReplayAndCompare(map, log, 4);
  // Any order the dependencies allow, not only the near-log order fast commands fall into. By
  // the lock order, the shuffled pools also run waited-on commands for other streams (RunBlocker).
  uint64_t blocker_runs = 0;
  for (uint64_t seed = 1; seed <= 3; ++seed) blocker_runs += ReplayAndCompare(map, log, 3, seed).blocker_runs;
  if (on_workers) CHECK(blocker_runs > 0);
}

// dm_small crowds 64 players into a 1024-unit room (conflicts in every tick); dm_arena spreads them.
TEST_CASE("tsan: parallel replay gives the serial (and live) state after every tick") {
  CheckParallelEqualsSerial("maps/dm_small.map", /*on_workers=*/false);
  CheckParallelEqualsSerial("maps/dm_arena.map", /*on_workers=*/false);
}

// The same for logs that carry the live lock order: the pool follows it instead of the walk.
TEST_CASE("tsan: replay by the live lock order gives the serial (and live) state after every tick") {
  CheckParallelEqualsSerial("maps/dm_small.map", /*on_workers=*/true);
  CheckParallelEqualsSerial("maps/dm_arena.map", /*on_workers=*/true);
}

// A server restarted with a shallower tree (--areanode-depth, or --assign locality's default 11
// dropped for block's 4) recovers a log whose lock order names finer leaves. Two commands that
// took no common lock live may then link and unlink in one leaf of the replay's tree, so the
// pool must not follow that order: it works those ticks out by the walk, and on a tree as deep
// or deeper it follows it. (A build that follows it on the coarser tree fails the counts here;
// such a build's 2-thread replay of a 512-player dm_arena log recorded at depth 11 stopped at
// "areanode: entity not where its index says".)
TEST_CASE("tsan: a lock order over finer leaves than the replay's tree is replayed by the walk") {
  constexpr int kLiveDepth = 6;
  game::testing::TestWorld live = NewWorld("maps/dm_arena.map", kLiveDepth);
  ArmPlayers(live.world.get());
  const Log log = PlayLiveOnWorkers(live.world.get());
  for (const TickRecord& r : log.ticks) {
    REQUIRE(r.lock_order);
    REQUIRE(r.lock_depth == kLiveDepth);
  }
  CHECK(ReplayAndCompare("maps/dm_arena.map", log, 2, 0, 4).coarse_tree_ticks == log.ticks.size());
  ReplayAndCompare("maps/dm_arena.map", log, 3, 7, 5);
  CHECK(ReplayAndCompare("maps/dm_arena.map", log, 2, 0, kLiveDepth).lock_order_ticks == log.ticks.size());
  ReplayAndCompare("maps/dm_arena.map", log, 3, 7, 8);
}

// The adaptive choice (what recovery uses) probes both modes, so it mixes them whatever the
// timing; the states must still be the live ones. With the live lock order, pool ticks after
// serial ones find the helpers parked, and helper 1 or the owner cuts the streams beside the
// world part (both happen here, as the helper wakes late or early).
TEST_CASE("tsan: adaptive replay mixes serial and pool ticks and still gives the live state") {
  const std::string map = "maps/dm_small.map";
  for (const bool on_workers : {false, true}) {
    INFO((on_workers ? "live lock order" : "walk"));
    game::testing::TestWorld live = NewWorld(map);
    ArmPlayers(live.world.get());
    const Log log = on_workers ? PlayLiveOnWorkers(live.world.get()) : PlayLive(live.world.get());
    for (const int threads : {2, 3}) {
      INFO("threads " << threads);
      game::testing::TestWorld t = NewWorld(map);
      ArmPlayers(t.world.get());
      ParallelReplay pool(t.world.get(), ParallelReplay::Options{threads, 1, 0, /*adaptive=*/true});
      for (size_t i = 0; i < log.ticks.size(); ++i) {
        INFO("tick " << i);
        REQUIRE(ApplyTick(t.world.get(), log.ticks[i], &pool).ok());
        REQUIRE(t.world->StateHash() == log.hashes[i]);
      }
      const ParallelReplay::Stats st = pool.stats();
      CHECK(st.parallel_ticks >= 1);          // the pool's probe at least
      CHECK(st.adaptive_serial_ticks >= 1);   // the serial probe at least
      CHECK(st.parallel_ticks + st.serial_ticks == log.ticks.size());
      CHECK(st.lock_order_ticks == (on_workers ? st.parallel_ticks : 0));
    }
  }
}

// The choice itself, tick by tick: a probe of each way at the start of every interval, the pool's
// first tick not timed (its helpers wake from parking then), then the way whose probe was faster
// per command for the rest of the interval.
TEST_CASE("adaptive choice: probes both ways side by side, then keeps the faster per command") {
  using durability::AdaptiveChoice;
  constexpr uint64_t kProbe = AdaptiveChoice::kProbeTicks;
  constexpr uint64_t kInterval = AdaptiveChoice::kProbeInterval;
  for (const bool pool_faster : {true, false}) {
    INFO("pool faster " << pool_faster);
    AdaptiveChoice choice;
    for (int interval = 0; interval < 3; ++interval) {
      // The machine changes between intervals: the next probe must notice.
      const bool faster = pool_faster != (interval % 2 == 1);
      for (uint64_t k = 0; k < kInterval; ++k) {
        INFO("interval " << interval << " tick " << k);
        const AdaptiveChoice::Tick t = choice.Next();
        const bool probe = k < 2 * kProbe;
        if (k < kProbe) {
          REQUIRE((t.serial && t.timed));
        } else if (k == kProbe) {
          REQUIRE((!t.serial && !t.timed));
        } else if (probe) {
          REQUIRE((!t.serial && t.timed));
        } else {
          REQUIRE(t.serial == !faster);
          REQUIRE(!t.timed);
        }
        // Ticks of different sizes: the comparison is per command.
        const uint64_t commands = 100 + 50 * (k % 3);
        const uint64_t ns_per_command = t.serial ? 1000 : (faster ? 800 : 1200);
        if (t.timed) choice.Record(ns_per_command * commands, commands);
      }
    }
  }
}

TEST_CASE("tsan: parallel replay reports a refused command as corruption, as serial replay does") {
  const std::string map = "maps/dm_small.map";
  game::testing::TestWorld live = NewWorld(map);
  ArmPlayers(live.world.get());
  Log log = PlayLive(live.world.get());
  TickRecord& bad = log.ticks[3];
  REQUIRE(bad.commands.size() > 10);
  for (const bool foreign_id : {false, true}) {
    TickRecord damaged = bad;
    TickCommand& c = damaged.commands[damaged.commands.size() / 2];
    if (foreign_id) {
      c.player = kPlayers + 5;  // not a player slot of this world
    } else {
      c.cmd.sequence = 1;       // already applied
    }
    for (const int threads : {1, 3}) {
      INFO("threads " << threads << (foreign_id ? ", foreign player id" : ", stale sequence"));
      game::testing::TestWorld t = NewWorld(map);
      ArmPlayers(t.world.get());
      std::unique_ptr<ParallelReplay> pool;
      if (threads > 1) {
        pool = std::make_unique<ParallelReplay>(
            t.world.get(), ParallelReplay::Options{threads, 1, 0, /*adaptive=*/false});
      }
      for (int i = 0; i < 3; ++i) REQUIRE(ApplyTick(t.world.get(), log.ticks[i], pool.get()).ok());
      const core::Status s = ApplyTick(t.world.get(), damaged, pool.get());
      REQUIRE(s.code() == core::Status::Code::kCorruption);
      CHECK_THAT(s.message(), Catch::Contains("replay: logged command") && Catch::Contains("refused"));
      // The pool is still usable afterwards (it is simply torn down by its owner).
    }
  }
}

// By the live lock order, helper 1 cuts the streams while the owner runs the world part. A world
// part that does not fit the state is Corruption before any command of the tick runs, and the cut
// running beside it leaves the pool in one piece (it is torn down without hanging).
TEST_CASE("tsan: by the live lock order, a world part that does not fit is corruption and runs no command") {
  const std::string map = "maps/dm_small.map";
  game::testing::TestWorld live = NewWorld(map);
  ArmPlayers(live.world.get());
  const Log log = PlayLiveOnWorkers(live.world.get());
  TickRecord damaged = log.ticks[3];
  REQUIRE(damaged.lock_order);
  REQUIRE(damaged.commands.size() > 10);
  damaged.world_tick += 7;  // the world phase gives another tick
  for (const int threads : {2, 4}) {
    INFO("threads " << threads);
    game::testing::TestWorld t = NewWorld(map);
    game::World* w = t.world.get();
    ArmPlayers(w);
    auto pool = std::make_unique<ParallelReplay>(w, ParallelReplay::Options{threads, 1, 0, /*adaptive=*/false});
    for (int i = 0; i < 3; ++i) REQUIRE(ApplyTick(w, log.ticks[i], pool.get()).ok());
    std::vector<uint32_t> sequences;
    for (game::EntityId p = 1; p <= kPlayers; ++p) sequences.push_back(w->Get(p).last_cmd_sequence);
    const core::Status s = ApplyTick(w, damaged, pool.get());
    REQUIRE(s.code() == core::Status::Code::kCorruption);
    CHECK_THAT(s.message(), Catch::Contains("world tick"));
    // The world part's leaves and joins have run (a leave resets the slot); nobody else moved on.
    size_t checked = 0;
    for (game::EntityId p = 1; p <= kPlayers; ++p) {
      auto is = [p](const auto& e) { return e.player == p; };
      if (std::any_of(damaged.leaves.begin(), damaged.leaves.end(), is) ||
          std::any_of(damaged.joins.begin(), damaged.joins.end(), is)) {
        continue;
      }
      INFO("player " << p);
      CHECK(w->Get(p).last_cmd_sequence == sequences[static_cast<size_t>(p - 1)]);
      ++checked;
    }
    CHECK(checked > kPlayers / 2);
    CHECK(pool->stats().parallel_ticks == 3);
    pool.reset();
  }
}

}  // namespace
}  // namespace durability
