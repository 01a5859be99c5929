// CollisionWorld on real maps loaded by as_maps (our maps/dm_arena.map and LibreQuake's lqdm6):
// players fit at every spawn and land on a floor below it, and walking and falling from the
// spawns never ends inside a brush (independent separating-axis check).
#include <catch2/catch.hpp>
#include <random>
#include <string>

#include "maps/map_loader.h"
#include "server/collision/collision_test_util.h"
#include "server/collision/collision_world.h"

namespace collision {
namespace {

const Vec3 kMins{-16, -16, -24}, kMaxs{16, 16, 32};

TEST_CASE("real maps: spawns fit, land on floors, and moves from them stay out of solid") {
  const std::string path = GENERATE(as<std::string>{}, "maps/dm_arena.map",
                                    "maps/librequake/lqdm6.map");
  INFO(path);
  maps::Map map;
  core::Status st = maps::LoadMap(path, &map);
  REQUIRE(st.ok());
  REQUIRE_FALSE(map.spawns.empty());
  auto world = CollisionWorld::Build(map);
  CHECK(world->NumSolidBrushes() == map.solid_brushes);
  CHECK(world->WorldBounds().Contains(map.bounds));

  std::vector<Vec3> floors;
  for (const maps::SpawnPoint& spawn : map.spawns) {
    INFO("spawn " << spawn.origin.x << " " << spawn.origin.y << " " << spawn.origin.z);
    CHECK_FALSE(world->TraceBox(spawn.origin, spawn.origin, kMins, kMaxs).start_solid);
    CHECK(world->PointContents(spawn.origin) != maps::Contents::kSolid);
    const Trace drop = world->TraceBox(spawn.origin, spawn.origin - Vec3{0, 0, 512}, kMins, kMaxs);
    CHECK(drop.hit());
    CHECK(drop.normal.z > 0.7f);
    if (drop.hit()) floors.push_back(drop.end);
  }
  REQUIRE_FALSE(floors.empty());

  std::mt19937 rng(5);
  std::uniform_real_distribution<float> angle(0, 6.2831853f), len(10, 200);
  int hits = 0;
  for (int i = 0; i < 1500; ++i) {
    const Vec3 start = floors[i % floors.size()];
    const float a = angle(rng), l = len(rng);
    const Vec3 end = start + Vec3{std::cos(a) * l, std::sin(a) * l, i % 3 == 0 ? -l : 0.0f};
    const Trace tr = world->TraceBox(start, end, kMins, kMaxs);
    REQUIRE_FALSE(tr.start_solid);
    hits += tr.hit() ? 1 : 0;
    INFO("move " << start.x << " " << start.y << " " << start.z << " -> " << end.x << " "
                 << end.y << " " << end.z);
    CHECK(testing::FirstOverlap(map, tr.end, kMins, kMaxs, kTouchEpsilon + 0.002f) == -1);
  }
  CHECK(hits > 100);
}

}  // namespace
}  // namespace collision
