// Long scripted simulations on maps/dm_arena.map and maps/metropolis.map: the region check
// (every entity a command touches lies inside its declared region) and determinism.
#include <catch2/catch.hpp>

#include <vector>

#include "server/game/cmd_script.h"
#include "server/game/game_constants.h"
#include "server/game/game_test_util.h"

namespace game {
namespace {

std::vector<testing::ScriptedPlayer> JoinBots(World* w, int n, uint64_t seed) {
  testing::ScriptOptions opts;
  opts.attack_percent = 25;
  opts.jump_percent = 10;
  opts.impulse_percent = 5;
  opts.min_duration_ms = 1;
  opts.max_duration_ms = kMaxCmdMs;
  std::vector<testing::ScriptedPlayer> bots;
  for (int i = 0; i < n; ++i) {
    EntityId id = testing::JoinOrDie(w, "bot" + std::to_string(i), 1000 + i);
    Edict& e = w->Mut(id);  // arm everyone so rockets fly from the start
    e.weapons_owned |= 1u << kWeaponRocketLauncher;
    e.ammo_rockets = 100;
    bots.emplace_back(id, seed + i, opts);
  }
  return bots;
}

struct Stats {
  int commands = 0, deaths = 0, frags = 0, rockets_seen = 0, teleports = 0;
};

void Play(World* w, std::vector<testing::ScriptedPlayer>* bots, int ticks, Stats* stats) {
  for (int tick = 0; tick < ticks; ++tick) {
    w->RunWorldPhase();
    for (auto& bot : *bots) {
      const UserCmd cmd = bot.Next(*w);
      const Region r = w->RegionOf(bot.player(), cmd);
      const Vec3 before = w->Get(bot.player()).origin;
      REQUIRE(w->ExecuteCommand(bot.player(), cmd).ok());
      stats->commands++;
      const Vec3 d = w->Get(bot.player()).origin - before;
      if (Dot(d, d) > 600.0f * 600.0f && r.teleport_count > 0) stats->teleports++;
    }
    for (EntityId id = w->RocketSlot(1, 0); id < w->first_pickup(); ++id) {
      if (w->Get(id).kind == EntityKind::kRocket) stats->rockets_seen++;
    }
  }
  for (auto& bot : *bots) {
    stats->deaths += w->Get(bot.player()).deaths;
    stats->frags += w->Get(bot.player()).frags;
  }
}

TEST_CASE("64 scripted players on dm_arena never touch outside their declared regions") {
  auto t = testing::LoadWorld("maps/dm_arena.map");
  t.world->set_region_check(true);  // a violation aborts the test binary naming the command
  auto bots = JoinBots(t.world.get(), 64, 1);
  Stats stats;
  Play(t.world.get(), &bots, 1500, &stats);
  CHECK(stats.commands == 64 * 1500);
  CHECK(stats.deaths > 20);  // the rules were exercised: rockets and pellets killed players
  CHECK(stats.rockets_seen > 20);
  CHECK(stats.teleports > 0);
  INFO("deaths " << stats.deaths << " frags " << stats.frags << " rocket-ticks "
                 << stats.rockets_seen << " teleports " << stats.teleports);
}

TEST_CASE("players never end up inside walls on dm_arena") {
  auto t = testing::LoadWorld("maps/dm_arena.map");
  auto bots = JoinBots(t.world.get(), 32, 7);
  for (int tick = 0; tick < 600; ++tick) {
    t.world->RunWorldPhase();
    for (auto& bot : bots) REQUIRE(t.world->ExecuteCommand(bot.player(), bot.Next(*t.world)).ok());
    for (auto& bot : bots) {
      const Edict& e = t.world->Get(bot.player());
      if (e.flags & kFlagDead) continue;
      const collision::Trace tr = t.collision->TraceBox(e.origin, e.origin, e.mins, e.maxs);
      INFO("player " << bot.player() << " at " << e.origin.x << " " << e.origin.y << " " << e.origin.z);
      REQUIRE(!tr.start_solid);
    }
  }
}

TEST_CASE("the same command stream gives the same hash, and save/load gives the same future") {
  auto run = [](int ticks_before_save, std::vector<uint8_t>* saved, uint64_t* hash_at_save) {
    auto t = testing::LoadWorld("maps/dm_arena.map");
    auto bots = JoinBots(t.world.get(), 48, 42);
    Stats stats;
    Play(t.world.get(), &bots, ticks_before_save, &stats);
    t.world->SaveState(saved);
    *hash_at_save = t.world->StateHash();
    Play(t.world.get(), &bots, 300, &stats);
    return std::make_pair(t.world->StateHash(), bots);
  };
  std::vector<uint8_t> saved1, saved2;
  uint64_t h1, h2;
  auto [final1, bots1] = run(300, &saved1, &h1);
  auto [final2, bots2] = run(300, &saved2, &h2);
  CHECK(h1 == h2);
  CHECK(final1 == final2);
  CHECK(saved1 == saved2);
  CHECK(h1 != final1);

  // Load the mid-run state into a fresh world and continue with the same scripts.
  auto t = testing::LoadWorld("maps/dm_arena.map");
  REQUIRE(t.world->LoadState(saved1).ok());
  CHECK(t.world->StateHash() == h1);
  auto fresh = testing::LoadWorld("maps/dm_arena.map");
  auto replay_bots = JoinBots(fresh.world.get(), 48, 42);
  Stats stats;
  Play(fresh.world.get(), &replay_bots, 300, &stats);  // brings the scripts to the save point
  REQUIRE(fresh.world->StateHash() == h1);
  Play(t.world.get(), &replay_bots, 300, &stats);
  CHECK(t.world->StateHash() == final1);
}

TEST_CASE("metropolis: 128 players with the region check") {
  auto t = testing::LoadWorld("maps/metropolis.map", WorldConfig{.max_players = 128});
  t.world->set_region_check(true);
  auto bots = JoinBots(t.world.get(), 128, 3);
  Stats stats;
  Play(t.world.get(), &bots, 300, &stats);
  CHECK(stats.commands == 128 * 300);
  // Long-range actions ran under the region check: rockets flew (kExpandedBox), players died,
  // and teleport boxes were used (the fixed seeds give 5406 rocket-ticks, 114 deaths, 3 teleports).
  INFO("deaths " << stats.deaths << " frags " << stats.frags << " rocket-ticks "
                 << stats.rockets_seen << " teleports " << stats.teleports);
  CHECK(stats.rockets_seen > 1000);
  CHECK(stats.deaths > 20);
  CHECK(stats.teleports > 0);
}

}  // namespace
}  // namespace game
