// aftershock-mapcheck: loads each .map given with the server's loader (as_maps) and prints its
// brushes, entities, spawn points, pickups, teleporters, jump pads, bounds, load time and
// warnings. Exits 1 if any file fails to load or is one the server refuses (no spawn points, no
// solid brushes, too complex for the collision grid; the error is printed), 2 on bad usage.
// --repeat N loads each file N times and reports the median and fastest load. --vis also builds
// (or loads, with --vis-cache) the map's PVS and reports its build time, cells and visible share;
// --vis-check N measures it against exact line of sight on N random pairs.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include <cxxopts.hpp>

#include "maps/map_loader.h"
#include "server/collision/brush_grid.h"
#include "server/collision/collision_world.h"
#include "server/game/world.h"
#include "server/vis/pvs_cache.h"
#include "server/vis/pvs_check.h"

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
  std::printf("  collision grid entries: %llu (at most %llu)\n",
              static_cast<unsigned long long>(collision::CollisionWorld::GridEntries(map)),
              static_cast<unsigned long long>(collision::BrushGrid::kMaxEntries));
  std::printf("  warnings: %zu\n", map.warnings.size() + map.warnings_not_kept);
  size_t shown = all_warnings ? map.warnings.size() : kWarningsShown;
  for (size_t i = 0; i < map.warnings.size() && i < shown; ++i) {
    std::printf("    %s\n", map.warnings[i].c_str());
  }
  if (map.warnings.size() > shown) {
    std::printf("    ... %zu more (--all-warnings)\n", map.warnings.size() - shown);
  }
  if (map.warnings_not_kept > 0) {
    std::printf("    ... and %zu more not kept (the loader keeps the first %zu)\n",
                map.warnings_not_kept, maps::kMaxWarningsKept);
  }
}

struct VisOptions {
  bool on = false;
  std::string cache_dir;
  vis::PvsParams params;
  int check_pairs = 0;
};

// Builds or loads the PVS of `map` and prints what it is and, if asked, how it compares with
// exact line of sight. False if the build failed.
bool PrintVis(const maps::Map& map, const VisOptions& o) {
  auto collision = collision::CollisionWorld::Build(map);
  vis::Pvs pvs;
  vis::PvsCacheReport report;
  // To stderr, so that stdout stays the report.
  vis::PvsProgressReporter progress;
  progress.fn = [&map](const vis::PvsProgress& p) {
    std::fprintf(stderr, "aftershock-mapcheck: %s: pvs: %s\n", map.path.c_str(),
                 vis::DescribeProgress(p).c_str());
  };
  const core::Status s =
      vis::LoadOrBuildPvs(map, *collision, o.params, o.cache_dir, &pvs, &report, progress);
  if (!s.ok()) {
    std::fprintf(stderr, "aftershock-mapcheck: %s: pvs: %s\n", map.path.c_str(), s.ToString().c_str());
    return false;
  }
  const vis::PvsGrid& g = pvs.grid();
  const vis::PvsBuildStats& st = report.stats;
  std::printf("  pvs: %s in %.3f s (build took %.3f s on %s)\n",
              report.loaded ? "loaded" : "built", report.load_s, st.build_s,
              o.params.threads > 0 ? (std::to_string(o.params.threads) + " thread(s)").c_str()
                                   : "all hardware threads");
  if (!report.path.empty()) std::printf("  pvs cache: %s\n", report.path.c_str());
  if (!report.rejected.empty()) std::printf("  pvs cache rejected: %s\n", report.rejected.c_str());
  if (!report.save_error.empty()) std::printf("  pvs cache not saved: %s\n", report.save_error.c_str());
  std::printf("  pvs cells: %d (%d x %d x %d of %g units; open %d, closed %d), range %g units\n",
              st.cells, g.nx, g.ny, g.nz, g.cell_units, st.open_cells, st.closed_cells, g.range_units);
  std::printf("  pvs average visible fraction: %.3f (of open cells in range)\n", st.visible_fraction);
  std::printf("  pvs build work: %llu cell pairs traced, %llu segments, %zu KiB\n",
              static_cast<unsigned long long>(st.pairs_traced),
              static_cast<unsigned long long>(st.rays),
              (pvs.words().size() * 8 + pvs.row_offsets().size() * 4) / 1024);
  if (o.check_pairs > 0) {
    const vis::PvsCheckResult c = vis::CheckPvs(pvs, map, *collision, o.check_pairs, 12345);
    std::printf("  pvs check: %llu pairs, %llu in line of sight, %llu false hidden (%.4f%%), "
                "pvs visible %.1f%% of pairs\n",
                static_cast<unsigned long long>(c.pairs), static_cast<unsigned long long>(c.visible),
                static_cast<unsigned long long>(c.false_hidden), 100.0 * c.false_hidden_rate(),
                c.pairs ? 100.0 * c.pvs_visible / c.pairs : 0.0);
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  cxxopts::Options options("aftershock-mapcheck",
                           "Load Quake .map files as the Aftershock server does and report on them");
  options.add_options()("all-warnings", "print every warning, not only the first few")(
      "repeat", "load each file N times; report the median and fastest time",
      cxxopts::value<int>()->default_value("1"))(
      "vis", "also build the PVS and report it")(
      "vis-cache", "with --vis: load/save the PVS in this directory (none or empty: no cache, as the server's --vis-cache none)", cxxopts::value<std::string>()->default_value("none"))(
      "vis-range", "with --vis: interest radius the PVS serves, units", cxxopts::value<float>()->default_value("2048"))(
      "vis-check", "with --vis: compare with exact line of sight on N random pairs", cxxopts::value<int>()->default_value("0"))(
      "vis-rays", "with --vis: segments tried per cell pair", cxxopts::value<int>()->default_value("12"))(
      "threads", "with --vis: build threads (0: all hardware threads)", cxxopts::value<int>()->default_value("0"))("h,help", "print this help")("files", "map files", cxxopts::value<std::vector<std::string>>());
  options.parse_positional({"files"});
  options.positional_help("FILE...");
  std::vector<std::string> files;
  bool all_warnings = false;
  int repeat = 1;
  VisOptions vis_options;
  try {
    cxxopts::ParseResult args = options.parse(argc, argv);
    if (args.count("help")) {
      std::printf("%s\n", options.help().c_str());
      return 0;
    }
    if (args.count("files")) files = args["files"].as<std::vector<std::string>>();
    all_warnings = args.count("all-warnings") > 0;
    repeat = args["repeat"].as<int>();
    vis_options.on = args.count("vis") > 0;
    vis_options.cache_dir = args["vis-cache"].as<std::string>();
    // As the server's flag: no cache, not a directory named "none".
    if (vis_options.cache_dir == "none") vis_options.cache_dir.clear();
    vis_options.params.range_units = args["vis-range"].as<float>();
    vis_options.params.threads = args["threads"].as<int>();
    vis_options.params.rays_per_pair = args["vis-rays"].as<int>();
    vis_options.check_pairs = args["vis-check"].as<int>();
  } catch (const cxxopts::exceptions::exception& e) {
    std::fprintf(stderr, "aftershock-mapcheck: %s\n\n%s\n", e.what(), options.help().c_str());
    return 2;
  }
  if (repeat < 1 || repeat > 1000) {
    std::fprintf(stderr, "aftershock-mapcheck: --repeat must be 1..1000\n");
    return 2;
  }
  if (vis_options.check_pairs < 0 || vis_options.check_pairs > 100'000'000 ||
      vis_options.params.threads < 0 || vis_options.params.threads > 256) {
    std::fprintf(stderr, "aftershock-mapcheck: --vis-check must be 0..1e8 and --threads 0..256\n");
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
    // What the server refuses after loading, before any of its slow steps.
    if (s.ok()) s = game::World::CheckMap(map);
    if (s.ok()) s = collision::CollisionWorld::CheckMap(map);
    if (!s.ok()) {
      std::fprintf(stderr, "aftershock-mapcheck: %s\n", s.ToString().c_str());
      ++failures;
      continue;
    }
    std::sort(runs_ms.begin(), runs_ms.end());
    PrintMap(map, {runs_ms[runs_ms.size() / 2], runs_ms.front(), repeat}, all_warnings);
    if (vis_options.on && !PrintVis(map, vis_options)) ++failures;
  }
  return failures == 0 ? 0 : 1;
}
