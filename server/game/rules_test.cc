// Deathmatch rule tests on box-brush maps: rockets (direct, splash, self damage), hitscan and
// walls, armor, pickups and their respawn, death and respawn, teleporters and telefrags, jump pads.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "server/areanode/areanode_tree.h"
#include "server/game/game_constants.h"
#include "server/game/game_test_util.h"

namespace game {
namespace {

using testing::CmdSpec;
using testing::RunCmds;

constexpr float kStandZ = 24;

testing::TestWorld Arena(testing::TestMap map = testing::TestMap()) {
  map.Floor(2048).Spawn({-1500, -1500, kStandZ}).Spawn({1500, 1500, kStandZ}).Spawn({0, 1200, kStandZ});
  return testing::MakeWorld(map.Finish());
}

void GiveRocketLauncher(World* w, EntityId p) {
  Edict& e = w->Mut(p);
  e.weapons_owned |= 1u << kWeaponRocketLauncher;
  e.ammo_rockets = 10;
}

// What the world phase's scans rely on (RunWorldPhase): a rocket slot is linked exactly while it
// holds a rocket or an explosion, and a pickup exactly while it is available.
void CheckLinkedMeansLive(const World& w) {
  for (EntityId id = w.RocketSlot(1, 0); id < w.first_pickup(); ++id) {
    INFO("rocket slot " << id);
    CHECK(w.tree().IsLinked(id) == (w.Get(id).kind != EntityKind::kFree));
  }
  for (EntityId id = w.first_pickup(); id < w.first_pickup() + w.pickup_count(); ++id) {
    INFO("pickup " << id);
    CHECK(w.tree().IsLinked(id) == ((w.Get(id).flags & kFlagAvailable) != 0));
  }
}

// Runs world phases until `done` or `max_ticks`.
template <typename Pred>
void RunTicks(World* w, int max_ticks, Pred done) {
  for (int i = 0; i < max_ticks && !done(); ++i) w->RunWorldPhase();
}

// a, at the centre, fires a rocket at b, 300 units ahead, while c stands 60 units beside b.
struct RocketShot {
  EntityId a, b, c;
};
RocketShot FireAtNeighbours(World* w, int c_health) {
  const RocketShot s{testing::JoinOrDie(w, "a"), testing::JoinOrDie(w, "b"), testing::JoinOrDie(w, "c")};
  testing::Place(w, s.a, {0, 0, kStandZ});
  testing::Place(w, s.b, {300, 0, kStandZ});
  testing::Place(w, s.c, {300, 60, kStandZ});
  w->Mut(s.c).health = c_health;
  GiveRocketLauncher(w, s.a);
  RunCmds(w, s.a, 1, CmdSpec{.buttons = kButtonAttack, .impulse = kImpulseRocketLauncher});
  return s;
}

TEST_CASE("a rocket hits its target and splashes a bystander") {
  auto t = Arena();
  World* w = t.world.get();
  const RocketShot shot = FireAtNeighbours(w, 100);
  const EntityId a = shot.a, b = shot.b, c = shot.c;
  CHECK(w->Get(a).ammo_rockets == 9);
  CHECK(w->Get(w->RocketSlot(a, 0)).kind == EntityKind::kRocket);
  CheckLinkedMeansLive(*w);
  RunTicks(w, 30, [&] { return w->Get(w->RocketSlot(a, 0)).kind != EntityKind::kRocket; });
  CHECK(w->Get(w->RocketSlot(a, 0)).kind == EntityKind::kExplosion);
  CheckLinkedMeansLive(*w);
  CHECK((w->Get(b).flags & kFlagDead));
  CHECK(w->Get(b).deaths == 1);
  CHECK(w->Get(a).frags == 1);
  // c stands 44 units from the blast: 120 * (1 - 44/120) = 76 damage.
  CHECK(w->Get(c).health >= 23);
  CHECK(w->Get(c).health <= 25);
  CHECK(w->Get(a).health == 100);
  RunTicks(w, 2, [] { return false; });
  CHECK(w->Get(w->RocketSlot(a, 0)).kind == EntityKind::kFree);
  CheckLinkedMeansLive(*w);
}

// Under the region check: a rocket that hits inside its firing command (the target stands
// within the in-command flight) damages only what the command's region declared, diagonally too.
TEST_CASE("a rocket that explodes inside its command stays in the command's region") {
  for (const float yaw : {0.0f, 45.0f, 135.0f}) {
    auto t = Arena();
    World* w = t.world.get();
    w->set_region_check(true);
    EntityId a = testing::JoinOrDie(w, "a"), b = testing::JoinOrDie(w, "b"), c = testing::JoinOrDie(w, "c");
    const float rad = yaw * 3.14159265f / 180;
    const Vec3 dir{std::cos(rad), std::sin(rad), 0};
    testing::Place(w, a, {0, 0, kStandZ});
    testing::Place(w, b, Vec3{0, 0, kStandZ} + dir * 50);  // face 34 units ahead: hit in the command
    testing::Place(w, c, Vec3{0, 0, kStandZ} + dir * 50 + Vec3{-dir.y, dir.x, 0} * 60);  // splashed
    GiveRocketLauncher(w, a);
    RunCmds(w, a, 1, CmdSpec{.yaw = yaw, .pitch = 20, .buttons = kButtonAttack, .impulse = kImpulseRocketLauncher});
    CHECK(w->Get(w->RocketSlot(a, 0)).kind == EntityKind::kExplosion);
    CHECK(w->Get(b).health < 100);
    CHECK(w->Get(c).health < 100);
  }
}

// A command runs with its pitch clamped to +-89 degrees and no roll. Its region must be built
// from those angles: from the raw ones, a rolled or vertical aim turns the cone away from where
// the pellets and rockets go, and the region check aborts.
TEST_CASE("long-range regions follow the angles the command runs with, not the raw ones") {
  for (const float roll : {0.0f, 45.0f, -60.0f}) {
    for (const float pitch : {0.0f, 90.0f, -90.0f}) {
      INFO("roll " << roll << ", pitch " << pitch);
      auto t = Arena();
      World* w = t.world.get();
      w->set_region_check(true);
      EntityId a = testing::JoinOrDie(w, "a");
      testing::Place(w, a, {-1000, -1000, kStandZ});
      w->Mut(a).ammo_shells = 100;
      RunCmds(w, a, 16 * 8, CmdSpec{.yaw = 45, .pitch = pitch, .buttons = kButtonAttack, .roll = roll});
      CHECK(w->Get(a).ammo_shells <= 100 - 8);
      GiveRocketLauncher(w, a);
      RunCmds(w, a, 25 * 3, CmdSpec{.yaw = 45, .pitch = pitch, .buttons = kButtonAttack,
                                    .impulse = kImpulseRocketLauncher, .roll = roll});
      CHECK(w->Get(a).ammo_rockets <= 10 - 3);
    }
  }
}

TEST_CASE("a rocket into a nearby wall hurts the shooter, and a fatal one costs a frag") {
  auto t = Arena(std::move(testing::TestMap().Box({100, -512, 0}, {132, 512, 256})));
  World* w = t.world.get();
  EntityId a = testing::JoinOrDie(w, "a");
  testing::Place(w, a, {0, 0, kStandZ});
  GiveRocketLauncher(w, a);
  RunCmds(w, a, 1, CmdSpec{.buttons = kButtonAttack, .impulse = kImpulseRocketLauncher});
  RunTicks(w, 10, [] { return false; });
  // Blast at x ~ 100, 84 units from a's box: 120 * 36/120 = 36, halved for the shooter.
  CHECK(w->Get(a).health == 100 - 18);
  w->Mut(a).health = 5;
  RunCmds(w, a, 30, CmdSpec{});  // cool down
  RunCmds(w, a, 1, CmdSpec{.buttons = kButtonAttack});
  RunTicks(w, 10, [] { return false; });
  CHECK((w->Get(a).flags & kFlagDead));
  CHECK(w->Get(a).frags == -1);
}

TEST_CASE("hitscan hits in the open, armor absorbs, walls stop pellets") {
  const float pitch = 3.43f;  // from the eye (z 46) down to the target's centre (z 28) at 300
  SECTION("open") {
    auto t = Arena();
    World* w = t.world.get();
    EntityId a = testing::JoinOrDie(w, "a"), b = testing::JoinOrDie(w, "b");
    testing::Place(w, a, {0, 0, kStandZ});
    testing::Place(w, b, {300, 0, kStandZ});
    RunCmds(w, a, 1, CmdSpec{.pitch = pitch, .buttons = kButtonAttack});
    CHECK(w->Get(b).health == 100 - kShotgunPellets * kShotgunPelletDamage);
    CHECK(w->Get(a).ammo_shells == kSpawnShells - 1);
    w->Mut(b).armor = 150;
    w->Mut(b).armor_pct = 60;
    RunCmds(w, a, 1, CmdSpec{.pitch = pitch, .buttons = kButtonAttack});  // cooling down
    CHECK(w->Get(b).health == 76);
    RunCmds(w, a, 15, CmdSpec{.pitch = pitch, .buttons = kButtonAttack});
    CHECK(w->Get(b).health == 76 - 9);  // 24 damage, 60% (rounded up: 15) to armor
    CHECK(w->Get(b).armor == 150 - 15);
  }
  SECTION("wall") {
    auto t = Arena(std::move(testing::TestMap().Box({150, -512, 0}, {182, 512, 512})));
    World* w = t.world.get();
    EntityId a = testing::JoinOrDie(w, "a"), b = testing::JoinOrDie(w, "b");
    testing::Place(w, a, {0, 0, kStandZ});
    testing::Place(w, b, {300, 0, kStandZ});
    RunCmds(w, a, 1, CmdSpec{.pitch = pitch, .buttons = kButtonAttack});
    CHECK(w->Get(a).ammo_shells == kSpawnShells - 1);
    CHECK(w->Get(b).health == 100);
  }
}

TEST_CASE("the axe reaches 64 units") {
  auto t = Arena();
  World* w = t.world.get();
  EntityId a = testing::JoinOrDie(w, "a"), b = testing::JoinOrDie(w, "b"), c = testing::JoinOrDie(w, "c");
  testing::Place(w, a, {0, 0, kStandZ});
  testing::Place(w, b, {60, 0, kStandZ});      // face at 44: in reach
  testing::Place(w, c, {-100, 0, kStandZ});    // face at -84: out of reach
  RunCmds(w, a, 1, CmdSpec{.buttons = kButtonAttack, .impulse = kImpulseAxe});
  CHECK(w->Get(b).health == 100 - kMeleeDamage);
  RunCmds(w, a, 20, CmdSpec{.yaw = 180, .buttons = kButtonAttack, .impulse = kImpulseAxe});
  CHECK(w->Get(c).health == 100);
}

TEST_CASE("a pickup is taken and respawns on time") {
  auto t = Arena(std::move(testing::TestMap().Pickup("item_health", {200, 0, 0})));
  World* w = t.world.get();
  REQUIRE(w->pickup_count() == 1);
  const EntityId item = w->first_pickup();
  EntityId a = testing::JoinOrDie(w, "a");
  testing::Place(w, a, {0, 0, kStandZ});
  w->Mut(a).health = 50;
  RunCmds(w, a, 30, CmdSpec{.forward = 400});
  CHECK(w->Get(a).health == 50 + kHealthAmount);
  const Edict& e = w->Get(item);
  REQUIRE(!(e.flags & kFlagAvailable));
  const int respawn = (kHealthRespawnMs + w->tick_ms() - 1) / w->tick_ms();
  CHECK(e.next_tick == w->globals().tick + respawn);
  while (w->globals().tick < e.next_tick - 1) w->RunWorldPhase();
  CHECK(!(w->Get(item).flags & kFlagAvailable));
  CheckLinkedMeansLive(*w);
  w->RunWorldPhase();
  CHECK((w->Get(item).flags & kFlagAvailable));
  CheckLinkedMeansLive(*w);
  testing::Place(w, a, {0, 0, kStandZ});
  RunCmds(w, a, 30, CmdSpec{.forward = 400});
  CHECK(w->Get(a).health == 100);
}

TEST_CASE("a killed player respawns after the delay away from the others") {
  auto t = Arena();
  World* w = t.world.get();
  EntityId a = testing::JoinOrDie(w, "a"), b = testing::JoinOrDie(w, "b");
  testing::Place(w, a, {100, 100, kStandZ});
  testing::Place(w, b, {400, 100, kStandZ});
  w->Mut(b).health = 5;
  RunCmds(w, a, 1, CmdSpec{.buttons = kButtonAttack});
  REQUIRE((w->Get(b).flags & kFlagDead));
  CHECK(!(w->Get(b).flags & kFlagSolid));
  CHECK(w->Get(a).frags == 1);
  CHECK(w->Get(b).deaths == 1);
  const Vec3 body = w->Get(b).origin;
  RunCmds(w, b, 5, CmdSpec{.forward = 400});  // the dead do not move
  CHECK(w->Get(b).origin == body);
  const int delay = (kRespawnDelayMs + w->tick_ms() - 1) / w->tick_ms();
  for (int i = 0; i < delay - 1; ++i) w->RunWorldPhase();
  CHECK((w->Get(b).flags & kFlagDead));
  w->RunWorldPhase();
  const Edict& e = w->Get(b);
  CHECK(!(e.flags & kFlagDead));
  CHECK((e.flags & kFlagSolid));
  CHECK(e.health == kSpawnHealth);
  CHECK(e.origin.x == -1500);  // spawn 0 is the farthest from a at (100, 100)
  CHECK(e.origin.y == -1500);
}

// Two players killed by one rocket respawn in the same world phase, and keep away from each
// other: each choice counts the players respawned before it in that phase. A World restored from
// the saved state (LoadState, as recovery restores a checkpoint) respawns them the same way.
TEST_CASE("players killed together respawn together, at different spawn points, also after a restore") {
  auto t = Arena();
  World* w = t.world.get();
  const RocketShot shot = FireAtNeighbours(w, 50);  // the splash (about 76) kills c too
  const EntityId b = shot.b, c = shot.c;
  RunTicks(w, 30, [&] { return (w->Get(b).flags & kFlagDead) != 0; });
  REQUIRE((w->Get(b).flags & kFlagDead));
  REQUIRE((w->Get(c).flags & kFlagDead));
  REQUIRE(w->Get(b).next_tick == w->Get(c).next_tick);
  std::vector<uint8_t> saved;
  w->SaveState(&saved);
  auto restored = Arena();
  REQUIRE(restored.world->LoadState(saved).ok());
  for (World* x : {w, restored.world.get()}) {
    const int respawn_tick = x->Get(b).next_tick;
    while (x->globals().tick < respawn_tick) x->RunWorldPhase();
    REQUIRE(!(x->Get(b).flags & kFlagDead));
    REQUIRE(!(x->Get(c).flags & kFlagDead));
    // a stands as far from spawn 0 (-1500, -1500) as from spawn 1 (1500, 1500): b (the lower id)
    // takes spawn 0, the lower index; then spawn 1 is the farthest from both, not spawn 0 again.
    CHECK(x->Get(b).origin.x == -1500);
    CHECK(x->Get(b).origin.y == -1500);
    CHECK(x->Get(c).origin.x == 1500);
    CHECK(x->Get(c).origin.y == 1500);
  }
  std::vector<uint8_t> live_state, restored_state;
  w->SaveState(&live_state);
  restored.world->SaveState(&restored_state);
  CHECK(live_state == restored_state);
}

// The scan stops early for a spawn point that cannot win (docs in World::ChooseSpawn); the choice
// must still be the full scan's, computed here over every spawn point of a map with at most 64
// (so every one is a candidate, and no random offset is drawn).
TEST_CASE("a joining player spawns at the spawn point farthest from its nearest player") {
  auto t = testing::LoadWorld("maps/dm_arena.map");
  World* w = t.world.get();
  std::vector<Vec3> spawns;
  for (const auto& s : w->spawn_points()) spawns.push_back(s.origin);
  REQUIRE(spawns.size() >= 2);
  REQUIRE(spawns.size() <= 64);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> offset(-300, 300);
  std::vector<EntityId> players;
  for (int i = 0; i < 24; ++i) players.push_back(testing::JoinOrDie(w, "p" + std::to_string(i)));
  for (int round = 0; round < 12; ++round) {
    std::vector<Vec3> live;
    for (EntityId p : players) {  // crowd some spawn points, leave others free
      const Vec3 s = spawns[rng() % (spawns.size() / 2 + 1)];
      testing::Place(w, p, {s.x + offset(rng), s.y + offset(rng), s.z + 1});
      live.push_back(w->Get(p).origin);
    }
    size_t best = 0;
    float best_d2 = -1;
    for (size_t i = 0; i < spawns.size(); ++i) {
      float nearest = std::numeric_limits<float>::max();
      for (const Vec3& o : live) {
        const Vec3 d = o - spawns[i];
        nearest = std::min(nearest, Dot(d, d));
      }
      if (nearest > best_d2) {  // ties: the lower index stays
        best_d2 = nearest;
        best = i;
      }
    }
    const EntityId joined = testing::JoinOrDie(w, "new" + std::to_string(round));
    INFO("round " << round);
    CHECK(w->Get(joined).index == static_cast<int>(best));
    CHECK(w->Get(joined).origin == spawns[best] + Vec3{0, 0, 1});
    REQUIRE(w->Leave(joined).ok());
  }
}

TEST_CASE("a teleporter moves the player and telefrags whoever stands there") {
  auto t = Arena(std::move(testing::TestMap().Teleporter({100, -32, 0}, {140, 32, 64}, {1000, 0, kStandZ}, 90)));
  World* w = t.world.get();
  EntityId a = testing::JoinOrDie(w, "a"), b = testing::JoinOrDie(w, "b");
  testing::Place(w, a, {0, 0, kStandZ});
  testing::Place(w, b, {1000, 10, kStandZ});
  for (int i = 0; i < 30 && w->Get(a).origin.x < 500; ++i) {
    RunCmds(w, a, 1, CmdSpec{.forward = 400});
  }
  const Edict& e = w->Get(a);
  CHECK(e.origin == Vec3{1000, 0, kStandZ});
  CHECK(e.velocity.y == Approx(kTeleportExitSpeed));
  CHECK((w->Get(b).flags & kFlagDead));
  CHECK(w->Get(a).frags == 1);
}

// Many volumes are found through a grid, which lists them cell by cell; the rules take them in
// the map's order all the same. Teleporter 0 reaches from y = 95 north, teleporter 1 from y = -100:
// a player whose box straddles y = 95 touches both, and must go where teleporter 0 sends it,
// wherever the grid's cell boundaries fall.
// With 40 more teleporters far away, the volumes are looked up in their grid; with none, scanned.
// The far row is shifted in 8-unit steps, so that some shift puts a grid cell boundary between
// the two teleporters' edges under the player's box (the grid's cells are 64 units from the
// volumes' lowest corner): then the grid lists teleporter 1 first.
TEST_CASE("of two teleporters touched at once, the first in the map's order wins") {
  const int far = GENERATE(0, 40);
  INFO(far << " far teleporters");
  int both = 0;
  for (int shift = 0; shift < (far > 0 ? 8 : 1); ++shift) {
    for (float y = 70; y <= 120; y += 2) {
      testing::TestMap m;
      m.Teleporter({-48, 95, 0}, {48, 300, 64}, {1000, 0, kStandZ}, 90)
          .Teleporter({-48, -100, 0}, {48, 300, 64}, {-1000, 0, kStandZ}, 90);
      for (int i = 0; i < far; ++i) {
        const float x = -900 + i * 16.0f, fy = -900 + shift * 8.0f;
        m.Teleporter({x, fy, -500}, {x + 8, fy + 8, -492}, {0, 0, kStandZ});  // below the floor
      }
      auto t = Arena(std::move(m));
      World* w = t.world.get();
      const EntityId a = testing::JoinOrDie(w, "a");
      testing::Place(w, a, {0, y, kStandZ});
      RunCmds(w, a, 1, CmdSpec{});
      INFO("shift " << shift << " y " << y);
      if (y + 16 >= 95) {  // the box reaches teleporter 0 too
        ++both;
        CHECK(w->Get(a).origin == Vec3{1000, 0, kStandZ});
      } else {
        CHECK(w->Get(a).origin == Vec3{-1000, 0, kStandZ});
      }
    }
  }
  CHECK(both > 10);
}

// A map may hold thousands of triggers (up to maps::kMaxEntities); a command looks only at those
// near it, and still finds the one it walks into.
TEST_CASE("among thousands of far teleporters, the one walked into still teleports") {
  testing::TestMap m;
  for (int i = 0; i < 3000; ++i) {
    const float x = -900 + (i % 60) * 16.0f, y = -900 + (i / 60) * 16.0f;
    m.Teleporter({x, y, -500}, {x + 8, y + 8, -492}, {0, 0, kStandZ});  // below the floor
  }
  m.Teleporter({100, -32, 0}, {140, 32, 64}, {1000, 0, kStandZ}, 90);
  auto t = Arena(std::move(m));
  World* w = t.world.get();
  const EntityId a = testing::JoinOrDie(w, "a");
  testing::Place(w, a, {0, 0, kStandZ});
  for (int i = 0; i < 30 && w->Get(a).origin.x < 500; ++i) RunCmds(w, a, 1, CmdSpec{.forward = 400});
  CHECK(w->Get(a).origin == Vec3{1000, 0, kStandZ});
}

// Each trigger counts once per cell of its grid that it covers, as brushes do in the collision
// grid (CollisionWorld::CheckMap): a map of triggers that each span the map is refused.
TEST_CASE("a map of teleporters that each span the map is refused, not gridded") {
  testing::TestMap m;
  for (int i = 0; i < 300; ++i) {
    m.Teleporter({-8192, -8192, 100}, {8192, 8192, 108}, {0, 0, kStandZ});
  }
  m.Floor(2048).Spawn({0, 0, kStandZ});
  const maps::Map map = m.Finish();
  auto collision = collision::CollisionWorld::Build(map);
  std::unique_ptr<World> w;
  const core::Status s = World::Create(map, *collision, WorldConfig{}, &w);
  CHECK(s.code() == core::Status::Code::kInvalidArgument);
  CHECK_THAT(s.ToString(), Catch::Contains("too many teleporters"));
}

TEST_CASE("a jump pad throws the player up") {
  auto t = Arena(std::move(testing::TestMap().JumpPad({100, -32, 0}, {140, 32, 8}, {0, 0, 800})));
  World* w = t.world.get();
  EntityId a = testing::JoinOrDie(w, "a");
  testing::Place(w, a, {0, 0, kStandZ});
  float apex = 0;
  for (int i = 0; i < 60; ++i) {
    RunCmds(w, a, 1, CmdSpec{.forward = i < 15 ? 400 : 0});
    apex = std::max(apex, w->Get(a).origin.z);
  }
  CHECK(apex > kStandZ + 350);  // 800^2 / 1600 = 400
}

}  // namespace
}  // namespace game

namespace game {
namespace {

TEST_CASE("RegionOf declares the action kind and boxes") {
  testing::TestMap m;
  m.Floor(2048).Spawn({-1500, -1500, 24}).Teleporter({100, -32, 0}, {140, 32, 64}, {1000, 0, 24});
  auto t = testing::MakeWorld(m.Finish());
  World* w = t.world.get();
  EntityId a = testing::JoinOrDie(w, "a");
  testing::Place(w, a, {-500, 0, 24});
  UserCmd cmd;
  cmd.sequence = 1;
  cmd.duration_ms = 33;
  Region r = w->RegionOf(a, cmd);
  CHECK(r.action == ActionKind::kNone);
  CHECK(!r.NeedsWholeMap(false));
  CHECK(r.teleport_count == 0);
  CHECK(r.move_box.Contains(w->BoxOf(a)));
  CHECK(r.move_box.Size().x < 2 * (16 + 32 + 28));  // ~27 units of travel, grown by an entity

  cmd.buttons = kButtonAttack;  // shotgun: directional, towards +x (yaw 0)
  r = w->RegionOf(a, cmd);
  CHECK(r.action == ActionKind::kDirectionalBox);
  CHECK(r.NeedsWholeMap(false));
  CHECK(!r.NeedsWholeMap(true));
  CHECK(r.action_box.maxs.x > 2048);
  CHECK(r.action_box.mins.x > -700);  // nothing behind the player

  cmd.impulse = kImpulseRocketLauncher;  // not owned yet: still the shotgun
  CHECK(w->RegionOf(a, cmd).action == ActionKind::kDirectionalBox);
  w->Mut(a).weapons_owned |= 1u << kWeaponRocketLauncher;
  w->Mut(a).ammo_rockets = 5;
  r = w->RegionOf(a, cmd);
  CHECK(r.action == ActionKind::kExpandedBox);
  CHECK(r.action_box.Contains(r.move_box));
  CHECK(r.action_box.Size().x < r.move_box.Size().x + 2 * (8 + 50 + 120 + 64) + 1);
  // Aimed along +x: the flight lengthens the box ahead of the player only.
  CHECK(r.action_box.maxs.x - w->BoxOf(a).maxs.x > w->BoxOf(a).mins.x - r.action_box.mins.x + 50);
  CHECK(r.action_box.Size().y < r.action_box.Size().x - 50);

  w->Mut(a).ammo_rockets = 0;
  w->Mut(a).ammo_shells = 0;
  CHECK(w->RegionOf(a, cmd).action == ActionKind::kNone);  // no ammo: no long-range action

  testing::Place(w, a, {80, 0, 24});  // next to the teleporter: its destination is declared
  cmd.buttons = 0;
  r = w->RegionOf(a, cmd);
  REQUIRE(r.teleport_count == 1);
  CHECK(r.teleport_boxes[0].Contains(Bounds{Vec3{1000, 0, 24} + kPlayerMins, Vec3{1000, 0, 24} + kPlayerMaxs}));
}

// A move box is grown in X and Y by speed x time only: the stair lifts and ground snaps are
// vertical traces. A pad sets the velocity after a sub-step's move, so it can speed up only a
// command of two or more sub-steps.
TEST_CASE("a move box grows by stair lifts only in Z, and by a pad's speed only past one sub-step") {
  auto plain = Arena();
  auto padded = Arena(std::move(testing::TestMap().JumpPad({900, -32, 0}, {964, 32, 8}, {0, 0, 1200})));
  const EntityId a = testing::JoinOrDie(plain.world.get(), "a");
  const EntityId b = testing::JoinOrDie(padded.world.get(), "b");
  auto move_box = [](World* w, EntityId p, int duration_ms) {
    testing::Place(w, p, {-500, 0, kStandZ});  // far from the pad
    UserCmd cmd;
    cmd.sequence = w->Get(p).last_cmd_sequence + 1;
    cmd.duration_ms = static_cast<uint16_t>(duration_ms);
    return w->RegionOf(p, cmd).move_box;
  };
  for (const int ms : {1, 33, 50}) {
    INFO(ms << " ms");
    const Bounds box = move_box(plain.world.get(), a, ms);
    CHECK(box.Size().x == Approx(box.Size().y));
    // Z: the player is taller than wide, so is the entity margin on each side, and a sub-step's
    // lift and snap (kStepSize + 4) on each side.
    const Vec3 player = kPlayerMaxs - kPlayerMins;
    const float taller = (player.z - player.x) + 2 * (kMaxEntitySize.z - kMaxEntitySize.x);
    CHECK(box.Size().z - box.Size().x == Approx(taller + 2 * (kStepSize + 4)).margin(1e-3));
    CHECK(move_box(padded.world.get(), b, ms).Size().x == Approx(box.Size().x));  // the pad is moot
  }
  const Bounds slow = move_box(plain.world.get(), a, 100);
  const Bounds thrown = move_box(padded.world.get(), b, 100);  // two sub-steps
  CHECK(thrown.Size().x > slow.Size().x + 2 * 0.05f * (1200 - kMaxSpeed));
}

// Under the region check every entity a pellet's query returns must lie inside the region, so
// this fails (aborts) if the wedge missed a pellet path; and the wedge must hold far fewer leaves
// than the box around a diagonal shot.
TEST_CASE("a diagonal shot locks the strip its pellets cross, and hits along it") {
  auto t = Arena();
  World* w = t.world.get();
  w->set_region_check(true);
  EntityId a = testing::JoinOrDie(w, "a"), b = testing::JoinOrDie(w, "b");
  EntityId c = testing::JoinOrDie(w, "c"), d = testing::JoinOrDie(w, "d");
  testing::Place(w, a, {-1000, -1000, kStandZ});
  testing::Place(w, b, {-400, -400, kStandZ});  // on the diagonal, 850 units away
  testing::Place(w, c, {1000, -1000, kStandZ});  // inside the shot's box, far from its strip
  testing::Place(w, d, {-1000, 1000, kStandZ});
  const float pitch = std::atan2(46.0f - 28.0f, 600 * std::sqrt(2.0f)) * 180 / 3.14159265f;
  const CmdSpec shot{.yaw = 45, .pitch = pitch, .buttons = kButtonAttack};

  UserCmd cmd;
  cmd.sequence = w->Get(a).last_cmd_sequence + 1;
  cmd.duration_ms = 33;
  cmd.view_angles = Vec3{pitch, 45, 0};
  cmd.buttons = kButtonAttack;
  const Region r = w->RegionOf(a, cmd);
  REQUIRE(r.action == ActionKind::kDirectionalBox);
  REQUIRE(!r.action_wedge.empty());
  CHECK(r.Covers(w->BoxOf(b)));
  CHECK(r.action_box.Contains(w->BoxOf(c)));  // the box alone would have declared c
  CHECK(!r.Covers(w->BoxOf(c)));
  CHECK(!r.Covers(w->BoxOf(d)));
  CHECK(r.Meets(w->BoxOf(b)));  // parallel replay: b waits for the shot, c and d need not
  CHECK(!r.Meets(w->BoxOf(c)));
  CHECK(!r.Meets(w->BoxOf(d)));
  const Bounds world = w->tree().node(0).bounds;
  areanode::AreanodeTree fine(world, 8, 1);
  std::vector<int> leaves, box_leaves, scratch, merged;
  RegionLeaves(r, fine, /*optimized=*/true, &leaves, &scratch, &merged);
  fine.LeavesTouching(r.action_box, &box_leaves);
  CHECK(leaves.size() * 2 < box_leaves.size());
  for (EntityId e : {a, b}) {  // every leaf under a covered box is held
    fine.LeavesTouching(w->BoxOf(e), &scratch);
    for (int leaf : scratch) CHECK(std::binary_search(leaves.begin(), leaves.end(), leaf));
  }

  RunCmds(w, a, 1, shot);
  CHECK(w->Get(b).health < 100);
  CHECK(w->Get(c).health == 100);
  CHECK(w->Get(d).health == 100);
}

}  // namespace
}  // namespace game
