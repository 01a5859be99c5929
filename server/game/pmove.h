// PlayerMove: QuakeWorld's player movement (pmove.c) for one sub-step: ground check, jump,
// friction, ground/air acceleration, gravity, slide move with up to 4 clip planes and step-up.
// A pure function of its inputs and the clipper's geometry; runs on the command's thread.
#pragma once

#include "server/core/vec3.h"
#include "server/game/move_clip.h"

namespace game {

struct PlayerMoveState {
  Vec3 origin;
  Vec3 velocity;
  bool on_ground = false;
  bool jump_held = false;  // jump was down at the end of the previous sub-step
};

struct MoveInput {
  Vec3 view_angles;      // degrees
  float forward_move = 0;  // units/s, clamped to +-kMaxMoveInput by the caller
  float side_move = 0;
  bool jump = false;
  float frametime_s = 0;   // (0, kMaxSubstepMs / 1000]
};

// Advances `s` by one sub-step.
void PlayerMove(const MoveClipper& clip, const MoveInput& in, PlayerMoveState* s);

// Clamps each velocity component to +-kMaxVelocity (sv_maxvelocity). Movement and knockback.
void ClampVelocity(Vec3* v);

// Quake's AngleVectors: forward, right, up from pitch/yaw/roll in degrees. The same vectors on
// any CPU with the same libm, whichever sincosf variant it picks: an angle beyond +-720 degrees is
// reduced to [-180, 180] first (docs/game.md, "Determinism").
void AngleVectors(Vec3 angles, Vec3* forward, Vec3* right, Vec3* up);

}  // namespace game
