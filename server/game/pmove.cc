// Player movement after QuakeWorld's pmove.c, written against MoveClipper sweeps. Order per
// sub-step (PlayerMove in pmove.c): categorize, jump, friction, accelerate + gravity, slide/step
// move, categorize again.
#include "server/game/pmove.h"

#include <algorithm>
#include <cmath>

#include "server/game/game_constants.h"

namespace game {

namespace {

constexpr int kMaxBumps = 4;
constexpr int kMaxClipPlanes = 5;
constexpr float kStopEpsilon = 0.1f;
constexpr float kDegToRad = 3.14159265358979323846f / 180.0f;
// 12.6 radians: below the first angle (17.3 radians) on which glibc's sincosf variants disagree
// (docs/game.md, "Determinism").
constexpr float kReduceAngleBeyondDeg = 720.0f;

// The angle to take sin and cos of: beyond +-kReduceAngleBeyondDeg its remainder in [-180, 180]
// (exact), so that the CPU's libm variant cannot change the world; within it the angle itself.
float ReduceLargeAngle(float degrees) {
  return std::fabs(degrees) > kReduceAngleBeyondDeg ? std::remainder(degrees, 360.0f) : degrees;
}

// Removes the part of `in` going into the plane (PM_ClipVelocity with overbounce 1).
Vec3 ClipVelocity(Vec3 in, Vec3 normal) {
  const float backoff = Dot(in, normal);
  Vec3 out = in - normal * backoff;
  for (int i = 0; i < 3; ++i) {
    if (out[i] > -kStopEpsilon && out[i] < kStopEpsilon) out[i] = 0;
  }
  return out;
}

// Slides along up to kMaxBumps surfaces for `time_s` (PM_FlyMove). `first`, if given, is the
// result of the first bump's trace (s->origin to s->origin + s->velocity * time_s), which the
// caller has already run.
void FlyMove(const MoveClipper& clip, float time_s, PlayerMoveState* s,
             const MoveTrace* first = nullptr) {
  Vec3 planes[kMaxClipPlanes];
  int num_planes = 0;
  const Vec3 primal_velocity = s->velocity;
  Vec3 original_velocity = s->velocity;
  float time_left = time_s;
  for (int bump = 0; bump < kMaxBumps; ++bump) {
    MoveTrace t;
    if (bump == 0 && first != nullptr) {
      t = *first;
    } else {
      const Vec3 end = s->origin + s->velocity * time_left;
      t = clip.Trace(s->origin, end, kPlayerMins, kPlayerMaxs);
    }
    if (t.start_solid || t.all_solid) {  // trapped: stay put
      s->velocity = Vec3{};
      return;
    }
    if (t.fraction > 0) {
      s->origin = t.end;
      original_velocity = s->velocity;
      num_planes = 0;
    }
    if (t.fraction == 1.0f) return;
    time_left -= time_left * t.fraction;
    if (num_planes >= kMaxClipPlanes) {
      s->velocity = Vec3{};
      return;
    }
    planes[num_planes++] = t.normal;
    // Find a velocity along every clip plane.
    int i = 0;
    for (; i < num_planes; ++i) {
      s->velocity = ClipVelocity(original_velocity, planes[i]);
      int j = 0;
      for (; j < num_planes; ++j) {
        if (j != i && Dot(s->velocity, planes[j]) < 0) break;
      }
      if (j == num_planes) break;
    }
    if (i == num_planes) {  // go along the crease of two planes, or stop in a corner
      if (num_planes != 2) {
        s->velocity = Vec3{};
        return;
      }
      const Vec3 dir = Cross(planes[0], planes[1]);
      s->velocity = dir * Dot(dir, s->velocity);
    }
    // Turned against the original direction: stop to avoid oscillating in corners.
    if (Dot(s->velocity, primal_velocity) <= 0) {
      s->velocity = Vec3{};
      return;
    }
  }
}

// Ground move with stair stepping (PM_GroundMove): try the plain move; if blocked, compare a
// slide along the ground with a slide lifted by kStepSize and pressed back down.
void GroundMove(const MoveClipper& clip, float time_s, PlayerMoveState* s) {
  s->velocity.z = 0;
  if (s->velocity.x == 0 && s->velocity.y == 0) return;
  Vec3 dest = s->origin + s->velocity * time_s;
  dest.z = s->origin.z;
  MoveTrace t = clip.Trace(s->origin, dest, kPlayerMins, kPlayerMaxs);
  if (t.fraction == 1.0f) {
    s->origin = t.end;
    return;
  }
  const Vec3 original = s->origin;
  const Vec3 original_velocity = s->velocity;
  // The slide's first trace is the one just run: with no vertical velocity, origin + velocity *
  // time_s is `dest` to the bit.
  FlyMove(clip, time_s, s, &t);
  const Vec3 down = s->origin;
  const Vec3 down_velocity = s->velocity;

  s->origin = original;
  s->velocity = original_velocity;
  t = clip.Trace(s->origin, s->origin + Vec3{0, 0, kStepSize}, kPlayerMins, kPlayerMaxs);
  if (!t.start_solid && !t.all_solid) s->origin = t.end;
  FlyMove(clip, time_s, s);
  t = clip.Trace(s->origin, s->origin - Vec3{0, 0, kStepSize}, kPlayerMins, kPlayerMaxs);
  bool use_down = t.normal.z < kMinGroundNormalZ;
  if (!use_down) {
    if (!t.start_solid && !t.all_solid) s->origin = t.end;
    const Vec3 up = s->origin;
    const float down_dist = (down.x - original.x) * (down.x - original.x) +
                            (down.y - original.y) * (down.y - original.y);
    const float up_dist =
        (up.x - original.x) * (up.x - original.x) + (up.y - original.y) * (up.y - original.y);
    use_down = down_dist > up_dist;
  }
  if (use_down) {
    s->origin = down;
    s->velocity = down_velocity;
  } else {
    s->velocity.z = down_velocity.z;
  }
}

// PM_Friction: on the ground, speed drops by max(speed, stopspeed) * friction * dt.
void Friction(float time_s, PlayerMoveState* s) {
  const float speed = Length(s->velocity);
  if (speed < 1) {
    s->velocity.x = 0;
    s->velocity.y = 0;
    return;
  }
  if (!s->on_ground) return;
  const float control = speed < kStopSpeed ? kStopSpeed : speed;
  float new_speed = speed - control * kFriction * time_s;
  if (new_speed < 0) new_speed = 0;
  s->velocity *= new_speed / speed;
}

// PM_Accelerate: gain speed along wishdir up to wishspeed.
void Accelerate(Vec3 wishdir, float wishspeed, float accel, float time_s, Vec3* velocity) {
  const float add = wishspeed - Dot(*velocity, wishdir);
  if (add <= 0) return;
  const float accel_speed = std::min(accel * time_s * wishspeed, add);
  *velocity += wishdir * accel_speed;
}

// PM_AirAccelerate: as Accelerate, but the wished speed is capped at kAirWishSpeedCap.
void AirAccelerate(Vec3 wishdir, float wishspeed, float time_s, Vec3* velocity) {
  const float wishspd = std::min(wishspeed, kAirWishSpeedCap);
  const float add = wishspd - Dot(*velocity, wishdir);
  if (add <= 0) return;
  const float accel_speed = std::min(kAirAccelerate * wishspeed * time_s, add);
  *velocity += wishdir * accel_speed;
}

// Sets the ground flag from a 1-unit trace down and snaps onto the ground (PM_CategorizePosition).
void CategorizePosition(const MoveClipper& clip, PlayerMoveState* s) {
  if (s->velocity.z > kGroundBreakSpeedZ) {
    s->on_ground = false;
    return;
  }
  MoveTrace t = clip.ProbeGround(s->origin);
  s->on_ground = t.hit() && t.normal.z >= kMinGroundNormalZ;
  if (s->on_ground && !t.start_solid && !t.all_solid) s->origin = t.end;
}

}  // namespace

void ClampVelocity(Vec3* v) {
  for (int i = 0; i < 3; ++i) (*v)[i] = std::clamp((*v)[i], -kMaxVelocity, kMaxVelocity);
}

void AngleVectors(Vec3 angles, Vec3* forward, Vec3* right, Vec3* up) {
  const float yaw = ReduceLargeAngle(angles.y) * kDegToRad;
  const float pitch = ReduceLargeAngle(angles.x) * kDegToRad;
  const float roll = ReduceLargeAngle(angles.z) * kDegToRad;
  const float sy = std::sin(yaw), cy = std::cos(yaw);
  const float sp = std::sin(pitch), cp = std::cos(pitch);
  // No roll (every movement and weapon call): sin and cos of +-0 are +-0 and 1 exactly, spared
  // the library call.
  const float sr = roll == 0 ? roll : std::sin(roll), cr = roll == 0 ? 1.0f : std::cos(roll);
  *forward = {cp * cy, cp * sy, -sp};
  *right = {-sr * sp * cy + cr * sy, -sr * sp * sy - cr * cy, -sr * cp};
  *up = {cr * sp * cy + sr * sy, cr * sp * sy - sr * cy, cr * cp};
}

void PlayerMove(const MoveClipper& clip, const MoveInput& in, PlayerMoveState* s) {
  const float dt = in.frametime_s;
  CategorizePosition(clip, s);
  if (in.jump) {
    if (s->on_ground && !s->jump_held) {  // a new press on the ground (no auto-bunnyhop)
      s->on_ground = false;
      s->velocity.z += kJumpSpeed;
      s->jump_held = true;
    }
  } else {
    s->jump_held = false;
  }
  Friction(dt, s);

  Vec3 forward, right, up;
  AngleVectors(in.view_angles, &forward, &right, &up);
  forward.z = 0;
  right.z = 0;
  forward = Normalize(forward);
  right = Normalize(right);
  Vec3 wishvel = forward * in.forward_move + right * in.side_move;
  wishvel.z = 0;
  float wishspeed = Length(wishvel);
  const Vec3 wishdir = Normalize(wishvel);
  if (wishspeed > kMaxSpeed) wishspeed = kMaxSpeed;

  if (s->on_ground) {
    s->velocity.z = 0;
    Accelerate(wishdir, wishspeed, kAccelerate, dt, &s->velocity);
    ClampVelocity(&s->velocity);
    GroundMove(clip, dt, s);
  } else {
    AirAccelerate(wishdir, wishspeed, dt, &s->velocity);
    s->velocity.z -= kGravity * dt;
    ClampVelocity(&s->velocity);
    FlyMove(clip, dt, s);
  }
  CategorizePosition(clip, s);
}

}  // namespace game
