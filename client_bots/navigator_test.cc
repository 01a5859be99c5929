// Behaviours: roles, waypoints from a real map, perception, and that steering always produces
// commands the protocol accepts and gets a wall-blocked bot moving elsewhere.
#include "client_bots/navigator.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <array>

#include "server/protocol/messages.h"

using namespace bots;

TEST_CASE("mixed blends all four roles, deterministically per seed") {
  std::array<int, 5> counts{};
  for (int i = 0; i < 1000; ++i) {
    const Behavior r = ChooseRole(Behavior::kMixed, 1, i);
    REQUIRE(r != Behavior::kMixed);
    REQUIRE(r == ChooseRole(Behavior::kMixed, 1, i));
    ++counts[static_cast<int>(r)];
  }
  for (Behavior b : {Behavior::kWander, Behavior::kFight, Behavior::kItems, Behavior::kHotspot}) {
    CHECK(counts[static_cast<int>(b)] > 80);
  }
  CHECK(ChooseRole(Behavior::kFight, 1, 5) == Behavior::kFight);
}

TEST_CASE("the arena's NavMap has spawns, pickups and a hotspot among its waypoints") {
  NavMap nav;
  REQUIRE(LoadNavMap("maps/dm_arena.map", &nav).ok());
  CHECK(nav.waypoints.size() >= 4);
  CHECK_FALSE(nav.pickups.empty());
  CHECK(std::find(nav.waypoints.begin(), nav.waypoints.end(), nav.hotspot) != nav.waypoints.end());
  CHECK_FALSE(LoadNavMap("maps/no_such_map.map", &nav).ok());
}

TEST_CASE("perception finds the nearest live enemy and available item, not itself") {
  proto::Snapshot snap;
  snap.player.origin = {0, 0, 0};
  auto ent = [](uint16_t id, proto::EntityType t, core::Vec3 at, uint8_t effects = 0) {
    proto::EntityState e;
    e.id = id;
    e.type = t;
    e.origin = at;
    e.effects = effects;
    return e;
  };
  snap.entities = {ent(1, proto::EntityType::kPlayer, {0, 0, 0}),  // ourselves
                   ent(2, proto::EntityType::kPlayer, {50, 0, 0}, proto::kEffectDead),
                   ent(3, proto::EntityType::kPlayer, {300, 0, 0}),
                   ent(4, proto::EntityType::kPlayer, {900, 0, 0}),
                   ent(5, proto::EntityType::kItem, {10, 10, 0}, proto::kEffectRespawning),
                   ent(6, proto::EntityType::kItem, {400, 0, 0})};
  BotBrain b;
  b.player_id = 1;
  Perceive(snap, &b);
  REQUIRE(b.enemy_visible);
  CHECK(b.enemy == core::Vec3{300, 0, 0});
  REQUIRE(b.item_visible);
  CHECK(b.item == core::Vec3{400, 0, 0});
}

TEST_CASE("steering yields valid commands in every role, and a stuck bot changes course") {
  NavMap nav;
  REQUIRE(LoadNavMap("maps/dm_arena.map", &nav).ok());
  NavMap none;
  for (const NavMap* map : {&nav, &none}) {
    for (Behavior role : {Behavior::kWander, Behavior::kFight, Behavior::kItems, Behavior::kHotspot}) {
      BotBrain b;
      b.role = role;
      b.rng = 42;
      b.enemy_visible = role == Behavior::kFight;
      b.enemy = {100, 2000, -300};
      proto::PlayerState me;
      me.origin = {0, 0, 24};
      float first_yaw = 0;
      bool turned = false;
      for (int frame = 0; frame < 200; ++frame) {  // ~6.6 s pinned against a wall
        proto::UserCmd cmd;
        cmd.sequence = frame + 1;
        cmd.duration_ms = 33;
        Steer(me, *map, 1000 + frame * 33, &b, &cmd);
        INFO("role " << BehaviorName(role) << " frame " << frame);
        REQUIRE(proto::ValidateUserCmd(cmd).ok());
        if (frame == 0) first_yaw = cmd.view_angles.y;
        turned |= cmd.view_angles.y != first_yaw;
      }
      CHECK(turned);
    }
  }
  BotBrain dead;
  proto::PlayerState corpse;
  corpse.flags = proto::kPlayerDead;
  bool pressed = false;
  for (int t = 0; t < 10; ++t) {
    proto::UserCmd cmd;
    cmd.sequence = 1;
    cmd.duration_ms = 33;
    Steer(corpse, none, 1000 + t * 33, &dead, &cmd);
    pressed |= (cmd.buttons & proto::kButtonAttack) != 0;
    CHECK(cmd.forward_move == 0);
  }
  CHECK(pressed);  // presses fire to respawn
}
