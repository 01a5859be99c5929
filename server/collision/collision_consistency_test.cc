// Random sweeps against a random map of boxes, ramps and turned pillars: the box never ends in
// solid (checked by an independent separating-axis test), start_solid agrees with that test, and
// a sweep is consistent with its own sub-segments (the hit does not move when the sweep is cut).
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <string>

#include "server/collision/collision_test_util.h"
#include "maps/map_loader.h"
#include "server/collision/collision_world.h"

namespace collision {
namespace {

// Overlap depth beyond which the independent test calls a box "in solid"; just above the
// world's touching tolerance, to leave room for float rounding of end positions.
constexpr float kSolidDepth = kTouchEpsilon + 0.002f;

struct Counts {
  int hits = 0, start_solid = 0, subsegments = 0;
};

// `precision` (units): how far a sub-segment's stop may be from the full sweep's.
void CheckSweep(const maps::Map& map, const CollisionWorld& world, const testing::Query& q,
                float t, float precision, Counts* counts) {
  const Trace tr = world.TraceBox(q.start, q.end, q.mins, q.maxs);
  const bool starts_in = testing::FirstOverlap(map, q.start, q.mins, q.maxs, kSolidDepth) >= 0;
  const bool starts_clear = testing::FirstOverlap(map, q.start, q.mins, q.maxs, 0.0f) < 0;
  if (starts_in) CHECK(tr.start_solid);
  if (starts_clear) CHECK_FALSE(tr.start_solid);
  if (tr.start_solid) {
    ++counts->start_solid;
    return;
  }
  counts->hits += tr.hit() ? 1 : 0;
  INFO("start " << q.start.x << " " << q.start.y << " " << q.start.z << " end " << q.end.x
                << " " << q.end.y << " " << q.end.z << " hull " << q.maxs.x);
  CHECK(testing::FirstOverlap(map, tr.end, q.mins, q.maxs, kSolidDepth) == -1);
  CHECK(tr.fraction >= 0.0f);
  CHECK(tr.fraction <= 1.0f);
  if (tr.hit()) CHECK(std::fabs(Length(tr.normal) - 1.0f) < 1e-3f);

  // Sub-segment start..start+t*(end-start): no hit before the full sweep's stop, and a hit
  // after it lands on the same point.
  const float length = Length(q.end - q.start);
  if (length < 1e-3f) return;
  const Trace sub = world.TraceBox(q.start, q.start + (q.end - q.start) * t, q.mins, q.maxs);
  ++counts->subsegments;
  if (t * length < tr.fraction * length - 1e-3f) CHECK_FALSE(sub.hit());
  if (sub.hit()) {
    CHECK(tr.hit());
    CHECK(std::fabs(sub.fraction * t - tr.fraction) * length < precision);
  }
}

TEST_CASE("random sweeps never end in solid and agree with their sub-segments") {
  const Narrowphase phase = GENERATE(Narrowphase::kBrushPlanes, Narrowphase::kBulletHull);
  INFO("narrowphase " << static_cast<int>(phase));
  const maps::Map map = testing::RandomMap(7, 150);
  auto world = CollisionWorld::Build(map, {phase});
  const auto queries = testing::RandomQueries(map, 11, 3000);
  // GJK stops within its own tolerance of the surface; the plane clipper is exact.
  const float precision = phase == Narrowphase::kBrushPlanes ? 0.01f : 0.1f;
  Counts counts;
  for (size_t i = 0; i < queries.size(); ++i) {
    const float t = static_cast<float>((i * 7919) % 1000) / 1000.0f;
    CheckSweep(map, *world, queries[i], t, precision, &counts);
  }
  // The map and queries are dense enough that every case is exercised.
  CHECK(counts.hits > 150);
  CHECK(counts.start_solid > 50);
  CHECK(counts.subsegments > 2000);
}

TEST_CASE("sweeps that end where they hit then slide on never enter solid") {
  // A Quake-style slide: after each hit, clip the remaining motion along the hit plane.
  const maps::Map map = testing::RandomMap(21, 150);
  auto world = CollisionWorld::Build(map);
  const auto queries = testing::RandomQueries(map, 5, 1500);
  int slides = 0;
  for (const testing::Query& q : queries) {
    if (testing::FirstOverlap(map, q.start, q.mins, q.maxs, 0.0f) >= 0) continue;
    Vec3 pos = q.start, move = (q.end - q.start) * 3.0f;
    for (int bump = 0; bump < 4 && Length(move) > 1e-3f; ++bump) {
      const Trace tr = world->TraceBox(pos, pos + move, q.mins, q.maxs);
      REQUIRE_FALSE(tr.start_solid);
      pos = tr.end;
      if (!tr.hit()) break;
      ++slides;
      move = move * (1.0f - tr.fraction);
      move -= tr.normal * Dot(move, tr.normal);
    }
    INFO("pos " << pos.x << " " << pos.y << " " << pos.z);
    CHECK(testing::FirstOverlap(map, pos, q.mins, q.maxs, kSolidDepth) == -1);
  }
  CHECK(slides > 200);
}

}  // namespace
// A world that keeps the player's hull (Options::cache_hull, as the server and the replay build
// theirs) reads each plane's pushed dist from its table for that hull, and computes it for any
// other: its traces must be the general path's, bit for bit, for that hull, others and rays.
TEST_CASE("a world that keeps a hull's pushed planes traces as one that does not, bit for bit") {
  const std::string path = GENERATE(as<std::string>{}, "", "maps/dm_arena.map",
                                    "maps/metropolis.map", "maps/librequake/lqdm6.map");
  INFO("map " << (path.empty() ? "random" : path));
  maps::Map map;
  if (path.empty()) {
    map = testing::RandomMap(13, 150);
  } else {
    REQUIRE(maps::LoadMap(path, &map).ok());
  }
  Options kept;
  kept.cache_hull = true;
  kept.hull_mins = Vec3{-16, -16, -24};  // one of RandomQueries' hulls: the game's player
  kept.hull_maxs = Vec3{16, 16, 32};
  auto plain = CollisionWorld::Build(map);
  auto cached = CollisionWorld::Build(map, kept);
  int kept_hull = 0, hits = 0;
  for (const testing::Query& q : testing::RandomQueries(map, 19, 6000)) {
    const Trace a = plain->TraceBox(q.start, q.end, q.mins, q.maxs);
    const Trace b = cached->TraceBox(q.start, q.end, q.mins, q.maxs);
    INFO("start " << q.start.x << " " << q.start.y << " " << q.start.z << " end " << q.end.x
                  << " " << q.end.y << " " << q.end.z << " hull " << q.maxs.x);
    REQUIRE(std::memcmp(&a.fraction, &b.fraction, sizeof a.fraction) == 0);
    REQUIRE(std::memcmp(&a.end, &b.end, sizeof a.end) == 0);
    REQUIRE(std::memcmp(&a.normal, &b.normal, sizeof a.normal) == 0);
    REQUIRE(a.brush == b.brush);
    REQUIRE(a.start_solid == b.start_solid);
    REQUIRE(a.all_solid == b.all_solid);
    kept_hull += q.maxs == kept.hull_maxs && q.mins == kept.hull_mins ? 1 : 0;
    hits += a.hit() ? 1 : 0;
  }
  CHECK(kept_hull > 1000);
  CHECK(hits > 300);
}

}  // namespace collision
