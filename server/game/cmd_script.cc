// ScriptedPlayer: a tiny wandering bot over the game's read API.
#include "server/game/cmd_script.h"

#include "server/game/rng.h"

namespace game::testing {

ScriptedPlayer::ScriptedPlayer(EntityId player, uint64_t seed, const ScriptOptions& options)
    : player_(player), rng_(seed * 0x9E3779B97F4A7C15ULL + 1), options_(options) {
  yaw_ = static_cast<float>(NextRandom(&rng_) % 360);
}

UserCmd ScriptedPlayer::Next(const World& world) {
  const Edict& e = world.Get(player_);
  const Vec3 moved = e.origin - last_origin_;
  last_origin_ = e.origin;
  stuck_ = Dot(moved, moved) < 1.0f ? stuck_ + 1 : 0;
  if (stuck_ > 2 || NextRandom(&rng_) % 100 < 3) {  // blocked or bored: new heading
    yaw_ = static_cast<float>(NextRandom(&rng_) % 360);
    stuck_ = 0;
  }
  yaw_ += RandomSigned(&rng_) * 10.0f;
  pitch_ = RandomSigned(&rng_) * 20.0f;
  UserCmd cmd;
  cmd.sequence = e.last_cmd_sequence + 1;
  const int span = options_.max_duration_ms - options_.min_duration_ms + 1;
  cmd.duration_ms =
      static_cast<uint16_t>(options_.min_duration_ms + NextRandom(&rng_) % static_cast<uint64_t>(span));
  cmd.view_angles = {pitch_, yaw_, 0};
  cmd.forward_move = 400;
  cmd.side_move = static_cast<int16_t>(static_cast<int>(NextRandom(&rng_) % 3) * 400 - 400);
  if (static_cast<int>(NextRandom(&rng_) % 100) < options_.attack_percent) cmd.buttons |= kButtonAttack;
  if (static_cast<int>(NextRandom(&rng_) % 100) < options_.jump_percent) cmd.buttons |= kButtonJump;
  if (static_cast<int>(NextRandom(&rng_) % 100) < options_.impulse_percent) {
    static constexpr uint8_t kImpulses[] = {kImpulseAxe, kImpulseShotgun, kImpulseRocketLauncher};
    cmd.impulse = kImpulses[NextRandom(&rng_) % 3];
  }
  return cmd;
}

}  // namespace game::testing
