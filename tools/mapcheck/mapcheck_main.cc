// aftershock-mapcheck: loads each .map given with the server's loader (as_maps) and prints its
// brushes, entities, spawn points, pickups, teleporters, jump pads, bounds, load time and
// warnings. Exits 1 if any file fails to load (the error is printed), 2 on bad usage.
// --repeat N loads each file N times and reports the median and fastest load.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include <cxxopts.hpp>

#include "maps/map_loader.h"

namespace {

constexpr int kWarningsShown = 5;

struct BrushCounts {
  int solid = 0, liquid = 0, trigger = 0, empty = 0;
};

BrushCounts CountBrushes(const maps::Map& map) {
  BrushCounts c;
  for (const maps::Brush& b : map.brushes) {
    switch (b.contents) {
      case maps::Contents::kSolid: ++c.solid; break;
      case maps::Contents::kLiquid: ++c.liquid; break;
      case maps::Contents::kTrigger: ++c.trigger; break;
      case maps::Contents::kEmpty: ++c.empty; break;
    }
  }
  return c;
}

struct LoadTimes {
  double median_ms = 0, min_ms = 0;
  int runs = 0;
};

void PrintMap(const maps::Map& map, const LoadTimes& times, bool all_warnings) {
  BrushCounts c = CountBrushes(map);
  std::printf("%s: loaded in %.2f ms", map.path.c_str(), times.median_ms);
  if (times.runs > 1) std::printf(" (median of %d, fastest %.2f ms)", times.runs, times.min_ms);
  std::printf(", %s dialect\n", map.valve220 ? "Valve 220" : "standard");
  std::printf("  brushes: %zu (solid %d, liquid %d, trigger %d, empty %d)\n", map.brushes.size(),
              c.solid, c.liquid, c.trigger, c.empty);
  std::printf("  entities: %zu (%d of unknown classnames)\n", map.entities.size(),
              map.unknown_entities);
  for (const auto& [classname, count] : map.classname_counts) {
    std::printf("    %-32s %d\n", classname.c_str(), count);
  }
  int deathmatch = 0;
  for (const maps::SpawnPoint& s : map.spawns) deathmatch += s.deathmatch ? 1 : 0;
  std::printf("  spawn points: %zu (deathmatch %d, start %zu)\n", map.spawns.size(), deathmatch,
              map.spawns.size() - deathmatch);
  std::printf("  pickups: %zu\n", map.pickups.size());
  std::printf("  teleporters: %zu\n", map.teleporters.size());
  std::printf("  jump pads: %zu\n", map.jump_pads.size());
  if (map.bounds.IsEmpty()) {
    std::printf("  bounds: none (no solid brushes)\n");
  } else {
    const maps::Bounds& b = map.bounds;
    maps::Vec3 size = b.Size();
    std::printf("  bounds: (%g %g %g) .. (%g %g %g), size %g x %g x %g\n", b.mins.x, b.mins.y,
                b.mins.z, b.maxs.x, b.maxs.y, b.maxs.z, size.x, size.y, size.z);
  }
  std::printf("  warnings: %zu\n", map.warnings.size());
  size_t shown = all_warnings ? map.warnings.size() : kWarningsShown;
  for (size_t i = 0; i < map.warnings.size() && i < shown; ++i) {
    std::printf("    %s\n", map.warnings[i].c_str());
  }
  if (map.warnings.size() > shown) {
    std::printf("    ... %zu more (--all-warnings)\n", map.warnings.size() - shown);
  }
}

}  // namespace

int main(int argc, char** argv) {
  cxxopts::Options options("aftershock-mapcheck",
                           "Load Quake .map files as the Aftershock server does and report on them");
  options.add_options()("all-warnings", "print every warning, not only the first few")(
      "repeat", "load each file N times; report the median and fastest time",
      cxxopts::value<int>()->default_value("1"))("h,help", "print this help")("files", "map files", cxxopts::value<std::vector<std::string>>());
  options.parse_positional({"files"});
  options.positional_help("FILE...");
  std::vector<std::string> files;
  bool all_warnings = false;
  int repeat = 1;
  try {
    cxxopts::ParseResult args = options.parse(argc, argv);
    if (args.count("help")) {
      std::printf("%s\n", options.help().c_str());
      return 0;
    }
    if (args.count("files")) files = args["files"].as<std::vector<std::string>>();
    all_warnings = args.count("all-warnings") > 0;
    repeat = args["repeat"].as<int>();
  } catch (const cxxopts::exceptions::exception& e) {
    std::fprintf(stderr, "aftershock-mapcheck: %s\n\n%s\n", e.what(), options.help().c_str());
    return 2;
  }
  if (repeat < 1 || repeat > 1000) {
    std::fprintf(stderr, "aftershock-mapcheck: --repeat must be 1..1000\n");
    return 2;
  }
  if (files.empty()) {
    std::fprintf(stderr, "aftershock-mapcheck: no map files given\n\n%s\n", options.help().c_str());
    return 2;
  }
  int failures = 0;
  for (const std::string& path : files) {
    maps::Map map;
    core::Status s;
    std::vector<double> runs_ms;
    for (int run = 0; run < repeat && s.ok(); ++run) {
      auto start = std::chrono::steady_clock::now();
      s = maps::LoadMap(path, &map);
      std::chrono::duration<double, std::milli> elapsed = std::chrono::steady_clock::now() - start;
      runs_ms.push_back(elapsed.count());
    }
    if (!s.ok()) {
      std::fprintf(stderr, "aftershock-mapcheck: %s\n", s.ToString().c_str());
      ++failures;
      continue;
    }
    std::sort(runs_ms.begin(), runs_ms.end());
    PrintMap(map, {runs_ms[runs_ms.size() / 2], runs_ms.front(), repeat}, all_warnings);
  }
  return failures == 0 ? 0 : 1;
}
