// Random sweeps against a random map of boxes, ramps and turned pillars: the box never ends in
// solid (checked by an independent separating-axis test), start_solid agrees with that test, and
// a sweep is consistent with its own sub-segments (the hit does not move when the sweep is cut).
#include <catch2/catch.hpp>
#include <cmath>

#include "server/collision/collision_test_util.h"
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
}  // namespace collision
