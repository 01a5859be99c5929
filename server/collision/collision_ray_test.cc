// Rays (zero-size sweeps) walk the grid cell by cell and stop after their nearest hit. This checks
// that the walk finds exactly what clipping every brush of the map finds: the same fraction,
// start_solid and all_solid, for map-long shots (the game's hitscan pellets), short rays, rays
// along the axes, through cell corners and from inside brushes, on a random map, on every map
// we ship and on near-spheres; and that LineOfSight is clear exactly when that clip is.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "maps/map_loader.h"
#include "server/collision/brush_clip.h"
#include "server/collision/brush_planes.h"
#include "server/collision/collision_test_util.h"
#include "server/collision/collision_world.h"

namespace collision {
namespace {

// Every solid brush's clip planes and bounds, clipped one after another: no broadphase at all.
class Exhaustive {
 public:
  explicit Exhaustive(const maps::Map& map) {
    for (size_t i = 0; i < map.brushes.size(); ++i) {
      const maps::Brush& b = map.brushes[i];
      if (b.contents != maps::Contents::kSolid || b.planes.size() < 4 || b.vertices.size() < 4) {
        continue;
      }
      Entry e;
      e.index = static_cast<int>(i);
      AppendClipPlanes(b, &e.planes);
      e.bounds = Bounds::Empty();
      for (Vec3 v : b.vertices) e.bounds.Add(v);
      entries_.push_back(std::move(e));
    }
  }

  Trace Ray(Vec3 start, Vec3 end) const {
    Trace trace;
    const Sweep sweep{start, end, Vec3{}, Vec3{}};
    Bounds swept{start, start};
    swept.Add(end);
    for (const Entry& e : entries_) {
      if (!e.bounds.Intersects(swept)) continue;
      ClipSweepToBrush(sweep, e.planes.data(), static_cast<int>(e.planes.size()), e.index,
                       &trace);
    }
    return trace;
  }

  // The fraction the brush `index` alone gives the ray.
  float Alone(int index, Vec3 start, Vec3 end) const {
    for (const Entry& e : entries_) {
      if (e.index != index) continue;
      Trace trace;
      ClipSweepToBrush({start, end, Vec3{}, Vec3{}}, e.planes.data(),
                       static_cast<int>(e.planes.size()), e.index, &trace);
      return trace.fraction;
    }
    return -1;
  }

 private:
  struct Entry {
    int index = 0;
    std::vector<maps::Plane> planes;
    Bounds bounds;
  };
  std::vector<Entry> entries_;
};

struct Tally {
  int rays = 0, hits = 0, start_solid = 0;
};

void CheckRay(const CollisionWorld& world, const Exhaustive& all, Vec3 start, Vec3 end,
              Tally* tally) {
  const Trace walk = world.TraceBox(start, end, Vec3{}, Vec3{});
  const Trace want = all.Ray(start, end);
  INFO("ray " << start.x << " " << start.y << " " << start.z << " -> " << end.x << " " << end.y
              << " " << end.z);
  ++tally->rays;
  tally->hits += want.hit() ? 1 : 0;
  tally->start_solid += want.start_solid ? 1 : 0;
  REQUIRE(walk.fraction == want.fraction);
  REQUIRE(walk.start_solid == want.start_solid);
  REQUIRE(walk.all_solid == want.all_solid);
  // Line of sight: clear exactly when no brush is hit or started in (its outline stages too).
  REQUIRE(world.LineOfSight(start, end) == (!want.hit() && !want.start_solid));
  if (walk.hit() && !walk.all_solid) {
    // Where two brushes are entered at the same fraction either may be named; the one named
    // must give that fraction.
    REQUIRE(all.Alone(walk.brush, start, end) == walk.fraction);
  }
}

// Random rays over `map`: from random points (some inside brushes) in random directions, as
// long as the map's diagonal (a pellet's flight) or short; some along an axis, some vertical,
// some at exactly 45 degrees (through the cells' corners when they start on one).
Tally CheckRandomRays(const maps::Map& map, uint32_t seed, int count) {
  auto world = CollisionWorld::Build(map);
  const Exhaustive all(map);
  const Bounds b = world->WorldBounds();
  const float diagonal = Length(b.Size());
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> ux(b.mins.x, b.maxs.x), uy(b.mins.y, b.maxs.y),
      uz(b.mins.z, b.maxs.z), angle(0, 6.2831853f), pitch(-0.6f, 0.6f), unit(0, 1);
  Tally tally;
  for (int i = 0; i < count; ++i) {
    Vec3 start{ux(rng), uy(rng), uz(rng)};
    Vec3 dir;
    switch (i % 6) {
      case 0:  // along an axis
        dir = Vec3{(i / 6) % 2 ? 1.0f : -1.0f, 0, 0};
        if ((i / 12) % 2) dir = Vec3{0, dir.x, 0};
        break;
      case 1:  // straight down or up
        dir = Vec3{0, 0, (i / 6) % 2 ? -1.0f : 1.0f};
        break;
      case 2:  // 45 degrees from a point on a 64-unit lattice (cell corners on small maps)
        start.x = std::round(start.x / 64) * 64;
        start.y = std::round(start.y / 64) * 64;
        dir = Normalize(Vec3{(i / 6) % 2 ? 1.0f : -1.0f, 1.0f, 0});
        break;
      default: {
        const float a = angle(rng), p = pitch(rng);
        dir = Vec3{std::cos(a) * std::cos(p), std::sin(a) * std::cos(p), std::sin(p)};
      }
    }
    const float length = i % 5 == 4 ? 8 + unit(rng) * 200 : diagonal;
    CheckRay(*world, all, start, start + dir * length, &tally);
  }
  return tally;
}

TEST_CASE("rays find what clipping every brush finds: a random map") {
  const Tally t = CheckRandomRays(testing::RandomMap(3, 200), 17, 4000);
  CHECK(t.hits > 1000);       // most long rays hit something
  CHECK(t.start_solid > 50);  // and some start inside a brush
}

TEST_CASE("rays find what clipping every brush finds: the maps we ship") {
  const std::string path = GENERATE(from_range(testing::ShippedMaps()));
  INFO(path);
  maps::Map map;
  REQUIRE(maps::LoadMap(path, &map).ok());
  const Tally t = CheckRandomRays(map, 29, 1500);
  CHECK(t.hits > 500);
}

// Brushes of 256 and 64 faces, whose rays LineOfSight first clips against the brush's outline.
TEST_CASE("rays find what clipping every brush finds: near-spheres") {
  for (int faces : {256, 64}) {
    INFO(faces << " faces");
    std::vector<Vec3> centres;
    for (int x = 0; x < 4; ++x) {
      for (int y = 0; y < 3; ++y) centres.push_back(Vec3{x * 640.0f, y * 640.0f, 512});
    }
    maps::Map map;
    REQUIRE(maps::ParseMap(testing::NearSpheresMapText(faces, centres), "spheres", &map).ok());
    REQUIRE(map.brushes.size() == centres.size());
    const Tally t = CheckRandomRays(map, 31, 1500);
    CHECK(t.hits > 300);
    CHECK(t.rays - t.hits - t.start_solid > 150);  // and many pass them
  }
}

// Rays aimed past near-spheres' centres at every distance from 0 to past their radius: the deep
// ones LineOfSight settles by the brush's inner ball, those near the surface (inside the ball's
// margin, between the faces' tangent points and corners, and just outside) by the clip. Each
// answer must be the exhaustive clip's.
TEST_CASE("rays at every distance from near-spheres' centres find what clipping every brush "
          "finds") {
  for (int faces : {256, 64}) {
    INFO(faces << " faces");
    const std::vector<Vec3> centres = {Vec3{0, 0, 512}, Vec3{1536, 384, 512},
                                       Vec3{-900, 2000, -300}};
    maps::Map map;
    REQUIRE(maps::ParseMap(testing::NearSpheresMapText(faces, centres), "spheres", &map).ok());
    auto world = CollisionWorld::Build(map);
    const Exhaustive all(map);
    std::mt19937 rng(43);
    std::uniform_real_distribution<float> angle(0, 6.2831853f), pitch(-1.5f, 1.5f), unit(0, 1);
    auto random_dir = [&] {
      const float a = angle(rng), p = pitch(rng);
      return Vec3{std::cos(a) * std::cos(p), std::sin(a) * std::cos(p), std::sin(p)};
    };
    Tally tally;
    for (const Vec3& c : centres) {
      for (int i = 0; i < 1200; ++i) {
        const Vec3 dir = random_dir();
        Vec3 side = Cross(dir, random_dir());
        if (Length(side) < 1e-3f) continue;
        side = Normalize(side);
        // Offsets from the centre: anywhere to 1.1 radii, and a tenth of them packed within a
        // few units of the faces (256 x the cosine of half a face's angle, up to 256).
        const float offset = i % 10 == 0 ? 240 + unit(rng) * 20 : unit(rng) * 282;
        const Vec3 mid = c + side * offset;
        const float before = i % 7 == 0 ? unit(rng) * 100 : 300 + unit(rng) * 400;
        const float after = i % 5 == 0 ? unit(rng) * 100 : 300 + unit(rng) * 400;
        CheckRay(*world, all, mid - dir * before, mid + dir * after, &tally);
      }
    }
    CHECK(tally.hits > 1000);
    CHECK(tally.start_solid > 100);  // rays that start inside
    CHECK(tally.rays - tally.hits - tally.start_solid > 100);  // and rays that pass
  }
}

TEST_CASE("a ray that starts outside the map's brushes and misses them all runs its length") {
  auto world = CollisionWorld::Build(testing::MapOf({testing::BoxBrush({0, 0, 0}, {64, 64, 64})}));
  const Trace over = world->TraceBox({-500, 32, 200}, {500, 32, 200}, Vec3{}, Vec3{});
  CHECK_FALSE(over.hit());
  CHECK(over.end == Vec3{500, 32, 200});
  const Trace through = world->TraceBox({-500, 32, 32}, {500, 32, 32}, Vec3{}, Vec3{});
  CHECK(through.hit());
  CHECK(through.normal == Vec3{-1, 0, 0});
  CHECK(std::fabs(through.end.x - (0 - kDistEpsilon)) < 1e-3f);
}


// BoundRays on the maps we ship, from player-sized boxes standing on floors and aimed at random
// (pitch within +-30 degrees) with a shotgun-like cone: whenever it finds a blocking face, rays
// from random points of the box along random directions of the cone end inside the box it
// returned. It must find one often (the shots that face a wall) but not always.
TEST_CASE("BoundRays: every ray of the cone from the box ends inside the bound") {
  const std::string path =
      GENERATE(as<std::string>{}, "maps/dm_arena.map", "maps/metropolis.map",
               "maps/librequake/lqdm6.map", "maps/librequake/lqdm1.map");
  INFO(path);
  maps::Map map;
  REQUIRE(maps::LoadMap(path, &map).ok());
  auto world = CollisionWorld::Build(map);
  const float range = Length(world->WorldBounds().Size());
  std::mt19937 rng(41);
  std::uniform_real_distribution<float> yaw(0, 6.2831853f), pitch(-0.52f, 0.52f), unit(0, 1),
      reach(8, 80);
  int bounded = 0, unbounded = 0, rays = 0;
  const int per_spawn = std::max<int>(4, 400 / static_cast<int>(map.spawns.size()));
  for (const maps::SpawnPoint& spawn : map.spawns) {
    for (int k = 0; k < per_spawn; ++k) {
      // The box of every eye a player here could have after a command's move.
      const Bounds starts = Bounds::At(spawn.origin, {0, 0, 22}, {0, 0, 22}).Expanded(reach(rng));
      const float y = yaw(rng), p = pitch(rng);
      const Vec3 forward{std::cos(y) * std::cos(p), std::sin(y) * std::cos(p), std::sin(p)};
      const Vec3 right = Normalize(Vec3{std::sin(y), -std::cos(y), 0});
      const Vec3 up = Vec3{right.y * forward.z - right.z * forward.y,
                           right.z * forward.x - right.x * forward.z,
                           right.x * forward.y - right.y * forward.x};
      constexpr float kSpread = 0.04f;
      Vec3 corners[4];
      int n = 0;
      for (float a : {-kSpread, kSpread}) {
        for (float b : {-kSpread, kSpread}) corners[n++] = (forward + right * a + up * b) * range;
      }
      Bounds bound;
      if (!world->BoundRays(starts, forward * range, corners, &bound)) {
        ++unbounded;
        continue;
      }
      ++bounded;
      CHECK(bound.Contains(starts));
      for (int s = 0; s < 32; ++s) {
        const Vec3 e{starts.mins.x + unit(rng) * (starts.maxs.x - starts.mins.x),
                     starts.mins.y + unit(rng) * (starts.maxs.y - starts.mins.y),
                     starts.mins.z + unit(rng) * (starts.maxs.z - starts.mins.z)};
        const Vec3 d = (forward + right * ((2 * unit(rng) - 1) * kSpread) +
                        up * ((2 * unit(rng) - 1) * kSpread)) * range;
        const Trace t = world->TraceBox(e, e + d, Vec3{}, Vec3{});
        ++rays;
        INFO("from " << e.x << " " << e.y << " " << e.z << " along " << d.x << " " << d.y << " "
                     << d.z);
        REQUIRE(bound.Contains(Bounds{t.end, t.end}));
      }
    }
  }
  INFO("bounded " << bounded << " unbounded " << unbounded);
  CHECK(bounded >= 20);
  CHECK(unbounded >= 20);
  CHECK(rays > 600);
}

}  // namespace
}  // namespace collision
