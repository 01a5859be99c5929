// Gameplay constants: QuakeWorld movement (pmove.c's movevars), weapons, items and timers.
// docs/game.md explains each choice.
#pragma once

#include <cstdint>

#include "server/core/vec3.h"

namespace game {

// Movement (units, seconds).
inline constexpr core::Vec3 kPlayerMins{-16, -16, -24};
inline constexpr core::Vec3 kPlayerMaxs{16, 16, 32};
inline constexpr float kEyeHeight = 22;
inline constexpr float kGravity = 800;
inline constexpr float kJumpSpeed = 270;
inline constexpr float kMaxSpeed = 320;
inline constexpr float kAccelerate = 10;
inline constexpr float kAirAccelerate = 10;     // QuakeWorld uses movevars.accelerate in the air...
inline constexpr float kAirWishSpeedCap = 30;   // ...with the wished speed capped at 30
inline constexpr float kFriction = 4;
inline constexpr float kStopSpeed = 100;
inline constexpr float kStepSize = 18;
inline constexpr float kMaxVelocity = 2000;     // per component (sv_maxvelocity)
inline constexpr float kMinGroundNormalZ = 0.7f;
inline constexpr float kGroundBreakSpeedZ = 180;  // rising faster than this: not on ground
inline constexpr float kMaxMoveInput = 400;     // cl_forwardspeed
inline constexpr int kMaxCmdMs = 250;
inline constexpr int kMaxSubstepMs = 50;        // longer commands are split into sub-steps
inline constexpr float kTeleportExitSpeed = 300;
inline constexpr float kTelefragMargin = 1;     // players within the destination box + this die

// Region bookkeeping: the largest size of any entity's box on each axis (players and items; a
// rocket is a point). Every entity touched by a command intersects one of the command's query
// boxes, so it lies inside that box grown by this. Checked against the boxes below.
inline constexpr core::Vec3 kMaxEntitySize{32, 32, 56};
// A pellet's entity query returns the entities whose boxes come within this many units of its
// path (World::QuerySegment), so float rounding never drops one the exact trace would hit.
inline constexpr float kSegmentQueryPad = 1;
// The regions of long-range actions are grown by this beyond what their geometry needs, for
// float rounding along a long aim (and more than kSegmentQueryPad, so every entity a pellet's
// query returns lies inside).
inline constexpr float kRegionMargin = 2;
// How far a pellet flies beyond the map's diagonal.
inline constexpr float kHitscanRangeMargin = 64;

// Weapons.
inline constexpr float kMeleeRange = 64;
inline constexpr int kMeleeDamage = 20;
inline constexpr int kShotgunPellets = 6;
inline constexpr int kShotgunPelletDamage = 4;
inline constexpr float kShotgunSpread = 0.04f;
inline constexpr float kRocketSpeed = 1000;
inline constexpr float kRocketLaunchOffset = 8;   // from the eye along the aim
inline constexpr float kRocketLaunchFlight = 50;  // flown inside the firing command
inline constexpr int kRocketDirectDamage = 100;
inline constexpr int kRocketSplashDamage = 120;
inline constexpr float kRocketSplashRadius = 120;
inline constexpr int kRocketLifetimeMs = 5000;
inline constexpr float kKnockbackScale = 8;       // velocity += dir * damage * this
inline constexpr int kCooldownMs[3] = {500, 500, 800};  // axe, shotgun, rocket launcher

// Player stats.
inline constexpr int kSpawnHealth = 100;
inline constexpr int kMaxHealth = 100;
inline constexpr int kMegaMaxHealth = 200;
inline constexpr int kSpawnShells = 25;
inline constexpr int kMaxShells = 100;
inline constexpr int kMaxRockets = 100;
inline constexpr int kRespawnDelayMs = 2000;

// Items: amounts and respawn times.
inline constexpr int kHealthAmount = 25;
inline constexpr int kMegaHealthAmount = 100;
inline constexpr int kShellsAmount = 20;
inline constexpr int kRocketsAmount = 5;
inline constexpr int kHealthRespawnMs = 20000;
inline constexpr int kArmorRespawnMs = 20000;
inline constexpr int kWeaponRespawnMs = 30000;
inline constexpr int kAmmoRespawnMs = 30000;
inline constexpr core::Vec3 kItemMins{-16, -16, 0};
inline constexpr core::Vec3 kItemMaxs{16, 16, 56};

// Every entity box fits kMaxEntitySize, which the command regions rely on.
constexpr bool FitsMaxEntitySize(core::Vec3 mins, core::Vec3 maxs) {
  return maxs.x - mins.x <= kMaxEntitySize.x && maxs.y - mins.y <= kMaxEntitySize.y &&
         maxs.z - mins.z <= kMaxEntitySize.z;
}
static_assert(FitsMaxEntitySize(kPlayerMins, kPlayerMaxs), "a player box exceeds kMaxEntitySize");
static_assert(FitsMaxEntitySize(kItemMins, kItemMaxs), "an item box exceeds kMaxEntitySize");

}  // namespace game
