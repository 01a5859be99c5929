// UserCmd: one move request from a client (QuakeWorld's usercmd_t): view angles, movement
// intentions, buttons and an impulse, applied for duration_ms. Plain value type.
#pragma once

#include <cstdint>

#include "server/core/vec3.h"

namespace game {

enum Button : uint8_t { kButtonAttack = 1u << 0, kButtonJump = 1u << 1 };

// Impulses select weapons (Quake numbering): 1 axe, 2 shotgun, 7 rocket launcher; 0 = none.
inline constexpr uint8_t kImpulseAxe = 1;
inline constexpr uint8_t kImpulseShotgun = 2;
inline constexpr uint8_t kImpulseRocketLauncher = 7;

struct UserCmd {
  uint32_t sequence = 0;     // strictly increasing per player; 0 is never valid
  uint16_t duration_ms = 0;  // 1..kMaxCmdMs
  core::Vec3 view_angles;    // pitch (down positive, clamped to +-89), yaw, roll; degrees
  int16_t forward_move = 0;  // units/s wished, +-400 like cl_forwardspeed (capped at max speed)
  int16_t side_move = 0;     // + is right
  int16_t up_move = 0;       // unused on foot (no swimming), kept for the wire format
  uint8_t buttons = 0;       // Button bits
  uint8_t impulse = 0;       // weapon switch
};

}  // namespace game
