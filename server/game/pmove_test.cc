// Movement tests on exact box-brush maps: walls stop, stairs step up, jumps reach v^2/2g,
// falls land, friction stops, long commands respect the speed limit.
#include <catch2/catch.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <utility>
#include <vector>

#include "server/game/game_constants.h"
#include "server/game/game_test_util.h"
#include "server/game/move_clip.h"
#include "server/game/pmove.h"

namespace game {
namespace {

using testing::CmdSpec;
using testing::RunCmds;

constexpr float kStandZ = 24;  // origin height of a player standing on z = 0

testing::TestWorld FlatWorld(testing::TestMap map) {
  map.Floor(2048).Spawn({-1500, -1500, kStandZ}).Spawn({1500, 1500, kStandZ});
  return testing::MakeWorld(map.Finish());
}

TEST_CASE("walking into a wall stops at the wall") {
  auto t = FlatWorld(std::move(testing::TestMap().Box({200, -512, 0}, {232, 512, 256})));
  EntityId p = testing::JoinOrDie(t.world.get(), "walker");
  testing::Place(t.world.get(), p, {0, 0, kStandZ});
  RunCmds(t.world.get(), p, 60, CmdSpec{.forward = 400});  // 2 s at up to 320 u/s
  const Edict& e = t.world->Get(p);
  CHECK(e.origin.x <= 200 - 16);
  CHECK(e.origin.x > 200 - 16 - 1);
  CHECK(e.origin.y == Approx(0).margin(0.01));
  CHECK(e.velocity.x == Approx(0).margin(0.01));
  CHECK((e.flags & kFlagOnGround));
}

TEST_CASE("walking diagonally into a wall slides along it") {
  auto t = FlatWorld(std::move(testing::TestMap().Box({200, -1024, 0}, {232, 1024, 256})));
  EntityId p = testing::JoinOrDie(t.world.get(), "slider");
  testing::Place(t.world.get(), p, {0, 0, kStandZ});
  RunCmds(t.world.get(), p, 60, CmdSpec{.yaw = 45, .forward = 400});
  const Edict& e = t.world->Get(p);
  CHECK(e.origin.x <= 200 - 16);
  CHECK(e.origin.y > 250);  // kept moving along the wall
}

TEST_CASE("walking up stairs of 16 units steps up, a 24 unit ledge blocks") {
  testing::TestMap m;
  for (int i = 0; i < 4; ++i) {  // steps 16 high, 32 deep, starting at x = 100
    m.Box({100.0f + 32 * i, -256, 0}, {1000, 256, 16.0f * (i + 1)});
  }
  m.Box({-600, -256, 0}, {-500, 256, 24});  // a ledge 24 high on the other side
  auto t = FlatWorld(std::move(m));
  EntityId p = testing::JoinOrDie(t.world.get(), "climber");
  testing::Place(t.world.get(), p, {0, 0, kStandZ});
  RunCmds(t.world.get(), p, 45, CmdSpec{.forward = 400});
  const Edict& up = t.world->Get(p);
  CHECK(up.origin.x > 300);
  CHECK(up.origin.z == Approx(64 + kStandZ).margin(0.1));
  CHECK((up.flags & kFlagOnGround));

  EntityId q = testing::JoinOrDie(t.world.get(), "blocked");
  testing::Place(t.world.get(), q, {-300, 0, kStandZ}, 180);
  RunCmds(t.world.get(), q, 45, CmdSpec{.yaw = 180, .forward = 400});
  const Edict& b = t.world->Get(q);
  CHECK(b.origin.x >= -500 + 16);
  CHECK(b.origin.x < -500 + 17);
  CHECK(b.origin.z == Approx(kStandZ).margin(0.1));
}

TEST_CASE("a jump reaches v^2/2g and lands") {
  auto t = FlatWorld(testing::TestMap());
  EntityId p = testing::JoinOrDie(t.world.get(), "jumper");
  testing::Place(t.world.get(), p, {0, 0, kStandZ});
  RunCmds(t.world.get(), p, 5, CmdSpec{.duration_ms = 10});  // settle on the ground
  REQUIRE((t.world->Get(p).flags & kFlagOnGround));
  RunCmds(t.world.get(), p, 1, CmdSpec{.buttons = kButtonJump, .duration_ms = 5});
  float apex = 0;
  for (int i = 0; i < 400; ++i) {
    RunCmds(t.world.get(), p, 1, CmdSpec{.buttons = kButtonJump, .duration_ms = 5});
    apex = std::max(apex, t.world->Get(p).origin.z - kStandZ);
  }
  const float expected = kJumpSpeed * kJumpSpeed / (2 * kGravity);  // 45.6
  CHECK(apex == Approx(expected).margin(1.5));
  const Edict& e = t.world->Get(p);
  CHECK(e.origin.z == Approx(kStandZ).margin(0.1));
  CHECK((e.flags & kFlagOnGround));  // holding jump does not re-jump (no pogo)
}

TEST_CASE("a falling player lands on the floor") {
  auto t = FlatWorld(testing::TestMap());
  EntityId p = testing::JoinOrDie(t.world.get(), "faller");
  testing::Place(t.world.get(), p, {0, 0, 500});
  RunCmds(t.world.get(), p, 20, CmdSpec{});
  CHECK(t.world->Get(p).origin.z < 500 - 100);  // falling
  RunCmds(t.world.get(), p, 40, CmdSpec{});
  const Edict& e = t.world->Get(p);
  CHECK(e.origin.z == Approx(kStandZ).margin(0.1));
  CHECK(e.velocity.z == 0);
  CHECK((e.flags & kFlagOnGround));
}

TEST_CASE("running reaches max speed and friction stops the player") {
  auto t = FlatWorld(testing::TestMap());
  EntityId p = testing::JoinOrDie(t.world.get(), "runner");
  testing::Place(t.world.get(), p, {-1000, 0, kStandZ});
  RunCmds(t.world.get(), p, 40, CmdSpec{.forward = 400});
  const float speed = Length(t.world->Get(p).velocity);
  CHECK(speed == Approx(kMaxSpeed).margin(0.5));
  const float x0 = t.world->Get(p).origin.x;
  RunCmds(t.world.get(), p, 40, CmdSpec{});
  const Edict& e = t.world->Get(p);
  CHECK(Length(e.velocity) == 0);
  // The friction law (speed -= max(speed, stopspeed) * friction * dt), integrated per command.
  float v = speed, expected = 0;
  for (int i = 0; i < 40; ++i) {
    v = std::max(0.0f, v - std::max(v, kStopSpeed) * kFriction * 0.033f);
    expected += v * 0.033f;
  }
  CHECK(e.origin.x - x0 == Approx(expected).margin(0.5));
}

TEST_CASE("a 250 ms command moves no further than max speed allows") {
  auto t = FlatWorld(testing::TestMap());
  EntityId p = testing::JoinOrDie(t.world.get(), "long");
  testing::Place(t.world.get(), p, {0, 0, kStandZ});
  RunCmds(t.world.get(), p, 2, CmdSpec{.duration_ms = 10});
  for (int i = 0; i < 8; ++i) {  // straight ahead: never faster than kMaxSpeed
    const Vec3 before = t.world->Get(p).origin;
    RunCmds(t.world.get(), p, 1, CmdSpec{.forward = 400, .side = 400, .duration_ms = kMaxCmdMs});
    const Vec3 d = t.world->Get(p).origin - before;
    CHECK(Length(Vec3{d.x, d.y, 0}) <= kMaxSpeed * kMaxCmdMs / 1000.0f + 0.01f);
    CHECK(Length(t.world->Get(p).velocity) <= kMaxSpeed + 0.01f);
  }
  for (int i = 0; i < 8; ++i) {  // turning (Quake lets speed exceed the cap a little): the
    UserCmd cmd;                 // player stays inside the declared move box
    cmd.sequence = t.world->Get(p).last_cmd_sequence + 1;
    cmd.duration_ms = kMaxCmdMs;
    cmd.view_angles = {0, 40.0f * i, 0};
    cmd.forward_move = 400;
    cmd.buttons = kButtonJump;
    const Region r = t.world->RegionOf(p, cmd);
    REQUIRE(t.world->ExecuteCommand(p, cmd).ok());
    const Edict& e = t.world->Get(p);
    CHECK(r.move_box.Contains(EdictBox(e)));
    CHECK(Length(Vec3{e.velocity.x, e.velocity.y, 0}) < kMaxSpeed * 1.1f);
  }
}

bool SameBits(const MoveTrace& a, const MoveTrace& b) {
  return std::memcmp(&a.fraction, &b.fraction, sizeof(float)) == 0 &&
         std::memcmp(&a.end, &b.end, sizeof(Vec3)) == 0 &&
         std::memcmp(&a.normal, &b.normal, sizeof(Vec3)) == 0 && a.start_solid == b.start_solid &&
         a.all_solid == b.all_solid && a.entity == b.entity;
}

TEST_CASE("a ground probe through the memo is the plain trace, bit for bit") {
  auto t = testing::LoadWorld("maps/dm_arena.map");
  const collision::CollisionWorld& map = *t.collision;
  // Where players stand (each spawn's x/y and a ring around it, dropped onto the floor), and the
  // same points lifted into the air.
  std::vector<Vec3> origins;
  for (const maps::SpawnPoint& sp : t.map.spawns) {
    for (int k = 0; k < 8; ++k) {
      const Vec3 top = sp.origin + Vec3{37.0f * (k % 3 - 1), 23.0f * (k / 3 - 1), 64};
      const collision::Trace down = map.TraceBox(top, top - Vec3{0, 0, 512}, kPlayerMins, kPlayerMaxs);
      if (down.start_solid || !down.hit()) continue;
      origins.push_back(down.end);
      origins.push_back(down.end + Vec3{0, 0, 0.5f});
      origins.push_back(down.end + Vec3{0, 0, 40});
    }
  }
  REQUIRE(origins.size() > 20);
  ClipBoxes none;
  MapTraceMemo memo;
  const MoveClipper plain(map, none), memoized(map, none, &memo);
  int on_ground = 0, in_air = 0;
  for (size_t i = 0; i < origins.size(); ++i) {
    const Vec3 o = origins[i];
    const MoveTrace want = plain.Trace(o, o - Vec3{0, 0, 1}, kPlayerMins, kPlayerMaxs);
    // A new origin (the memo holds the previous one), the same origin again (from the memo),
    // then the previous origin after this one.
    CHECK(SameBits(memoized.ProbeGround(o), want));
    CHECK(SameBits(memoized.ProbeGround(o), want));
    if (i > 0) {
      const Vec3 back = origins[i - 1];
      CHECK(SameBits(memoized.ProbeGround(back),
                     plain.Trace(back, back - Vec3{0, 0, 1}, kPlayerMins, kPlayerMaxs)));
    }
    (want.hit() ? on_ground : in_air)++;
  }
  CHECK(on_ground > 10);  // the probes met the floor
  CHECK(in_air > 10);

  // Only the map's part is kept: a player box that appears under the probe is hit.
  const Vec3 o = origins[2];  // 40 units above the floor
  REQUIRE(!plain.Trace(o, o - Vec3{0, 0, 1}, kPlayerMins, kPlayerMaxs).hit());
  REQUIRE(!memoized.ProbeGround(o).hit());
  ClipBoxes below;
  below.push_back(5, Bounds::At(o - Vec3{0, 0, 56.5f}, kPlayerMins, kPlayerMaxs));
  const MoveTrace with_box = MoveClipper(map, below, &memo).ProbeGround(o);
  CHECK(with_box.entity == 5);
  CHECK(SameBits(with_box, MoveClipper(map, below).Trace(o, o - Vec3{0, 0, 1}, kPlayerMins,
                                                         kPlayerMaxs)));
}

// Players' moves on dm_arena, walked as chains of short sweeps from each spawn (as a player's
// traces follow one another), with a few long ones and ground probes between: through one memo
// per chain they must give the plain traces' results, whether the memo's clear box holds the
// sweep or not.
TEST_CASE("a trace through the memo's clear box is the plain trace, bit for bit") {
  auto t = testing::LoadWorld("maps/dm_arena.map");
  const collision::CollisionWorld& map = *t.collision;
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> unit(0, 1), dir(-1, 1);
  // One player box in the walk's way, so the entity part is clipped after a skipped map part.
  int skipped = 0, hits = 0, entity_hits = 0, traces = 0;
  for (const maps::SpawnPoint& sp : t.map.spawns) {
    MapTraceMemo memo;
    Vec3 origin = sp.origin + Vec3{0, 0, 8};
    ClipBoxes boxes;
    boxes.push_back(9, Bounds::At(origin + Vec3{40, 0, 0}, kPlayerMins, kPlayerMaxs));
    const MoveClipper plain(map, boxes), memoized(map, boxes, &memo);
    for (int step = 0; step < 120; ++step) {
      const float length = step % 17 == 0 ? 400.0f * unit(rng) : 12.0f * unit(rng);
      Vec3 d = Normalize(Vec3{dir(rng), dir(rng), 0.3f * dir(rng)});
      if (step % 5 == 0) d = Vec3{0, 0, step % 10 == 0 ? 1.0f : -1.0f};  // stair lifts and drops
      const Vec3 end = origin + d * length;
      const Bounds swept = collision::SweptBox(origin, end, kPlayerMins, kPlayerMaxs);
      if (memo.clear.Contains(swept)) ++skipped;
      const MoveTrace want = plain.Trace(origin, end, kPlayerMins, kPlayerMaxs);
      const MoveTrace got = memoized.Trace(origin, end, kPlayerMins, kPlayerMaxs);
      INFO("spawn " << sp.origin.x << " " << sp.origin.y << " step " << step);
      REQUIRE(SameBits(got, want));
      REQUIRE(SameBits(memoized.ProbeGround(got.end), plain.Trace(got.end, got.end - Vec3{0, 0, 1},
                                                                   kPlayerMins, kPlayerMaxs)));
      ++traces;
      if (want.hit()) ++(want.entity >= 0 ? entity_hits : hits);
      if (!want.start_solid) origin = want.end;
    }
  }
  INFO(traces << " traces, " << skipped << " inside the clear box, " << hits << " map hits, "
              << entity_hits << " entity hits");
  CHECK(skipped > traces / 4);  // the clear box served many...
  CHECK(hits > traces / 20);    // ...and walls and floors were met too
  CHECK(entity_hits > 0);
}

TEST_CASE("a trace's result does not depend on the order of the entity boxes") {
  // RunMovement gathers the boxes in the tree's order, which differs from run to run of the same
  // game (live, replayed serially, replayed on several threads).
  auto t = FlatWorld(testing::TestMap());
  const collision::CollisionWorld& map = *t.collision;
  const Vec3 start{0, 0, 300}, end{200, 0, 300};  // in the air: the map is not hit
  REQUIRE(!map.TraceBox(start, end, kPlayerMins, kPlayerMaxs).hit());
  // Ids 7 and 3 face the mover at the same x, beside each other; id 1 stands further on.
  const Bounds a = Bounds{{100, -40, 270}, {132, -8, 334}};
  const Bounds b = Bounds{{100, 8, 270}, {132, 40, 334}};
  const Bounds far = Bounds{{150, -10, 270}, {182, 10, 334}};
  std::vector<std::pair<EntityId, Bounds>> boxes = {{7, a}, {3, b}, {1, far}};
  std::sort(boxes.begin(), boxes.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  MoveTrace first;
  int orders = 0;
  do {
    ClipBoxes clip_boxes;
    for (const auto& [id, box] : boxes) clip_boxes.push_back(id, box);
    const MoveTrace trace = MoveClipper(map, clip_boxes).Trace(start, end, kPlayerMins, kPlayerMaxs);
    CHECK(trace.entity == 3);  // the lower id of the two hit first
    CHECK(trace.fraction < 0.5f);
    if (orders++ == 0) first = trace;
    CHECK(SameBits(trace, first));
  } while (std::next_permutation(boxes.begin(), boxes.end(),
                                 [](const auto& x, const auto& y) { return x.first < y.first; }));
  CHECK(orders == 6);
}

// Bit for bit: an angle beyond +-720 degrees (a command's or a map's) turns the view as its
// remainder in [-180, 180] does (game_libm_test shows why it matters); one within it is not
// reduced.
TEST_CASE("view angles beyond two turns give the vectors of their remainder") {
  auto bits = [](Vec3 v) {
    return std::vector<uint32_t>{std::bit_cast<uint32_t>(v.x), std::bit_cast<uint32_t>(v.y),
                                 std::bit_cast<uint32_t>(v.z)};
  };
  auto vectors = [&](Vec3 angles) {
    Vec3 f, r, u;
    AngleVectors(angles, &f, &r, &u);
    return std::vector<std::vector<uint32_t>>{bits(f), bits(r), bits(u)};
  };
  for (float a : {989.998718f, -1349.77576f, 1875.27808f, 1.0e30f}) {
    INFO("angle " << a);
    const float within = std::remainder(a, 360.0f);
    CHECK(std::fabs(within) <= 180.0f);
    CHECK(vectors({0, a, 0}) == vectors({0, within, 0}));
    CHECK(vectors({a, 30, a}) == vectors({within, 30, within}));
  }
  // 700 degrees is within the bound, so it is not reduced: its vectors differ from -20's.
  CHECK(vectors({0, 700, 0}) != vectors({0, -20, 0}));
}

}  // namespace
}  // namespace game
