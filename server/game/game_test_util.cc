// Test map construction and command helpers for server/game tests.
#include "server/game/game_test_util.h"

#include "maps/map_loader.h"
#include "server/core/check.h"
#include "server/game/game_constants.h"

namespace game::testing {

maps::Brush BoxBrush(Vec3 mins, Vec3 maxs, maps::Contents contents) {
  maps::Brush b;
  for (int axis = 0; axis < 3; ++axis) {
    Vec3 n;
    n[axis] = 1;
    b.planes.push_back({n, maxs[axis]});
    n[axis] = -1;
    b.planes.push_back({n, -mins[axis]});
  }
  for (int i = 0; i < 8; ++i) {
    b.vertices.push_back({(i & 1) ? maxs.x : mins.x, (i & 2) ? maxs.y : mins.y,
                          (i & 4) ? maxs.z : mins.z});
  }
  b.bounds = {mins, maxs};
  b.contents = contents;
  return b;
}

TestMap::TestMap() {
  map_.path = "test-map";
  maps::Entity world;
  world.classname = "worldspawn";
  map_.entities.push_back(world);
}

TestMap& TestMap::Box(Vec3 mins, Vec3 maxs) {
  map_.entities[0].brushes.push_back(static_cast<int>(map_.brushes.size()));
  map_.brushes.push_back(BoxBrush(mins, maxs));
  map_.solid_brushes++;
  return *this;
}

TestMap& TestMap::Floor(float size) { return Box({-size, -size, -64}, {size, size, 0}); }

TestMap& TestMap::Spawn(Vec3 origin, float yaw) {
  map_.spawns.push_back({origin, yaw, true});
  return *this;
}

TestMap& TestMap::Pickup(const std::string& classname, Vec3 origin) {
  map_.pickups.push_back({classname, origin});
  return *this;
}

int TestMap::AddTrigger(Vec3 mins, Vec3 maxs) {
  maps::Entity e;
  e.classname = "trigger";
  map_.entities.push_back(e);
  maps::Brush b = BoxBrush(mins, maxs, maps::Contents::kTrigger);
  b.entity = static_cast<int>(map_.entities.size()) - 1;
  map_.brushes.push_back(b);
  return static_cast<int>(map_.brushes.size()) - 1;
}

TestMap& TestMap::Teleporter(Vec3 mins, Vec3 maxs, Vec3 dest, float dest_yaw) {
  maps::Teleporter t;
  t.trigger = {mins, maxs};
  t.brushes.push_back(AddTrigger(mins, maxs));
  t.dest_origin = dest;
  t.dest_angle_deg = dest_yaw;
  map_.teleporters.push_back(t);
  return *this;
}

TestMap& TestMap::JumpPad(Vec3 mins, Vec3 maxs, Vec3 velocity) {
  maps::JumpPad j;
  j.trigger = {mins, maxs};
  j.brushes.push_back(AddTrigger(mins, maxs));
  j.velocity = velocity;
  map_.jump_pads.push_back(j);
  return *this;
}

maps::Map TestMap::Finish() {
  map_.bounds = Bounds::Empty();
  for (const auto& b : map_.brushes) {
    if (b.contents == maps::Contents::kSolid) map_.bounds.Add(b.bounds);
  }
  return map_;
}

TestWorld MakeWorld(maps::Map map, const WorldConfig& config) {
  TestWorld t;
  t.map = std::move(map);
  t.collision = collision::CollisionWorld::Build(t.map);
  core::Status s = World::Create(t.map, *t.collision, config, &t.world);
  AS_CHECK(s.ok(), s.ToString().c_str());
  return t;
}

TestWorld LoadWorld(const std::string& path, const WorldConfig& config) {
  maps::Map map;
  core::Status s = maps::LoadMap(path, &map);
  AS_CHECK(s.ok(), s.ToString().c_str());
  return MakeWorld(std::move(map), config);
}

EntityId JoinOrDie(World* world, const std::string& name, uint64_t token) {
  JoinResult r = world->Join(name, token);
  AS_CHECK(r.status.ok(), r.status.ToString().c_str());
  return r.player;
}

void Place(World* world, EntityId player, Vec3 origin, float yaw) {
  Edict& e = world->Mut(player);
  e.origin = origin;
  e.velocity = Vec3{};
  e.view_angles = {0, yaw, 0};
  e.flags &= ~kFlagOnGround;
  world->RelinkAll();
}

void RunCmds(World* world, EntityId player, int count, const CmdSpec& spec) {
  for (int i = 0; i < count; ++i) {
    UserCmd cmd;
    cmd.sequence = world->Get(player).last_cmd_sequence + 1;
    cmd.duration_ms = static_cast<uint16_t>(spec.duration_ms);
    cmd.view_angles = {spec.pitch, spec.yaw, spec.roll};
    cmd.forward_move = static_cast<int16_t>(spec.forward);
    cmd.side_move = static_cast<int16_t>(spec.side);
    cmd.buttons = spec.buttons;
    cmd.impulse = spec.impulse;
    core::Status s = world->ExecuteCommand(player, cmd);
    AS_CHECK(s.ok(), s.ToString().c_str());
  }
}

}  // namespace game::testing
