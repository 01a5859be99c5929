// Test helpers for server/game: maps built from box brushes (floors, walls, stairs, triggers)
// so movement and rules tests are exact, a World over them, and command shorthands.
#pragma once

#include <memory>
#include <string>

#include "maps/map.h"
#include "server/collision/collision_world.h"
#include "server/game/world.h"

namespace game::testing {

// An axis-aligned box brush with its 6 planes and 8 vertices.
maps::Brush BoxBrush(Vec3 mins, Vec3 maxs, maps::Contents contents = maps::Contents::kSolid);

// Builds a maps::Map piece by piece; Finish() computes the bounds.
class TestMap {
 public:
  TestMap();
  TestMap& Box(Vec3 mins, Vec3 maxs);
  // A floor slab whose top is z = 0 over [-size, size]^2.
  TestMap& Floor(float size);
  TestMap& Spawn(Vec3 origin, float yaw = 0);
  TestMap& Pickup(const std::string& classname, Vec3 origin);
  TestMap& Teleporter(Vec3 mins, Vec3 maxs, Vec3 dest, float dest_yaw = 0);
  TestMap& JumpPad(Vec3 mins, Vec3 maxs, Vec3 velocity);
  maps::Map Finish();

 private:
  int AddTrigger(Vec3 mins, Vec3 maxs);
  maps::Map map_;
};

// A World with its map and collision (kept alive together).
struct TestWorld {
  maps::Map map;
  std::unique_ptr<collision::CollisionWorld> collision;
  std::unique_ptr<World> world;
};
TestWorld MakeWorld(maps::Map map, const WorldConfig& config = {});
// Loads a .map file (path relative to the repository root, where tests run).
TestWorld LoadWorld(const std::string& path, const WorldConfig& config = {});

// Joins `name` and returns its id (aborts on failure).
EntityId JoinOrDie(World* world, const std::string& name, uint64_t token = 7);
// Puts a player at `origin` at rest (through Mut, as a test may).
void Place(World* world, EntityId player, Vec3 origin, float yaw = 0);

// Runs `count` commands of `duration_ms` for `player`, with the next sequence numbers.
struct CmdSpec {
  float yaw = 0, pitch = 0;
  int forward = 0, side = 0;
  uint8_t buttons = 0;
  uint8_t impulse = 0;
  int duration_ms = 33;
  float roll = 0;
};
void RunCmds(World* world, EntityId player, int count, const CmdSpec& spec);

}  // namespace game::testing
