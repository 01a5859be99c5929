// aftershock-bench-sim: runs N scripted players on a map on one thread, no network, each sending
// 30 commands/s (one 33 ms command per 33 ms tick), and reports commands per CPU second,
// microseconds per command, world-phase time per tick and state bytes per player.
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <cxxopts.hpp>

#include "maps/map_loader.h"
#include "server/core/cpu_clock.h"
#include "server/game/cmd_script.h"
#include "server/game/game_constants.h"
#include "server/game/game_test_util.h"
#include "server/game/move_clip.h"

namespace {

std::vector<int> ParseList(const std::string& s) {
  std::vector<int> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) out.push_back(std::stoi(item));
  return out;
}

struct Result {
  int players = 0;
  long commands = 0;
  double command_cpu_s = 0, world_cpu_s = 0;
  int ticks = 0;
  uint64_t deaths = 0;
  long alive_commands = 0;
  uint64_t traces = 0;
};

Result RunOne(const maps::Map& map, const collision::CollisionWorld& cw, int players, int ticks,
              int warmup, int attack_percent) {
  game::WorldConfig config;
  config.max_players = players;
  config.tick_ms = 33;
  std::unique_ptr<game::World> world;
  core::Status s = game::World::Create(map, cw, config, &world);
  if (!s.ok()) {
    std::fprintf(stderr, "world: %s\n", s.ToString().c_str());
    std::exit(1);
  }
  game::testing::ScriptOptions opts;
  opts.attack_percent = attack_percent;
  std::vector<game::testing::ScriptedPlayer> bots;
  for (int i = 0; i < players; ++i) {
    game::JoinResult j = world->Join("bot" + std::to_string(i), i);
    if (!j.status.ok()) {
      std::fprintf(stderr, "join: %s\n", j.status.ToString().c_str());
      std::exit(1);
    }
    bots.emplace_back(j.player, 1 + i, opts);
  }
  std::vector<game::UserCmd> cmds(bots.size());
  Result r;
  r.players = players;
  for (int tick = 0; tick < warmup + ticks; ++tick) {
    const bool measure = tick >= warmup;
    double t0 = core::ThreadCpuSeconds();
    world->RunWorldPhase();
    double t1 = core::ThreadCpuSeconds();
    for (size_t i = 0; i < bots.size(); ++i) cmds[i] = bots[i].Next(*world);  // the "network"
    double t2 = core::ThreadCpuSeconds();
    const uint64_t traces0 = game::ThisThreadMoveTraces();
    if (measure) {
      for (const auto& b : bots) r.alive_commands += !(world->Get(b.player()).flags & game::kFlagDead);
    }
    for (size_t i = 0; i < bots.size(); ++i) {
      if (!world->ExecuteCommand(bots[i].player(), cmds[i]).ok()) std::exit(2);
    }
    double t3 = core::ThreadCpuSeconds();
    if (measure) {
      r.world_cpu_s += t1 - t0;
      r.command_cpu_s += t3 - t2;
      r.commands += static_cast<long>(bots.size());
      r.traces += game::ThisThreadMoveTraces() - traces0;
      r.ticks++;
    }
  }
  for (const auto& b : bots) r.deaths += static_cast<uint64_t>(world->Get(b.player()).deaths);
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  cxxopts::Options options("aftershock-bench-sim",
                           "Single-threaded game simulation benchmark: scripted players, no network.");
  options.add_options()
      ("maps", "comma-separated .map files", cxxopts::value<std::string>()->default_value("maps/dm_arena.map,maps/metropolis.map"))
      ("players", "comma-separated player counts", cxxopts::value<std::string>()->default_value("64,256,1024"))
      ("seconds", "simulated seconds measured per run", cxxopts::value<int>()->default_value("20"))
      ("warmup", "simulated seconds before measuring", cxxopts::value<int>()->default_value("2"))
      ("attack-percent", "chance a command holds attack", cxxopts::value<int>()->default_value("10"))
      ("h,help", "print usage");
  cxxopts::ParseResult args;
  try {
    args = options.parse(argc, argv);
  } catch (const cxxopts::exceptions::exception& e) {
    std::cerr << e.what() << "\n" << options.help() << "\n";
    return 1;
  }
  if (args.count("help")) {
    std::cout << options.help() << "\n";
    return 0;
  }
  std::vector<int> counts;
  std::vector<std::string> paths;
  try {
    counts = ParseList(args["players"].as<std::string>());
    std::stringstream ss(args["maps"].as<std::string>());
    std::string p;
    while (std::getline(ss, p, ',')) paths.push_back(p);
  } catch (const std::exception& e) {
    std::cerr << "bad --players list: " << e.what() << "\n" << options.help() << "\n";
    return 1;
  }
  const int ticks = args["seconds"].as<int>() * 1000 / 33;
  const int warmup = args["warmup"].as<int>() * 1000 / 33;
  std::printf("%-22s %7s %12s %10s %14s %12s %10s %8s %7s %10s\n", "map", "players", "cmds/cpu-s",
              "us/cmd", "world us/tick", "state B/pl", "state KiB", "deaths", "alive%", "traces/cmd");
  for (const std::string& path : paths) {
    maps::Map map;
    core::Status s = maps::LoadMap(path, &map);
    if (!s.ok()) {
      std::fprintf(stderr, "%s\n", s.ToString().c_str());
      return 1;
    }
    auto cw = collision::CollisionWorld::Build(map);
    for (int n : counts) {
      if (n < 1 || n > 4096) {
        std::fprintf(stderr, "player count %d outside 1..4096\n", n);
        return 1;
      }
      Result r = RunOne(map, *cw, n, ticks, warmup, args["attack-percent"].as<int>());
      const double per_player = (1 + game::kRocketsPerPlayer) * static_cast<double>(game::kObjectSize);
      const double total_kib =
          (1.0 + n * (1 + game::kRocketsPerPlayer)) * game::kObjectSize / 1024.0;  // + pickups
      std::printf("%-22s %7d %12.0f %10.2f %14.1f %12.0f %10.1f %8llu %7.1f %10.2f\n", path.c_str(), n,
                  r.commands / r.command_cpu_s, 1e6 * r.command_cpu_s / r.commands,
                  1e6 * r.world_cpu_s / r.ticks, per_player, total_kib,
                  static_cast<unsigned long long>(r.deaths), 100.0 * r.alive_commands / r.commands,
                  static_cast<double>(r.traces) / r.commands);
      std::fflush(stdout);
    }
  }
  return 0;
}
