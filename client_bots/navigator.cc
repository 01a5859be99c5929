// Bot behaviours: waypoint extraction from the map, perception from snapshots, and steering.
//
// Steering is deliberately simple (a few float operations per command): face the goal, run, strafe now and then, jump now and then. Being stuck is detected from the bot's own
// position feedback (moved < kStuckUnits in kStuckCheckMs while trying to run): the bot jumps and
// picks another goal, which is what keeps a wall-blind walk from pinning itself in a corner.
// Teleporters and jump pads are ordinary waypoints: walking into their trigger is enough.
#include "client_bots/navigator.h"

#include <algorithm>
#include <cmath>

#include "client_bots/identity.h"
#include "maps/map_loader.h"

namespace bots {

namespace {

constexpr float kReachUnits = 48;       // goal reached when this close (horizontally)
constexpr float kStuckUnits = 32;       // moved less than this per check while running: stuck
constexpr uint64_t kStuckCheckMs = 800;
constexpr uint64_t kGoalTimeoutMs = 12000;
constexpr float kFireRangeUnits = 1500;
constexpr float kRadToDeg = 57.2957795f;

float HorizontalDistance(core::Vec3 a, core::Vec3 b) { return std::hypot(a.x - b.x, a.y - b.y); }

// Picks a new goal (or, without a map, a new heading) for roaming.
void PickRoamGoal(const NavMap& nav, uint64_t now_ms, BotBrain* b) {
  b->goal_until_ms = now_ms + kGoalTimeoutMs;
  if (nav.empty()) {
    b->has_goal = false;
    b->heading_deg = static_cast<float>(UnitRandom(&b->rng) * 360.0 - 180.0);
    return;
  }
  // Now and then head for a teleporter or jump pad on purpose.
  const bool mover = !nav.movers.empty() && UnitRandom(&b->rng) < 0.25;
  const std::vector<core::Vec3>& pool = mover ? nav.movers : nav.waypoints;
  b->goal = pool[SplitMix64(&b->rng) % pool.size()];
  b->has_goal = true;
}

// The goal this frame for the bot's role; false = roam.
bool RoleGoal(const NavMap& nav, BotBrain* b, core::Vec3* goal) {
  switch (b->role) {
    case Behavior::kFight:
      if (b->enemy_visible) *goal = b->enemy;
      return b->enemy_visible;
    case Behavior::kItems:
      if (b->item_visible) *goal = b->item;
      return b->item_visible;  // else roam toward map pickups (Steer)
    case Behavior::kHotspot:
      if (nav.empty()) return false;
      *goal = nav.hotspot;
      return true;
    default:
      return false;
  }
}

}  // namespace

NavMap NavMap::Build(const maps::Map& map) {
  NavMap nav;
  for (const maps::SpawnPoint& s : map.spawns) nav.waypoints.push_back(s.origin);
  for (const maps::Pickup& p : map.pickups) {
    nav.pickups.push_back(p.origin);
    nav.waypoints.push_back(p.origin);
  }
  for (const maps::Teleporter& t : map.teleporters) nav.movers.push_back(t.trigger.Center());
  for (const maps::JumpPad& j : map.jump_pads) nav.movers.push_back(j.trigger.Center());
  nav.waypoints.insert(nav.waypoints.end(), nav.movers.begin(), nav.movers.end());
  if (!nav.waypoints.empty()) {
    const core::Vec3 centre = map.bounds.IsEmpty() ? core::Vec3{} : map.bounds.Center();
    nav.hotspot = *std::min_element(nav.waypoints.begin(), nav.waypoints.end(),
                                    [&](core::Vec3 a, core::Vec3 b) {
                                      return HorizontalDistance(a, centre) < HorizontalDistance(b, centre);
                                    });
  }
  return nav;
}

core::Status LoadNavMap(const std::string& path, NavMap* out) {
  maps::Map map;
  core::Status s = maps::LoadMap(path, &map);
  if (!s.ok()) return s;
  *out = NavMap::Build(map);
  return core::Status::OK();
}

Behavior ChooseRole(Behavior behavior, uint64_t seed, int index) {
  if (behavior != Behavior::kMixed) return behavior;
  uint64_t state = seed * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(index);
  const double u = UnitRandom(&state);
  if (u < 0.40) return Behavior::kWander;
  if (u < 0.65) return Behavior::kFight;
  if (u < 0.85) return Behavior::kItems;
  return Behavior::kHotspot;
}

void Perceive(const proto::Snapshot& snap, BotBrain* b) {
  const core::Vec3 me = snap.player.origin;
  float best_enemy = 1e30f, best_item = 1e30f;
  b->enemy_visible = b->item_visible = false;
  for (const proto::EntityState& e : snap.entities) {
    const core::Vec3 d = e.origin - me;
    const float dist2 = core::Dot(d, d);
    if (e.type == proto::EntityType::kPlayer) {
      // Skip ourselves (same id or same place) and the dead.
      if (e.id == b->player_id || dist2 < 1.0f || (e.effects & proto::kEffectDead)) continue;
      if (dist2 < best_enemy) {
        best_enemy = dist2;
        b->enemy = e.origin;
        b->enemy_visible = true;
      }
    } else if (e.type == proto::EntityType::kItem) {
      if (e.effects & (proto::kEffectRespawning | proto::kEffectInvisible)) continue;
      if (dist2 < best_item) {
        best_item = dist2;
        b->item = e.origin;
        b->item_visible = true;
      }
    }
  }
}

void Steer(const proto::PlayerState& me, const NavMap& nav, uint64_t now_ms, BotBrain* b,
           proto::UserCmd* cmd) {
  cmd->buttons = 0;
  cmd->impulse = 0;
  cmd->up_move = 0;
  if (me.flags & proto::kPlayerDead) {  // press fire to respawn, every other frame
    cmd->forward_move = cmd->side_move = 0;
    cmd->buttons = (now_ms / 100) % 2 ? proto::kButtonAttack : 0;
    return;
  }
  // Stuck check: running but not moving means a wall; jump and choose somewhere else.
  bool stuck = false;
  if (now_ms >= b->check_ms + kStuckCheckMs) {
    stuck = b->check_ms != 0 && HorizontalDistance(me.origin, b->check_origin) < kStuckUnits;
    b->check_origin = me.origin;
    b->check_ms = now_ms;
  }
  core::Vec3 goal;
  bool chasing = RoleGoal(nav, b, &goal);
  if (!chasing) {
    const bool reached = b->has_goal && HorizontalDistance(me.origin, b->goal) < kReachUnits;
    if (stuck || reached || now_ms >= b->goal_until_ms) PickRoamGoal(nav, now_ms, b);
    if (b->role == Behavior::kItems && !nav.pickups.empty() && (stuck || reached || !b->has_goal)) {
      b->goal = nav.pickups[SplitMix64(&b->rng) % nav.pickups.size()];
      b->has_goal = true;
    }
    goal = b->goal;
  } else if (stuck) {
    b->heading_deg = static_cast<float>(UnitRandom(&b->rng) * 360.0 - 180.0);
  }
  float yaw = b->heading_deg, pitch = 0;
  if (chasing || b->has_goal) {
    const core::Vec3 d = goal - me.origin;
    const float flat = std::hypot(d.x, d.y);
    if (flat > 1.0f) yaw = std::atan2(d.y, d.x) * kRadToDeg;
    pitch = std::clamp(-std::atan2(d.z, std::max(flat, 1.0f)) * kRadToDeg, -89.0f, 89.0f);
  }
  if (stuck && chasing) yaw = b->heading_deg;  // side-step the obstacle for one check period
  cmd->view_angles = {pitch, yaw, 0};
  cmd->forward_move = 400;
  // Strafe: fighters dodge constantly, others weave a little.
  if (now_ms >= b->strafe_flip_ms) {
    b->strafe_dir = static_cast<int8_t>(-b->strafe_dir);
    b->strafe_flip_ms = now_ms + 300 + SplitMix64(&b->rng) % 900;
  }
  const bool fighting = b->role == Behavior::kFight && b->enemy_visible;
  cmd->side_move = static_cast<int16_t>(b->strafe_dir * (fighting ? 400 : 120));
  if (stuck || UnitRandom(&b->rng) < 0.02) cmd->buttons |= proto::kButtonJump;
  if (fighting && core::Length(b->enemy - me.origin) < kFireRangeUnits) cmd->buttons |= proto::kButtonAttack;
  if (++b->impulse_countdown >= 150) {  // switch weapons every ~5 s at 30 Hz
    b->impulse_countdown = 0;
    cmd->impulse = proto::kImpulseNextWeapon;
  }
}

}  // namespace bots
