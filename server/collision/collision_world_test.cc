// Sweeps, point contents and line of sight against small hand-built maps with known answers,
// for both narrow phases (exact brush planes and Bullet hulls).
#include "server/collision/collision_world.h"

#include <catch2/catch.hpp>
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "server/collision/brush_grid.h"
#include "server/collision/collision_test_util.h"

namespace collision {
namespace {

using testing::BoxBrush;
using testing::DiamondBrush;
using testing::MapOf;
using testing::WedgeBrush;

const Vec3 kPlayerMins{-16, -16, -24}, kPlayerMaxs{16, 16, 32};

bool Near(Vec3 a, Vec3 b, float eps) { return Length(a - b) <= eps; }

// A 1024x1024 floor (top at z=0) with a wall at x in [100,116] and a second wall at y in
// [100,116] forming a corner, a ramp at x in [-400,-144] rising to z=128, and a water pool.
maps::Map TestRoom() {
  return MapOf({BoxBrush({-512, -512, -64}, {512, 512, 0}),
                BoxBrush({100, -512, 0}, {116, 512, 200}),
                BoxBrush({-512, 100, 0}, {100, 116, 200}),
                WedgeBrush({-400, -300, 0}, {-144, -100, 128}),
                BoxBrush({-400, 200, 0}, {-200, 400, 64}, maps::Contents::kLiquid),
                BoxBrush({300, 300, 0}, {340, 340, 40}, maps::Contents::kTrigger)});
}

Narrowphase Phase() {
  return GENERATE(Narrowphase::kBrushPlanes, Narrowphase::kBulletHull);
}

TEST_CASE("falling onto a floor stops just above it with an up normal") {
  const Narrowphase phase = Phase();
  INFO("narrowphase " << static_cast<int>(phase));
  auto world = CollisionWorld::Build(TestRoom(), {phase});
  Trace t = world->TraceBox({0, 0, 100}, {0, 0, -100}, kPlayerMins, kPlayerMaxs);
  REQUIRE(t.hit());
  CHECK(t.brush == 0);
  CHECK(t.end.z == Approx(24 + kDistEpsilon).margin(0.01));
  CHECK(t.fraction == Approx((100 - 24 - kDistEpsilon) / 200.0f).margin(1e-4));
  CHECK(Near(t.normal, {0, 0, 1}, 1e-3f));
  CHECK_FALSE(t.start_solid);
  CHECK_FALSE(t.all_solid);
}

TEST_CASE("walking into a wall stops in front of it with a horizontal normal") {
  const Narrowphase phase = Phase();
  INFO("narrowphase " << static_cast<int>(phase));
  auto world = CollisionWorld::Build(TestRoom(), {phase});
  Trace t = world->TraceBox({0, 0, 40}, {200, 0, 40}, kPlayerMins, kPlayerMaxs);
  REQUIRE(t.hit());
  CHECK(t.brush == 1);
  CHECK(t.end.x == Approx(84 - kDistEpsilon).margin(0.01));
  CHECK(t.fraction == Approx((84 - kDistEpsilon) / 200.0f).margin(1e-4));
  CHECK(Near(t.normal, {-1, 0, 0}, 1e-3f));
}

TEST_CASE("landing on a ramp reports the ramp's normal") {
  const Narrowphase phase = Phase();
  INFO("narrowphase " << static_cast<int>(phase));
  auto world = CollisionWorld::Build(TestRoom(), {phase});
  const Vec3 slope = Normalize(Vec3{-128, 0, 256});
  Trace t = world->TraceBox({-250, -200, 300}, {-250, -200, 0}, kPlayerMins, kPlayerMaxs);
  REQUIRE(t.hit());
  CHECK(t.brush == 3);
  CHECK(Near(t.normal, slope, 1e-3f));
  // The lowest box corner on the ramp side is (x+16, z-24); ramp height there is (x+16+400)/2.
  const float contact_z = (-250 + 16 + 400) / 2.0f + 24;
  CHECK(t.end.z > contact_z);
  CHECK(t.end.z < contact_z + 0.1f);
}

TEST_CASE("running into a corner stops before both walls") {
  const Narrowphase phase = Phase();
  INFO("narrowphase " << static_cast<int>(phase));
  auto world = CollisionWorld::Build(TestRoom(), {phase});
  Trace t = world->TraceBox({0, 0, 40}, {150, 150, 40}, kPlayerMins, kPlayerMaxs);
  REQUIRE(t.hit());
  CHECK(t.end.x <= 84.0f);
  CHECK(t.end.y <= 84.0f);
  CHECK(t.end.x == Approx(84 - kDistEpsilon).margin(0.05));
  const bool wall_normal = Near(t.normal, {-1, 0, 0}, 1e-3f) || Near(t.normal, {0, -1, 0}, 1e-3f);
  CHECK(wall_normal);
  // Sliding along the x wall from there, into the y wall.
  Trace slide = world->TraceBox(t.end, t.end + Vec3{0, 100, 0}, kPlayerMins, kPlayerMaxs);
  REQUIRE(slide.hit());
  CHECK(Near(slide.normal, {0, -1, 0}, 1e-3f));
  CHECK(slide.end.y == Approx(84 - kDistEpsilon).margin(0.01));
  CHECK(slide.end.x == t.end.x);
}

TEST_CASE("a box inside a brush is start_solid, and all_solid if it cannot get out") {
  const Narrowphase phase = Phase();
  INFO("narrowphase " << static_cast<int>(phase));
  auto world = CollisionWorld::Build(TestRoom(), {phase});
  Trace stuck = world->TraceBox({0, 0, -30}, {10, 0, -30}, {-2, -2, -2}, {2, 2, 2});
  CHECK(stuck.start_solid);
  CHECK(stuck.all_solid);
  CHECK(stuck.fraction == 0.0f);
  CHECK(stuck.brush == 0);
  CHECK(stuck.end == Vec3{0, 0, -30});
  Trace out = world->TraceBox({0, 0, 10}, {0, 0, 100}, kPlayerMins, kPlayerMaxs);
  CHECK(out.start_solid);
  CHECK_FALSE(out.all_solid);
  CHECK(out.fraction == 1.0f);
}

TEST_CASE("a box touching a floor may slide along it and move away, but not go in") {
  const Narrowphase phase = Phase();
  INFO("narrowphase " << static_cast<int>(phase));
  auto world = CollisionWorld::Build(TestRoom(), {phase});
  for (float z : {24.0f, 24.0f + kDistEpsilon, 24.0f - 0.5f * kTouchEpsilon}) {
    CAPTURE(z);
    const Vec3 at{0, 0, z};
    Trace up = world->TraceBox(at, at + Vec3{0, 0, 50}, kPlayerMins, kPlayerMaxs);
    CHECK_FALSE(up.hit());
    CHECK_FALSE(up.start_solid);
    Trace slide = world->TraceBox(at, at + Vec3{40, -30, 0}, kPlayerMins, kPlayerMaxs);
    CHECK_FALSE(slide.hit());
    CHECK_FALSE(slide.start_solid);
    Trace away = world->TraceBox(at, at + Vec3{-20, 0, 5}, kPlayerMins, kPlayerMaxs);
    CHECK_FALSE(away.hit());
    Trace down = world->TraceBox(at, at + Vec3{10, 0, -5}, kPlayerMins, kPlayerMaxs);
    REQUIRE(down.hit());
    CHECK(down.fraction == 0.0f);
    CHECK(Near(down.normal, {0, 0, 1}, 1e-3f));
    CHECK_FALSE(down.start_solid);
  }
  // Touching the wall: moving along it is free.
  Trace along = world->TraceBox({84, 0, 40}, {84, -200, 40}, kPlayerMins, kPlayerMaxs);
  CHECK_FALSE(along.hit());
}

TEST_CASE("a zero-size box is a ray") {
  const Narrowphase phase = Phase();
  INFO("narrowphase " << static_cast<int>(phase));
  auto world = CollisionWorld::Build(MapOf({BoxBrush({-10, -10, 40}, {10, 10, 60})}), {phase});
  Trace t = world->TraceBox({-100, 0, 50}, {100, 0, 50}, {}, {});
  REQUIRE(t.hit());
  CHECK(t.end.x == Approx(-10 - kDistEpsilon).margin(0.01));
  CHECK(Near(t.normal, {-1, 0, 0}, 1e-3f));
  Trace miss = world->TraceBox({-100, 0, 61}, {100, 0, 61}, {}, {});
  CHECK_FALSE(miss.hit());
  if (phase == Narrowphase::kBrushPlanes) {  // GJK's tolerance counts an exact graze as a hit
    Trace graze = world->TraceBox({-100, 10, 50}, {100, 10, 50}, {}, {});
    CHECK_FALSE(graze.hit());
  }
}

TEST_CASE("bevel planes: a box passing a diamond pillar's corner is not stopped early") {
  const Narrowphase phase = Phase();
  INFO("narrowphase " << static_cast<int>(phase));
  // |x| + |y| <= 32: the box (half 16) reaches it only while |y| < 48 near x = 0.
  auto world = CollisionWorld::Build(MapOf({DiamondBrush(0, 0, 32, 0, 100)}), {phase});
  const Vec3 mins{-16, -16, -16}, maxs{16, 16, 16};
  Trace pass = world->TraceBox({-200, 49, 50}, {200, 49, 50}, mins, maxs);
  CHECK_FALSE(pass.hit());
  // At y = 47 the box's corner meets the pillar's slanted face x - y >= -32.
  Trace hit = world->TraceBox({-200, 47, 50}, {200, 47, 50}, mins, maxs);
  REQUIRE(hit.hit());
  CHECK(hit.end.x == Approx(-17 - kDistEpsilon * std::sqrt(2.0f)).margin(0.02));
  CHECK(Near(hit.normal, Normalize(Vec3{-1, 1, 0}), 1e-3f));
  // At y = 0 the box's face meets the pillar's corner: the axial bevel plane is hit.
  Trace face = world->TraceBox({-200, 0, 50}, {200, 0, 50}, mins, maxs);
  REQUIRE(face.hit());
  CHECK(Near(face.normal, {-1, 0, 0}, 1e-3f));
  CHECK(face.end.x == Approx(-48 - kDistEpsilon).margin(0.02));
}

TEST_CASE("point contents are solid, liquid or empty, and triggers do not count") {
  auto world = CollisionWorld::Build(TestRoom());
  CHECK(world->PointContents({0, 0, -10}) == maps::Contents::kSolid);
  CHECK(world->PointContents({0, 0, 0}) == maps::Contents::kSolid);  // on the surface
  CHECK(world->PointContents({0, 0, 10}) == maps::Contents::kEmpty);
  CHECK(world->PointContents({-300, 300, 10}) == maps::Contents::kLiquid);
  CHECK(world->PointContents({320, 320, 20}) == maps::Contents::kEmpty);
  CHECK(world->PointContents({-150, -200, 120}) == maps::Contents::kSolid);  // under the ramp top
  CHECK(world->PointContents({-390, -200, 120}) == maps::Contents::kEmpty);  // above the ramp
  CHECK(world->PointContents({5000, 0, 0}) == maps::Contents::kEmpty);
  CHECK(world->NumSolidBrushes() == 4);
}

TEST_CASE("line of sight is blocked by walls and clear over them") {
  auto world = CollisionWorld::Build(TestRoom());
  CHECK_FALSE(world->LineOfSight({0, 0, 50}, {300, 0, 50}));
  CHECK(world->LineOfSight({0, 0, 50}, {300, 0, 250}) == false);
  CHECK(world->LineOfSight({0, 0, 250}, {300, 0, 250}));
  CHECK(world->LineOfSight({0, 0, 50}, {50, -50, 60}));
  CHECK_FALSE(world->LineOfSight({0, 0, -10}, {0, 0, 50}));  // starts inside the floor
  CHECK(world->LineOfSight({320, 320, 20}, {330, 330, 30}));  // trigger volumes do not block
}

TEST_CASE("bad input never crashes") {
  auto world = CollisionWorld::Build(TestRoom());
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Trace t = world->TraceBox({0, 0, nan}, {0, 0, 0}, kPlayerMins, kPlayerMaxs);
  CHECK(t.all_solid);
  CHECK(t.fraction == 0.0f);
  CHECK(world->PointContents({nan, 0, 0}) == maps::Contents::kSolid);
  CHECK_FALSE(world->LineOfSight({0, 0, 50}, {nan, 0, 50}));
  // Far outside the map: nothing to hit.
  Trace far = world->TraceBox({1e6f, 1e6f, 0}, {1e6f, -1e6f, 0}, kPlayerMins, kPlayerMaxs);
  CHECK_FALSE(far.hit());
  auto empty = CollisionWorld::Build(maps::Map{});
  CHECK_FALSE(empty->TraceBox({0, 0, 0}, {0, 0, -100}, kPlayerMins, kPlayerMaxs).hit());
  CHECK(empty->PointContents({0, 0, 0}) == maps::Contents::kEmpty);
  CHECK(empty->WorldBounds().IsEmpty());
}

// The box of a brush's vertices, which the world lists each brush by; `none` if the world leaves
// the brush out (not solid, or without volume).
bool SolidBounds(const maps::Brush& b, Bounds* out) {
  if (b.contents != maps::Contents::kSolid || b.planes.size() < 4 || b.vertices.size() < 4) {
    return false;
  }
  *out = Bounds::Empty();
  for (Vec3 v : b.vertices) out->Add(v);
  return true;
}

// Checked by brute force over the map's brushes, not through the world's grid.
TEST_CASE("a clear box holds the box asked around, within the growth, and meets no solid brush") {
  for (const uint32_t seed : {7u, 8u}) {
    const maps::Map map = seed == 7 ? TestRoom() : testing::RandomMap(seed, 300);
    INFO("map " << seed);
    auto world = CollisionWorld::Build(map);
    std::vector<Bounds> solid;
    for (const maps::Brush& b : map.brushes) {
      Bounds box;
      if (SolidBounds(b, &box)) solid.push_back(box);
    }
    int made = 0, refused = 0, grown_all_round = 0;
    const float grows[] = {0, 16, 48, 300};
    const std::vector<testing::Query> queries = testing::RandomQueries(map, seed, 3000);
    for (size_t i = 0; i < queries.size(); ++i) {
      const testing::Query& q = queries[i];
      const Bounds inner = SweptBox(q.start, q.end, q.mins, q.maxs);
      const float g = grows[i % 4];
      const Vec3 grow{g, g, g};
      bool meets = false;
      for (const Bounds& b : solid) meets = meets || b.Intersects(inner);
      Bounds clear{{1, 2, 3}, {4, 5, 6}};
      const Bounds untouched = clear;
      const bool ok = world->ClearBoxAround(inner, grow, &clear);
      INFO("query " << i);
      REQUIRE(ok == !meets);
      if (!ok) {
        CHECK(clear == untouched);
        ++refused;
        continue;
      }
      ++made;
      CHECK(clear.Contains(inner));
      CHECK(inner.Expanded(grow).Contains(clear));
      if (clear == inner.Expanded(grow)) ++grown_all_round;
      for (const Bounds& b : solid) REQUIRE_FALSE(b.Intersects(clear));
      // The sweep it was made around traces clear, and so does the sweep across the clear box
      // from corner to corner (kept 1/100 unit inside it, against rounding).
      const Trace t = world->TraceBox(q.start, q.end, q.mins, q.maxs);
      CHECK(t.fraction == 1.0f);
      CHECK_FALSE(t.start_solid);
      Vec3 lo, hi;
      for (int a = 0; a < 3; ++a) {
        const float room = (clear.maxs[a] - clear.mins[a]) - (q.maxs[a] - q.mins[a]);
        const float m = std::min(0.01f, room * 0.25f);
        lo[a] = clear.mins[a] - q.mins[a] + m;
        hi[a] = clear.maxs[a] - q.maxs[a] - m;
      }
      const Trace across = world->TraceBox(lo, hi, q.mins, q.maxs);
      CHECK(across.fraction == 1.0f);
      CHECK_FALSE(across.start_solid);
    }
    CHECK(made > 300);  // both answers are exercised
    CHECK(refused > 300);
    CHECK(grown_all_round > 10);  // far from every brush, nothing is cut
  }
}

TEST_CASE("a clear box is refused for a non-finite box") {
  auto world = CollisionWorld::Build(TestRoom());
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  Bounds out{{1, 2, 3}, {4, 5, 6}};
  CHECK_FALSE(world->ClearBoxAround(Bounds{{0, 0, nan}, {1, 1, 1}}, {8, 8, 8}, &out));
  CHECK_FALSE(world->ClearBoxAround(Bounds{{0, 0, 0}, {inf, 1, 1}}, {8, 8, 8}, &out));
  CHECK(out == Bounds{{1, 2, 3}, {4, 5, 6}});
  // Standing on the floor (its top at z = 0, the box 1/32 above it) is clear, and the box stops
  // just above the floor; a box touching the floor is not clear.
  CHECK(world->ClearBoxAround(Bounds::At({0, 0, 24 + kDistEpsilon}, kPlayerMins, kPlayerMaxs),
                              {48, 48, 48}, &out));
  CHECK(out.mins.z > 0);
  CHECK(out.mins.z <= kDistEpsilon);
  CHECK_FALSE(world->ClearBoxAround(Bounds::At({0, 0, 24}, kPlayerMins, kPlayerMaxs),
                                    {48, 48, 48}, &out));
}

}  // namespace
}  // namespace collision

namespace collision {
namespace {

// Each brush counts once per grid cell it overlaps. 262,144 brushes spanning a 16384-unit map
// cover 2^32 cells of its 128 x 128 grid: the count wrapped the grid's 32-bit offsets, and the
// server crashed (signal 11) building it. The count is 64-bit, and CheckMap refuses such a map
// before anything is built.
TEST_CASE("a map whose brushes each span the map is refused before its grid is built") {
  const core::Bounds span{{-8192, -8192, -64}, {8192, 8192, -32}};
  const std::vector<core::Bounds> spans(262144, span);
  CHECK(BrushGrid::CountEntries(spans) == (uint64_t{1} << 32));

  std::vector<maps::Brush> brushes;
  for (int i = 0; i < 300; ++i) brushes.push_back(BoxBrush({-8192, -8192, -64}, {8192, 8192, -32}));
  const maps::Map wide = MapOf(brushes);
  CHECK(CollisionWorld::GridEntries(wide) == 300u * 128 * 128);
  const core::Status s = CollisionWorld::CheckMap(wide);
  CHECK(s.code() == core::Status::Code::kInvalidArgument);
  CHECK_THAT(s.ToString(), Catch::Contains("too complex for the collision grid"));
  // The rooms of the other tests are far below the bound.
  CHECK(CollisionWorld::CheckMap(TestRoom()).ok());
}

}  // namespace
}  // namespace collision
