// aftershock-bench-collision: loads a map and times CollisionWorld::TraceBox on one core with
// short player-sized moves (walking along floors, falling), per narrow phase; also rays.
// Example: aftershock-bench-collision --map maps/dm_arena.map --moves 2000000
#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include <cxxopts.hpp>

#include "maps/map_loader.h"
#include "server/collision/collision_world.h"

namespace {

using collision::CollisionWorld;
using collision::Trace;
using core::Vec3;

const Vec3 kMins{-16, -16, -24}, kMaxs{16, 16, 32};

struct Move {
  Vec3 start, end;
};

// Player origins standing on a floor: random points in the map, dropped until they land.
std::vector<Vec3> FindStandingSpots(const CollisionWorld& world, std::mt19937* rng, int count) {
  const core::Bounds b = world.WorldBounds();
  std::uniform_real_distribution<float> ux(b.mins.x, b.maxs.x), uy(b.mins.y, b.maxs.y),
      uz(b.mins.z, b.maxs.z);
  std::vector<Vec3> spots;
  for (int tries = 0; tries < count * 1000 && static_cast<int>(spots.size()) < count; ++tries) {
    const Vec3 p{ux(*rng), uy(*rng), uz(*rng)};
    if (world.PointContents(p) != maps::Contents::kEmpty) continue;
    Trace fit = world.TraceBox(p, p, kMins, kMaxs);
    if (fit.start_solid) continue;
    Trace drop = world.TraceBox(p, p - Vec3{0, 0, 2048}, kMins, kMaxs);
    if (!drop.hit() || drop.normal.z < 0.7f) continue;  // fell out of the map, or onto a wall
    spots.push_back(drop.end);
  }
  return spots;
}

// 3 of 4 moves walk 10..40 units along the floor; 1 of 4 falls 10..40 units (with drift).
std::vector<Move> MakeMoves(const std::vector<Vec3>& spots, std::mt19937* rng, int count) {
  std::uniform_real_distribution<float> angle(0, 6.2831853f), len(10, 40);
  std::uniform_int_distribution<size_t> pick(0, spots.size() - 1);
  std::vector<Move> moves;
  moves.reserve(count);
  for (int i = 0; i < count; ++i) {
    const float a = angle(*rng), l = len(*rng);
    Move m;
    m.start = spots[pick(*rng)];
    if (i % 4 == 3) {
      m.start.z += 40;
      m.end = m.start + Vec3{std::cos(a) * 5, std::sin(a) * 5, -l};
    } else {
      m.end = m.start + Vec3{std::cos(a) * l, std::sin(a) * l, 0};
    }
    moves.push_back(m);
  }
  return moves;
}

struct Figures {
  double seconds = 0;
  int hits = 0;
  float checksum = 0;
};

Figures TimeSweeps(const CollisionWorld& world, const std::vector<Move>& moves, Vec3 mins,
                   Vec3 maxs) {
  Figures f;
  const auto t0 = std::chrono::steady_clock::now();
  for (const Move& m : moves) {
    const Trace t = world.TraceBox(m.start, m.end, mins, maxs);
    f.hits += t.hit() ? 1 : 0;
    f.checksum += t.fraction;
  }
  f.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return f;
}

// Eye to eye between standing spots up to 2048 units apart (the snapshot interest radius):
// the line-of-sight tests of snapshot building. `sights` holds start/end pairs.
Figures TimeSight(const CollisionWorld& world, const std::vector<Move>& sights) {
  Figures f;
  const auto t0 = std::chrono::steady_clock::now();
  for (const Move& m : sights) {
    const bool clear = world.LineOfSight(m.start, m.end);
    f.hits += clear ? 0 : 1;
    f.checksum += clear ? 1.0f : 0.0f;
  }
  f.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return f;
}

std::vector<Move> MakeSights(const std::vector<Vec3>& spots, std::mt19937* rng, int count) {
  const Vec3 eye{0, 0, 22};
  std::uniform_int_distribution<size_t> pick(0, spots.size() - 1);
  std::vector<Move> sights;
  for (int tries = 0; tries < count * 100 && static_cast<int>(sights.size()) < count; ++tries) {
    const Vec3 a = spots[pick(*rng)] + eye, b = spots[pick(*rng)] + eye;
    const Vec3 d = b - a;
    if (d.x * d.x + d.y * d.y + d.z * d.z > 2048.0f * 2048.0f) continue;
    sights.push_back({a, b});
  }
  return sights;
}

// Hitscan shots: from a standing spot's eye in a random direction (pitch within +-30 degrees)
// as far as the game's pellets fly, the map's diagonal (game::World's hitscan range, without
// its small entity margin).
std::vector<Move> MakeShots(const CollisionWorld& world, const std::vector<Vec3>& spots,
                            std::mt19937* rng, int count) {
  const Vec3 eye{0, 0, 22};
  const float range = Length(world.WorldBounds().Size());
  std::uniform_real_distribution<float> yaw(0, 6.2831853f), pitch(-0.5236f, 0.5236f);
  std::uniform_int_distribution<size_t> pick(0, spots.size() - 1);
  std::vector<Move> shots;
  shots.reserve(count);
  for (int i = 0; i < count; ++i) {
    const float y = yaw(*rng), p = pitch(*rng);
    const Vec3 dir{std::cos(y) * std::cos(p), std::sin(y) * std::cos(p), std::sin(p)};
    const Vec3 start = spots[pick(*rng)] + eye;
    shots.push_back({start, start + dir * range});
  }
  return shots;
}

void Report(const char* what, const Figures& f, size_t n) {
  std::printf("  %-28s %10.0f /s  %7.3f us each  (%d%% hit, checksum %.1f)\n", what,
              n / f.seconds, f.seconds * 1e6 / n, static_cast<int>(100.0 * f.hits / n),
              f.checksum);
}

int Run(const std::string& path, int num_moves, uint32_t seed, const std::string& phases) {
  maps::Map map;
  core::Status st = maps::LoadMap(path, &map);
  if (!st.ok()) {
    std::fprintf(stderr, "aftershock-bench-collision: %s\n", st.ToString().c_str());
    return 1;
  }
  std::printf("%s: %zu brushes (%d solid)\n", path.c_str(), map.brushes.size(), map.solid_brushes);
  struct Phase {
    const char* name;
    collision::Narrowphase value;
  };
  std::vector<Phase> list;
  if (phases != "bullet") list.push_back({"brush planes", collision::Narrowphase::kBrushPlanes});
  if (phases != "planes") list.push_back({"bullet hulls", collision::Narrowphase::kBulletHull});
  std::vector<Move> moves, sights, shots;
  for (const Phase& phase : list) {
    const auto b0 = std::chrono::steady_clock::now();
    auto world = CollisionWorld::Build(map, {phase.value});
    const double build_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - b0).count();
    if (moves.empty()) {
      std::mt19937 rng(seed);
      const std::vector<Vec3> spots = FindStandingSpots(*world, &rng, 4096);
      if (spots.empty()) {
        std::fprintf(stderr, "aftershock-bench-collision: %s: no open floor found\n",
                     path.c_str());
        return 1;
      }
      std::printf("%zu standing spots, %d moves (3/4 walk 10-40u, 1/4 fall 10-40u)\n",
                  spots.size(), num_moves);
      moves = MakeMoves(spots, &rng, num_moves);
      sights = MakeSights(spots, &rng, num_moves / 4);
      shots = MakeShots(*world, spots, &rng, num_moves / 16);
    }
    std::printf("%s (build %.1f ms):\n", phase.name, build_ms);
    Report("player box sweeps", TimeSweeps(*world, moves, kMins, kMaxs), moves.size());
    Report("rays (zero box)", TimeSweeps(*world, moves, {}, {}), moves.size());
    if (!sights.empty()) Report("line of sight (<= 2048u)", TimeSight(*world, sights), sights.size());
    Report("hitscan rays (map diagonal)", TimeSweeps(*world, shots, {}, {}), shots.size());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  cxxopts::Options options("aftershock-bench-collision",
                           "Times CollisionWorld sweeps on one core with player-sized moves.");
  options.add_options()("map", "map file", cxxopts::value<std::string>())(
      "moves", "number of moves", cxxopts::value<int>()->default_value("1000000"))(
      "seed", "random seed", cxxopts::value<uint32_t>()->default_value("1"))(
      "narrowphase", "planes, bullet or both",
      cxxopts::value<std::string>()->default_value("both"))(
      "h,help", "print this help");
  try {
    cxxopts::ParseResult args = options.parse(argc, argv);
    if (args.count("help") || !args.count("map")) {
      std::printf("%s\n", options.help().c_str());
      return args.count("help") ? 0 : 2;
    }
    const std::string phases = args["narrowphase"].as<std::string>();
    const int moves = args["moves"].as<int>();
    if ((phases != "planes" && phases != "bullet" && phases != "both") || moves <= 0) {
      std::fprintf(stderr, "--narrowphase must be planes, bullet or both; --moves > 0\n%s\n",
                   options.help().c_str());
      return 2;
    }
    return Run(args["map"].as<std::string>(), moves, args["seed"].as<uint32_t>(), phases);
  } catch (const cxxopts::exceptions::exception& e) {
    std::fprintf(stderr, "aftershock-bench-collision: %s\n%s\n", e.what(), options.help().c_str());
    return 2;
  }
}
