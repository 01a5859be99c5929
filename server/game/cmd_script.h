// Scripted players for tests and benchmarks: wander (turn when blocked), jump, switch weapons
// and shoot, from a seeded generator. Deterministic for a given seed and world state.
#pragma once

#include <cstdint>

#include "server/game/user_cmd.h"
#include "server/game/world.h"

namespace game::testing {

struct ScriptOptions {
  int min_duration_ms = 33;   // command durations are drawn from [min, max]
  int max_duration_ms = 33;
  int attack_percent = 10;    // chance a command holds attack
  int jump_percent = 5;
  int impulse_percent = 2;    // chance of a weapon switch
};

class ScriptedPlayer {
 public:
  ScriptedPlayer() = default;
  ScriptedPlayer(EntityId player, uint64_t seed, const ScriptOptions& options);
  EntityId player() const { return player_; }
  // A rejoin may resume the record in another player slot: the script follows it there.
  void set_player(EntityId player) { player_ = player; }
  // The next command for this player given the current world state.
  UserCmd Next(const World& world);

 private:
  EntityId player_ = 0;
  uint64_t rng_ = 1;
  ScriptOptions options_;
  float yaw_ = 0;
  float pitch_ = 0;
  Vec3 last_origin_;
  int stuck_ = 0;
};

}  // namespace game::testing
