// The server's durability path end to end, in one process on FaultEnv: 3 worker threads run 32+
// scripted players' commands under the areanode leaf locks (the protocol of
// tests/game/game_parallel_test.cc), taking the execution sequence under the locks; the master
// merges the tick record, logs it, waits for durability and runs the checkpointer at the tick
// boundary. Then a simulated power cut (unsynced writes dropped) at an arbitrary point, recovery
// into a fresh World, and two checks: the recovered state's hash equals the live hash recorded
// at the recovered tick, and no tick that was durable before the crash is lost. Each algorithm,
// two crash cycles each. Every crashed directory is first recovered read-only with 1, 2 and 4
// replay threads (serial replay, and parallel replay following the records' live lock order), each
// to the live hash; the restart replays on 2.
// Run under TSan it also checks the write hook under parallel commands and the replay pool.
#include <catch2/catch.hpp>

#include <algorithm>
#include <iterator>
#include <map>
#include <random>
#include <thread>
#include <utility>
#include <vector>

#include "recovery/fault_env.h"
#include "server/areanode/areanode_tree.h"
#include "server/durability/durability.h"
#include "server/durability/tick_apply.h"
#include "server/durability/tick_recorder.h"
#include "server/game/cmd_script.h"
#include "server/game/game_test_util.h"
#include "server/game/region_locker.h"

namespace durability {
namespace {

constexpr int kThreads = 3;
constexpr int kPlayers = 36;
constexpr char kDir[] = "/srv/data";

// ---- One server process: a World, its Durability, and the frame loop ----

struct Process {
  game::testing::TestWorld world;
  std::unique_ptr<Durability> dur;
  WorldRecoveryReport report;
};

struct RunConfig {
  recovery::Algorithm algorithm = recovery::Algorithm::kCou;
  recovery::SyncMode mode = recovery::SyncMode::kSync;
  int checkpoint_interval_ms = 0;
};

core::Status StartProcess(recovery::FaultEnv* env, const RunConfig& rc, Process* p) {
  game::WorldConfig config;
  config.max_players = 48;
  p->world = game::testing::LoadWorld("maps/dm_arena.map", config);
  p->world.world->tree().set_parent_locking(true);
  p->world.world->set_region_check(true);
  DurabilityOptions o;
  o.env = env;
  o.data_dir = kDir;
  o.algorithm = rc.algorithm;
  o.sync_mode = rc.mode;
  o.checkpoint_interval_ms = rc.checkpoint_interval_ms;
  o.async_flush_ms = 2;
  // Three, and every replay check beside recovery: the check on one thread while recovery
  // replays on a pool of the other two.
  o.replay_threads = 3;
  o.check_beside_min_span_ms = 0;
  o.segment_bytes = 64 << 10;  // several segments, so recovery crosses and deletion runs
  o.make_check_world = [p, config](std::unique_ptr<game::World>* out) {  // the replay check
    return game::World::Create(p->world.map, *p->world.collision, config, out);
  };
  return Durability::Open(o, p->world.world.get(), &p->report, &p->dur);
}

class Game {
 public:
  // How far a frame gets before the (simulated) power cut.
  enum Stop { kAfterCommands, kAfterLogAppend, kAfterWaitDurable, kComplete };

  // One frame: world part, parallel commands, record, log, (sync) wait, checkpoint boundary.
  // Returns the log's or checkpointer's error; thread errors are collected in *errors.
  core::Status Frame(Process* p, std::vector<std::string>* errors, Stop stop = kComplete) {
    game::World* w = p->world.world.get();
    const uint64_t tick = p->dur->recovered_tick() + ++frames_in_process_;
    TickRecord record;
    WorldPart(w, tick, &record);
    std::vector<TickCommand> cmds;
    for (int i = 0; i < kPlayers; ++i) {
      game::testing::ScriptedPlayer& s = scripts_[i];
      if (Online(*w, i)) cmds.push_back({0, s.player(), s.Next(*w)});
    }
    std::vector<std::thread> threads;
    std::vector<std::vector<std::string>> thread_errors(kThreads);
    for (int th = 0; th < kThreads; ++th) {
      threads.emplace_back([&, th] {
        game::RegionLocker locker(&w->tree(), /*optimized=*/true);  // one per thread, as the server's workers
        for (size_t i = th; i < cmds.size(); i += kThreads) {
          game::RegionLock region(&locker, *w, cmds[i].player, cmds[i].cmd);
          const core::Status s = w->ExecuteCommand(cmds[i].player, cmds[i].cmd);
          if (s.ok()) recorder_.Record(th, cmds[i].player, cmds[i].cmd, locker.held());  // locks still held
          else thread_errors[th].push_back(s.ToString());
        }
      });
    }
    for (auto& t : threads) t.join();
    for (auto& e : thread_errors) errors->insert(errors->end(), e.begin(), e.end());
    recorder_.MergeInto(&record);
    if (stop == kAfterCommands) return core::Status::OK();
    live_hash_[tick] = w->StateHash();
    core::Status s = p->dur->AppendTickRecord(tick, record);
    if (!s.ok() || stop == kAfterLogAppend) return s;
    s = p->dur->WaitDurable(tick);
    if (!s.ok() || stop == kAfterWaitDurable) return s;
    return p->dur->TickBoundary(tick);
  }

  void NewProcess() { frames_in_process_ = 0; }
  bool has_live_hash(uint64_t tick) const { return live_hash_.count(tick) != 0; }
  uint64_t live_hash(uint64_t tick) const { return live_hash_.at(tick); }

 private:
  // True if script i's player is online in `w` (found by name: a slot it left may hold another).
  bool Online(const game::World& w, int i) const {
    return scripts_[i].player() != 0 && w.FindPlayer("player" + std::to_string(i)) == scripts_[i].player();
  }

  // Joins 12 players per tick until all are in; then each player leaves now and then and comes
  // back 4 ticks later (a rejoin resumes its record, in its old slot if that is still free).
  void WorldPart(game::World* w, uint64_t tick, TickRecord* record) {
    for (int i = 0; i < kPlayers; ++i) {
      if (!Online(*w, i)) continue;
      if ((tick + 3 * i) % 29 == 0) REQUIRE(ApplyLeave(w, scripts_[i].player(), record).ok());
    }
    int joined = 0;
    for (int i = 0; i < kPlayers && joined < 12; ++i) {
      game::testing::ScriptedPlayer& s = scripts_[i];
      if (Online(*w, i) || (s.player() != 0 && (tick + 3 * i) % 29 < 4)) continue;
      const game::JoinResult j = ApplyJoin(w, "player" + std::to_string(i), 7000 + i, record);
      REQUIRE(j.status.ok());
      if (s.player() == 0) s = game::testing::ScriptedPlayer(j.player, 101 + i, Options());
      s.set_player(j.player);
      ++joined;
    }
    ApplyWorldPhase(w, tick % 4 != 0, record);
  }
  static game::testing::ScriptOptions Options() {
    game::testing::ScriptOptions opts;
    opts.attack_percent = 25;
    opts.jump_percent = 10;
    opts.min_duration_ms = 10;
    opts.max_duration_ms = 60;
    return opts;
  }

  // Player 0: not joined yet.
  std::vector<game::testing::ScriptedPlayer> scripts_ =
      std::vector<game::testing::ScriptedPlayer>(kPlayers);
  // A lock id per leaf of any tree; the worlds' trees have the default depth.
  TickRecorder recorder_{kThreads, 1 << areanode::kMaxDepth, areanode::kDefaultDepth};
  uint64_t frames_in_process_ = 0;
  std::map<uint64_t, uint64_t> live_hash_;  // by log tick; re-executed ticks overwrite
};

// Two cycles of: run 24..39 frames, cut the power at a random point of the last one, recover.
void CrashAndRecoverCycles(const RunConfig& rc) {
  recovery::FaultEnv env(17);
  std::mt19937 rng(static_cast<uint32_t>(rc.algorithm) * 31 + static_cast<uint32_t>(rc.mode));
  Game game;
  Process proc;
  REQUIRE(StartProcess(&env, rc, &proc).ok());
  REQUIRE_FALSE(proc.report.found_state);
  std::vector<std::string> errors;
  int checks_matched = 0, checks_beside = 0;
  for (int cycle = 0; cycle < 2; ++cycle) {
    INFO("cycle " << cycle);
    const int frames = 24 + static_cast<int>(rng() % 16);
    const auto stop = static_cast<Game::Stop>(rng() % 4);
    for (int f = 0; f < frames; ++f) {
      REQUIRE(game.Frame(&proc, &errors, f + 1 == frames ? stop : Game::kComplete).ok());
      // The checkpoint started at this process's first boundary commits before the crash.
      if (f == 8) REQUIRE(proc.dur->WaitCheckpointIdle().ok());
    }
    REQUIRE(errors.empty());
    const uint64_t appended = proc.dur->recovered_tick() + static_cast<uint64_t>(frames) -
                              (stop == Game::kAfterCommands ? 1 : 0);
    const uint64_t durable_before = proc.dur->durable_tick();
    if (rc.mode == recovery::SyncMode::kSync) REQUIRE(durable_before >= appended - 1);
    env.Crash(recovery::FaultEnv::CrashMode::kDropUnsynced);  // writers may be mid-write
    proc.dur.reset();                                         // their errors die with them
    proc = Process{};
    game.NewProcess();

    // The same directory recovered serially and in parallel, writing nothing: one state, the live
    // one. Last, on a tree coarser than the live one (a restart with a smaller --areanode-depth),
    // whose leaves the records' lock order does not cover: the walk replays those ticks.
    constexpr int kLive = areanode::kDefaultDepth;  // the live worlds' tree (the recorder's depth)
    constexpr std::pair<int, int> kProbes[] = {{1, kLive}, {2, kLive}, {4, kLive}, {2, kLive - 1}};
    for (const auto& [threads, depth] : kProbes) {
      Process probe;
      game::WorldConfig config;
      config.max_players = 48;
      config.areanode_depth = depth;
      probe.world = game::testing::LoadWorld("maps/dm_arena.map", config);
      DurabilityOptions o;
      o.env = &env;
      o.data_dir = kDir;
      o.replay_threads = threads;
      REQUIRE(Durability::RecoverReadOnly(o, probe.world.world.get(), &probe.report).ok());
      const WorldRecoveryReport& r = probe.report;
      INFO(threads << " replay threads, depth " << depth << ": recovered tick " << r.recovered_tick
                   << ", replayed " << r.ticks_replayed << " ticks, " << r.commands_replayed << " commands");
      CHECK(r.replay_threads == threads);
      // The records carry the workers' lock order; a whole log (no checkpoint) is long enough
      // for the adaptive choice's pool probe, which then follows it on the live tree.
      if (threads > 1 && rc.algorithm == recovery::Algorithm::kNone) {
        const bool coarser = depth < kLive;
        CHECK((r.replay_lock_order_ticks > 0) == !coarser);
        CHECK((r.replay_coarse_tree_ticks > 0) == coarser);
      }
      REQUIRE(game.has_live_hash(r.recovered_tick));
      REQUIRE(r.state_hash == game.live_hash(r.recovered_tick));
    }

    REQUIRE(StartProcess(&env, rc, &proc).ok());
    const WorldRecoveryReport& r = proc.report;
    INFO("crash after stage " << stop << "; recovered tick " << r.recovered_tick << ", checkpoint "
                              << r.checkpoint_tick << ", replayed " << r.ticks_replayed);
    CHECK(r.recovered_tick >= durable_before);  // no acknowledged tick lost
    CHECK(r.recovered_tick <= appended);
    CHECK(r.from_checkpoint == (rc.algorithm != recovery::Algorithm::kNone));
    CHECK(r.checkpoint_tick + r.ticks_replayed == r.recovered_tick);
    if (rc.checkpoint_interval_ms > 0) CHECK(r.ticks_replayed >= 15);  // one checkpoint/process
    REQUIRE(game.has_live_hash(r.recovered_tick));
    REQUIRE(r.state_hash == game.live_hash(r.recovered_tick));
    REQUIRE(proc.world.world->StateHash() == r.state_hash);
    // The replay check: whatever the crash left, the log never replays the older backup to
    // anything but the recovered one, and when it ran, both are the live states of their ticks.
    const ReplayCheck& c = r.replay_check;
    INFO("replay check " << ReplayCheckName(c.outcome) << ": " << c.detail);
    CHECK(c.outcome != ReplayCheck::Outcome::kDiffers);
    CHECK(c.outcome != ReplayCheck::Outcome::kOff);
    if (c.outcome == ReplayCheck::Outcome::kMatch) {
      ++checks_matched;
      CHECK(c.backup_hash == game.live_hash(c.to_tick));
      checks_beside += c.beside_recovery ? 1 : 0;
    }
  }
  // With one checkpoint per process, committed before the crash, the second process's goes to
  // the other file, so the last recovery has two backups and the log between them: a match,
  // whatever the timing. (Back to back, a crash may catch a checkpoint writing into the older
  // file; in async mode a backup may be newer than the synced log. Both give not_run.)
  if (rc.checkpoint_interval_ms > 0) CHECK(checks_matched >= 1);
  // A match needs two backups, so recovery loaded the one it tried first: the check ran beside it.
  CHECK(checks_beside == checks_matched);
  // The run goes on after the last recovery.
  for (int f = 0; f < 5; ++f) REQUIRE(game.Frame(&proc, &errors).ok());
  REQUIRE(errors.empty());
}

// One checkpoint per process (an interval longer than the test): recovery loads it and replays
// the ticks since, whatever the timing.
constexpr int kOnce = 3600 * 1000;

TEST_CASE("parallel run, crash, recover: cou") {
  CrashAndRecoverCycles({recovery::Algorithm::kCou, recovery::SyncMode::kSync, kOnce});
  CrashAndRecoverCycles({recovery::Algorithm::kCou, recovery::SyncMode::kSync, 0});
}
TEST_CASE("parallel run, crash, recover: naive") {
  CrashAndRecoverCycles({recovery::Algorithm::kNaive, recovery::SyncMode::kSync, kOnce});
}
TEST_CASE("parallel run, crash, recover: pingpong") {
  CrashAndRecoverCycles({recovery::Algorithm::kPingPong, recovery::SyncMode::kSync, kOnce});
  CrashAndRecoverCycles({recovery::Algorithm::kPingPong, recovery::SyncMode::kSync, 0});
}
TEST_CASE("parallel run, crash, recover: none (log only)") {
  CrashAndRecoverCycles({recovery::Algorithm::kNone, recovery::SyncMode::kSync, 0});
}
TEST_CASE("parallel run, crash, recover: cou with async durability") {
  CrashAndRecoverCycles({recovery::Algorithm::kCou, recovery::SyncMode::kAsync, 0});
}

}  // namespace
}  // namespace durability
