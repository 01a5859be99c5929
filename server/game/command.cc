// Player commands (QuakeWorld's SV_RunCmd): validation, the declared region, weapon switch,
// movement in sub-steps with item/trigger touches, then the attack.
//
// RegionOf and ExecuteCommand share MoveCore() and WillFire(), so what a command does is always
// what it declared: the region check (world.cc) verifies it at run time.
#include <algorithm>
#include <cmath>

#include "server/core/check.h"
#include "server/game/command_scope.h"
#include "server/game/game_constants.h"
#include "server/game/items.h"
#include "server/game/pmove.h"
#include "server/game/world.h"

namespace game {

namespace {

// std::remainder(yaw, 360) bit for bit: within [-180, 180] the quotient rounds to 0 (at +-180,
// half-way, to the even 0), so the remainder is the yaw itself, signed zero included.
float YawRemainder(float yaw) {
  return (yaw >= -180.0f && yaw <= 180.0f) ? yaw : std::remainder(yaw, 360.0f);
}

int Substeps(int duration_ms) { return (duration_ms + kMaxSubstepMs - 1) / kMaxSubstepMs; }

// The view angles a command runs with: pitch clamped to +-89 degrees, yaw in [-180, 180], no
// roll. RegionOf aims with these too, so the declared cone is the one the weapon fires.
Vec3 ExecutedViewAngles(const UserCmd& cmd) {
  return {std::clamp(cmd.view_angles.x, -89.0f, 89.0f), YawRemainder(cmd.view_angles.y), 0};
}

int WeaponAfterImpulse(const Edict& p, const UserCmd& cmd) {
  int wanted = -1;
  if (cmd.impulse == kImpulseAxe) wanted = kWeaponAxe;
  if (cmd.impulse == kImpulseShotgun) wanted = kWeaponShotgun;
  if (cmd.impulse == kImpulseRocketLauncher) wanted = kWeaponRocketLauncher;
  if (wanted >= 0 && (p.weapons_owned & (1u << wanted))) return wanted;
  return p.weapon < kWeaponCount ? static_cast<int>(p.weapon) : static_cast<int>(kWeaponAxe);
}

// Whether the command will attack with `weapon`, decided from the state before the command.
bool WillFire(const Edict& p, const UserCmd& cmd, int weapon) {
  return !(p.flags & kFlagDead) && (cmd.buttons & kButtonAttack) &&
         p.attack_cooldown_ms - cmd.duration_ms <= 0 && HasAmmo(p, weapon);
}

// Up to this many trigger volumes of a kind are scanned in a row; more are looked up in their
// grid. A scan of a normal map's few is cheaper than a query: the grid's query cost 2% more
// instructions per replayed command on dm_arena, with its four teleporters and four jump pads
// (docs/game.md, "Movement").
constexpr size_t kTriggerScanMax = 32;

// Calls visit(id) for the trigger volumes whose bounds meet `box` (inclusive), by ascending id
// (index into `volumes`): the map's order, in which the rules take them. `visit` returns false to
// stop. `grid` holds the volumes' bounds, `all` the box of them all; `Volumes` is World's private
// vector of TriggerVolume.
template <class Volumes, class Visit>
void ForEachVolumeMeeting(const Volumes& volumes, const collision::BrushGrid& grid,
                          const Bounds& all, const Bounds& box, Visit&& visit) {
  if (volumes.size() <= kTriggerScanMax) {
    if (!all.Intersects(box)) return;  // most moves are far from every volume
    for (size_t i = 0; i < volumes.size(); ++i) {
      if (volumes[i].bounds.Intersects(box) && !visit(static_cast<uint32_t>(i))) return;
    }
    return;
  }
  static thread_local std::vector<uint32_t> ids;
  ids.clear();
  grid.Query(box, [](uint32_t id) {
    ids.push_back(id);
    return true;
  });
  std::sort(ids.begin(), ids.end());  // the grid lists them cell by cell
  for (uint32_t id : ids) {
    if (!visit(id)) return;
  }
}

bool Touches(const Bounds& box, const std::vector<Bounds>& brushes) {
  for (const Bounds& b : brushes) {
    if (b.Intersects(box)) return true;
  }
  return false;
}

}  // namespace

// Every box the player can occupy during the command: its box grown by a bound on the distance
// it can cover. That is the speed bound x duration, and in Z also the per sub-step stair lifts
// and ground snaps: those traces are vertical (pmove.cc), so they move nothing in X or Y; every
// other trace runs along the velocity, whose length the speed bound caps (clipping against a
// plane never lengthens it), so a path in X/Y is no longer than speed x time. A pad sets the
// velocity after a sub-step's move, so its speed counts only for a command of two or more.
Bounds World::MoveCore(const Edict& p, const UserCmd& cmd) const {
  const float t = cmd.duration_ms * 0.001f;
  const int n = Substeps(cmd.duration_ms);
  const float pad = n > 1 ? max_pad_speed_ : 0.0f;
  const float base = std::max({Length(p.velocity), pad, kMaxSpeed});
  float vmax = base + kJumpSpeed + (kAccelerate * kMaxSpeed + kGravity) * t + kAirWishSpeedCap * n;
  vmax = std::min(vmax, kMaxVelocity * 1.7321f);
  const float flat = vmax * t + 2;
  const float lifts = n * (kStepSize + 4);
  return Bounds::At(p.origin, kPlayerMins, kPlayerMaxs).Expanded(Vec3{flat, flat, flat + lifts});
}

Region World::RegionOf(EntityId player, const UserCmd& cmd) const {
  Region r;
  if (!IsPlayerId(player)) return r;
  const Edict& p = objects_[player].edict;
  if (!(p.flags & kFlagConnected) || cmd.duration_ms < 1 || cmd.duration_ms > kMaxCmdMs) return r;
  if (p.flags & kFlagDead) {
    r.move_box = Bounds::At(p.origin, kPlayerMins, kPlayerMaxs).Expanded(kMaxEntitySize);
    return r;
  }
  const Bounds core = MoveCore(p, cmd);
  const int weapon = WeaponAfterImpulse(p, cmd);
  const bool fire = WillFire(p, cmd, weapon);
  const float melee = (fire && weapon == kWeaponAxe) ? kMeleeRange : 0;
  r.move_box = core.Expanded(melee).Expanded(kMaxEntitySize);
  ForEachVolumeMeeting(teleporters_, teleporter_grid_, teleporters_bounds_, core, [&](uint32_t i) {
    if (r.teleport_count == kMaxTeleportBoxes) {
      r.whole_map = true;
      return false;
    }
    r.teleport_boxes[r.teleport_count++] = Bounds::At(teleporters_[i].dest_origin, kPlayerMins,
                                                      kPlayerMaxs)
                                               .Expanded(kTelefragMargin)
                                               .Expanded(kMaxEntitySize);
    return true;
  });
  if (!fire || (weapon != kWeaponRocketLauncher && weapon != kWeaponShotgun)) return r;
  // Every eye the player can have after the move: `core` holds every box it can occupy, so
  // its origin stays within `core` shrunk by the player's box.
  const Vec3 eye{0, 0, kEyeHeight};
  const Bounds eyes{core.mins - kPlayerMins + eye, core.maxs - kPlayerMaxs + eye};
  const Vec3 margin{kRegionMargin, kRegionMargin, kRegionMargin};
  Vec3 forward, right, up;
  AngleVectors(ExecutedViewAngles(cmd), &forward, &right, &up);
  if (weapon == kWeaponRocketLauncher) {
    // The rocket leaves an eye along the aim and flies at most kRocketLaunchOffset +
    // kRocketLaunchFlight units inside the command, so it explodes (if it does) in the eyes' box
    // swept that far along the aim; the splash reaches kRocketSplashRadius around that point.
    Bounds flight = eyes;
    flight.Add(Bounds{eyes.mins + forward * (kRocketLaunchOffset + kRocketLaunchFlight),
                      eyes.maxs + forward * (kRocketLaunchOffset + kRocketLaunchFlight)});
    r.action = ActionKind::kExpandedBox;
    r.action_box = flight.Expanded(kRocketSplashRadius).Expanded(kMaxEntitySize + margin);
  } else {  // the shotgun
    // The pellets leave from the eye (inside `core`) within a square cone of half-width
    // kShotgunSpread around the aim; the box is `core` swept by the cone's corner rays.
    // If one wall face blocks every pellet from anywhere in `core` (the map is static, so this
    // needs no lock), the box ends at that face; else it runs to the end of the world.
    Vec3 corners[4];
    int n = 0;
    for (float a : {-kShotgunSpread, kShotgunSpread}) {
      for (float b : {-kShotgunSpread, kShotgunSpread}) {
        corners[n++] = (forward + right * a + up * b) * hitscan_range_;
      }
    }
    r.action = ActionKind::kDirectionalBox;
    const Vec3 grow = kMaxEntitySize + margin;
    Bounds blocked;
    if (collision_.BoundRays(eyes, forward * hitscan_range_, corners, &blocked)) {
      r.action_box = blocked.Expanded(grow);
    } else {
      Bounds cone{{0, 0, 0}, {0, 0, 0}};
      for (const Vec3& c : corners) cone.Add(c);
      r.action_box = Bounds{core.mins + cone.mins, core.maxs + cone.maxs}.Expanded(grow);
    }
    // Every pellet path is an eye plus a convex mix of the corner rays, cut short: it lies in
    // the eyes' box swept by the cone. Grown as the box is, any entity a pellet's query returns
    // (within kSegmentQueryPad of the path, at most kMaxEntitySize across) lies inside.
    const Vec3 sweep[5] = {Vec3{}, corners[0], corners[1], corners[2], corners[3]};
    r.action_wedge = core::ConvexXY::SweptRect(eyes.Expanded(grow), sweep);
  }
  return r;
}

core::Status World::ExecuteCommand(EntityId player, const UserCmd& cmd) {
  WrittenScope written(this);
  if (!IsPlayerId(player) || !(objects_[player].edict.flags & kFlagConnected)) {
    return core::Status::InvalidArgument("command: player " + std::to_string(player) +
                                         " is not connected");
  }
  if (cmd.duration_ms < 1 || cmd.duration_ms > kMaxCmdMs) {
    return core::Status::InvalidArgument("command: duration_ms " +
                                         std::to_string(cmd.duration_ms) + " outside 1..250");
  }
  if (!IsFinite(cmd.view_angles)) {
    return core::Status::InvalidArgument("command: view angles are not finite");
  }
  if (cmd.sequence <= objects_[player].edict.last_cmd_sequence) {
    return core::Status::Refused("command: sequence " + std::to_string(cmd.sequence) +
                                 " already applied");
  }
  if (!region_check_) return ApplyCommand(player, cmd);
  CommandScope scope;
  scope.world = this;
  scope.player = player;
  scope.sequence = cmd.sequence;
  scope.region = RegionOf(player, cmd);
  ScopedCommand declared(&scope);
  return ApplyCommand(player, cmd);
}

// ExecuteCommand calls this directly, or inside a declared CommandScope under the region check;
// a split rather than an optional scope, which gcc 12 zeroes (608 bytes) even when it is empty.
core::Status World::ApplyCommand(EntityId player, const UserCmd& cmd) {
  Edict& p = Mut(player);
  p.last_cmd_sequence = cmd.sequence;
  p.commands_executed++;
  p.view_angles = ExecutedViewAngles(cmd);
  if (p.flags & kFlagDead) return core::Status::OK();

  const int weapon = WeaponAfterImpulse(p, cmd);
  p.weapon = static_cast<uint8_t>(weapon);
  const bool fire = WillFire(p, cmd, weapon);
  const bool teleported = RunMovement(player, cmd);
  p.attack_cooldown_ms -= cmd.duration_ms;
  if (fire && !teleported) {  // a teleport ends the command: no attack from the destination
    p.attack_cooldown_ms += kCooldownMs[weapon];
    Fire(player, weapon);
  } else if (p.attack_cooldown_ms < 0) {
    p.attack_cooldown_ms = 0;
  }
  return core::Status::OK();
}

// Gathers the entities the move can meet, runs the sub-steps and touches, writes the result.
// Returns true if the player went through a teleporter.
bool World::RunMovement(EntityId player, const UserCmd& cmd) {
  static thread_local std::vector<EntityId> near;
  static thread_local ClipBoxes solids;
  static thread_local std::vector<EntityId> items;
  const Edict& p = Get(player);
  // The memo's line may sit in another worker's cache: fetch it while the query runs.
  MapTraceMemo* memo = &map_trace_memos_[static_cast<size_t>(player)];
  __builtin_prefetch(memo);
  // In the tree's order: the clip's result does not depend on its boxes' order (MoveClipper),
  // and the few items are put in id order, in which TouchItems takes them.
  QueryBoxUnordered(MoveCore(p, cmd), &near);
  solids.clear();
  items.clear();
  for (EntityId id : near) {
    if (id == player) continue;
    const Edict& e = Get(id);
    if (e.kind == EntityKind::kPlayer && (e.flags & kFlagSolid)) {
      solids.push_back(id, EdictBox(e));
    } else if (e.kind == EntityKind::kPickup && (e.flags & kFlagAvailable)) {
      items.push_back(id);
    }
  }
  std::sort(items.begin(), items.end());
  MoveClipper clip(collision_, solids, memo);
  PlayerMoveState s{p.origin, p.velocity, (p.flags & kFlagOnGround) != 0,
                    (p.flags & kFlagJumpHeld) != 0};
  const int n = Substeps(cmd.duration_ms);
  MoveInput in;
  in.view_angles = cmd.view_angles;
  in.forward_move = std::clamp<float>(cmd.forward_move, -kMaxMoveInput, kMaxMoveInput);
  in.side_move = std::clamp<float>(cmd.side_move, -kMaxMoveInput, kMaxMoveInput);
  in.jump = (cmd.buttons & kButtonJump) != 0;
  in.frametime_s = cmd.duration_ms * 0.001f / static_cast<float>(n);
  const TriggerVolume* teleporter = nullptr;
  for (int step = 0; step < n && teleporter == nullptr; ++step) {
    PlayerMove(clip, in, &s);
    const Bounds box = Bounds::At(s.origin, kPlayerMins, kPlayerMaxs);
    TouchItems(player, box, &items);
    ForEachVolumeMeeting(jump_pads_, jump_pad_grid_, jump_pads_bounds_, box, [&](uint32_t i) {
      if (Touches(box, jump_pads_[i].brushes)) {
        s.velocity = jump_pads_[i].velocity;
        s.on_ground = false;
      }
      return true;
    });
    ForEachVolumeMeeting(teleporters_, teleporter_grid_, teleporters_bounds_, box, [&](uint32_t i) {
      if (!Touches(box, teleporters_[i].brushes)) return true;
      teleporter = &teleporters_[i];
      return false;
    });
  }
  Edict& m = Mut(player);
  m.origin = s.origin;
  m.velocity = s.velocity;
  m.flags = (m.flags & ~(kFlagOnGround | kFlagJumpHeld)) | (s.on_ground ? kFlagOnGround : 0u) |
            (s.jump_held ? kFlagJumpHeld : 0u);
  if (teleporter != nullptr) {
    Teleport(player, *teleporter);
    return true;
  }
  LinkEdict(player);
  return false;
}

// Gives the player every available item its box touches; a taken item's id in *items becomes 0.
void World::TouchItems(EntityId player, const Bounds& box, std::vector<EntityId>* items) {
  for (EntityId& id : *items) {
    if (id == 0) continue;  // taken earlier in this command
    const Edict& item = Get(id);
    if (!(item.flags & kFlagAvailable) || !box.Intersects(EdictBox(item))) continue;
    if (!ApplyItem(item.item, &Mut(player))) continue;
    Edict& taken = Mut(id);
    taken.flags &= ~kFlagAvailable;
    taken.next_tick = globals().tick + TicksFor(ItemRespawnMs(taken.item));
    UnlinkEdict(id);
    id = 0;
  }
}

// Moves the player to the destination facing its angle at kTeleportExitSpeed; whoever stands
// there dies (telefrag). The rest of the command's movement is dropped.
void World::Teleport(EntityId player, const TriggerVolume& tp) {
  Edict& p = Mut(player);
  p.origin = tp.dest_origin;
  p.view_angles = {0, tp.dest_yaw, 0};
  Vec3 forward, right, up;
  AngleVectors(p.view_angles, &forward, &right, &up);
  p.velocity = forward * kTeleportExitSpeed;
  p.flags &= ~kFlagOnGround;
  Telefrag(player, Bounds::At(p.origin, kPlayerMins, kPlayerMaxs));
  LinkEdict(player);
}

}  // namespace game
