// Commands executed by several threads under areanode leaf locks (the server's scheme), then
// replayed serially in the logged order: the states must be equal tick by tick. Run under TSan
// this also proves that commands of disjoint regions share no unsynchronised state.
#include <catch2/catch.hpp>

#include <mutex>
#include <thread>
#include <vector>

#include "server/game/cmd_script.h"
#include "server/game/game_constants.h"
#include "server/game/game_test_util.h"
#include "server/game/region_locker.h"

namespace game {
namespace {

struct LoggedCmd {
  EntityId player;
  UserCmd cmd;
};

// Joins n scripted players, each armed with the rocket launcher.
std::vector<testing::ScriptedPlayer> JoinBots(World* w, int n) {
  testing::ScriptOptions opts;
  opts.attack_percent = 20;
  opts.jump_percent = 10;
  opts.min_duration_ms = 10;
  opts.max_duration_ms = 60;
  std::vector<testing::ScriptedPlayer> bots;
  for (int i = 0; i < n; ++i) {
    EntityId id = testing::JoinOrDie(w, "bot" + std::to_string(i), i);
    Edict& e = w->Mut(id);
    e.weapons_owned |= 1u << kWeaponRocketLauncher;
    e.ammo_rockets = 100;
    bots.emplace_back(id, 77 + i, opts);
  }
  return bots;
}

void RunParallelAndReplay(bool optimized) {
  constexpr int kPlayers = 48, kThreads = 3, kTicks = 120;
  auto par = testing::LoadWorld("maps/dm_arena.map");
  auto ser = testing::LoadWorld("maps/dm_arena.map");
  World* pw = par.world.get();
  World* sw = ser.world.get();
  pw->tree().set_parent_locking(true);
  pw->set_region_check(true);
  auto bots = JoinBots(pw, kPlayers);
  JoinBots(sw, kPlayers);
  REQUIRE(pw->StateHash() == sw->StateHash());

  std::vector<LoggedCmd> log;
  std::mutex log_mu;
  std::vector<std::string> errors;
  for (int tick = 0; tick < kTicks; ++tick) {
    pw->RunWorldPhase();
    std::vector<LoggedCmd> cmds;
    for (auto& bot : bots) cmds.push_back({bot.player(), bot.Next(*pw)});
    log.clear();
    std::vector<std::thread> threads;
    for (int th = 0; th < kThreads; ++th) {
      threads.emplace_back([&, th] {
        RegionLocker locker(&pw->tree(), optimized);  // as each server worker has its own
        for (size_t i = th; i < cmds.size(); i += kThreads) {
          RegionLock region(&locker, *pw, cmds[i].player, cmds[i].cmd);
          core::Status s = pw->ExecuteCommand(cmds[i].player, cmds[i].cmd);
          std::lock_guard<std::mutex> lock(log_mu);  // logged while the leaves are held
          log.push_back(cmds[i]);
          if (!s.ok()) errors.push_back(s.ToString());
        }
      });
    }
    for (auto& t : threads) t.join();
    REQUIRE(errors.empty());
    sw->RunWorldPhase();
    for (const LoggedCmd& c : log) REQUIRE(sw->ExecuteCommand(c.player, c.cmd).ok());
    INFO("tick " << tick);
    REQUIRE(sw->StateHash() == pw->StateHash());
  }
}

TEST_CASE("parallel commands under leaf locks equal their serial replay (optimized regions)") {
  RunParallelAndReplay(true);
}

TEST_CASE("parallel commands under leaf locks equal their serial replay (conservative)") {
  RunParallelAndReplay(false);
}

}  // namespace
}  // namespace game
