// Weapons and damage: the axe (short trace), the shotgun (hitscan pellets), the rocket launcher
// (a projectile entity the world phase flies on), armor, death, frags and telefrags.
#include <algorithm>
#include <cmath>

#include "server/core/check.h"
#include "server/game/game_constants.h"
#include "server/game/pmove.h"
#include "server/game/rng.h"
#include "server/game/world.h"

namespace game {

namespace {

// Distance from p to the closest point of box.
float DistanceToBox(Vec3 p, const Bounds& box) {
  Vec3 d;
  for (int i = 0; i < 3; ++i) {
    d[i] = std::max({box.mins[i] - p[i], 0.0f, p[i] - box.maxs[i]});
  }
  return Length(d);
}

}  // namespace

void World::Fire(EntityId player, int weapon) {
  Edict& p = Mut(player);
  if (weapon == kWeaponShotgun) p.ammo_shells--;
  if (weapon == kWeaponRocketLauncher) p.ammo_rockets--;
  switch (weapon) {
    case kWeaponAxe: FireMelee(player); break;
    case kWeaponShotgun: FireShotgun(player); break;
    case kWeaponRocketLauncher: FireRocket(player); break;
    default: break;
  }
  Edict& after = Mut(player);
  if ((after.flags & kFlagDead) || HasAmmo(after, weapon)) return;
  // Out of ammo: switch to the best weapon that can still fire (Quake's W_BestWeapon).
  if ((after.weapons_owned & (1u << kWeaponRocketLauncher)) &&
      HasAmmo(after, kWeaponRocketLauncher)) {
    after.weapon = kWeaponRocketLauncher;
  } else if ((after.weapons_owned & (1u << kWeaponShotgun)) && HasAmmo(after, kWeaponShotgun)) {
    after.weapon = kWeaponShotgun;
  } else {
    after.weapon = kWeaponAxe;
  }
}

EntityId World::RayHitEntity(Vec3 start, Vec3 end, EntityId skip, float* fraction) const {
  static thread_local std::vector<EntityId> near;
  QueryBox(Bounds::Spanning(start, end), &near);
  return NearestHit(start, end, skip, near, fraction);
}

// The tree-box test keeps exactly the candidates a query of the segment's own box would return
// (linked boxes that intersect it), so the result does not depend on how large the query was.
EntityId World::NearestHit(Vec3 start, Vec3 end, EntityId skip,
                           const std::vector<EntityId>& candidates, float* fraction) const {
  const Bounds segment = Bounds::Spanning(start, end);
  EntityId best = -1;
  float best_f = 2;
  for (EntityId id : candidates) {
    if (id == skip || !tree_->BoxOf(id).Intersects(segment)) continue;
    const Edict& e = Get(id);
    if (e.kind != EntityKind::kPlayer || !(e.flags & kFlagSolid)) continue;
    float f;
    Vec3 n;
    bool inside;
    if (!SweepBoxVsBox(start, end, Vec3{}, Vec3{}, EdictBox(e), &f, &n, &inside)) continue;
    if (f < best_f) {
      best_f = f;
      best = id;
    }
  }
  *fraction = best_f;
  return best;
}

void World::FireMelee(EntityId player) {
  const Edict& p = Get(player);
  Vec3 forward, right, up;
  AngleVectors(p.view_angles, &forward, &right, &up);
  const Vec3 start = EdictEye(p);
  Vec3 end = start + forward * kMeleeRange;
  collision::Trace wt = collision_.TraceBox(start, end, Vec3{}, Vec3{});
  if (wt.hit()) end = wt.end;
  float f;
  EntityId victim = RayHitEntity(start, end, player, &f);
  if (victim > 0) Damage(victim, player, kMeleeDamage, forward);
}

// Pellets spread like Quake's FireBullets: aim + crandom * spread * (right, up), each traced
// against the map first and then against players up to the wall. Damage per victim is summed
// and applied once (Quake's multi-damage), in victim id order. Nothing changes until the damage.
// Each pellet queries only the tree nodes along its own path: a query of the box around a
// diagonal path would read (and need locks on) the whole rectangle around it.
void World::FireShotgun(EntityId player) {
  static_assert(kShotgunPellets <= areanode::AreanodeTree::kMaxSegments, "one walk for all pellets");
  static thread_local std::vector<EntityId> near[kShotgunPellets];
  Edict& p = Mut(player);
  Vec3 forward, right, up;
  AngleVectors(p.view_angles, &forward, &right, &up);
  const Vec3 start = EdictEye(p);
  Vec3 ends[kShotgunPellets];
  for (int i = 0; i < kShotgunPellets; ++i) {
    const float a = RandomSigned(&p.rng) * kShotgunSpread;
    const float b = RandomSigned(&p.rng) * kShotgunSpread;
    const Vec3 dir = forward + right * a + up * b;
    ends[i] = start + dir * hitscan_range_;
    collision::Trace wt = collision_.TraceBox(start, ends[i], Vec3{}, Vec3{});
    if (wt.hit()) ends[i] = wt.end;
  }
  std::pair<EntityId, int> hits[kShotgunPellets];
  int num_hits = 0;
  // Each pellet's QuerySegment, in one walk of the tree (nothing changes before the damage).
  QuerySegments(start, ends, kShotgunPellets, near);
  for (int i = 0; i < kShotgunPellets; ++i) {
    float f;
    const EntityId victim = NearestHit(start, ends[i], player, near[i], &f);
    if (victim <= 0) continue;
    int k = 0;
    while (k < num_hits && hits[k].first != victim) ++k;
    if (k == num_hits) hits[num_hits++] = {victim, 0};
    hits[k].second += kShotgunPelletDamage;
  }
  for (int i = 1; i < num_hits; ++i) {  // insertion sort by id (at most kShotgunPellets)
    for (int j = i; j > 0 && hits[j].first < hits[j - 1].first; --j) std::swap(hits[j], hits[j - 1]);
  }
  for (int k = 0; k < num_hits; ++k) Damage(hits[k].first, player, hits[k].second, forward);
}

// Takes the first free rocket slot of the player (none free: the shot is lost), launches the
// rocket from just in front of the eye and flies its first kRocketLaunchFlight units now.
void World::FireRocket(EntityId player) {
  EntityId slot = -1;
  for (int k = 0; k < kRocketsPerPlayer; ++k) {
    if (Get(RocketSlot(player, k)).kind == EntityKind::kFree) {
      slot = RocketSlot(player, k);
      break;
    }
  }
  if (slot < 0) return;
  const Edict& p = Get(player);
  Vec3 forward, right, up;
  AngleVectors(p.view_angles, &forward, &right, &up);
  const Vec3 eye = EdictEye(p);
  Vec3 origin = eye + forward * kRocketLaunchOffset;
  collision::Trace wt = collision_.TraceBox(eye, origin, Vec3{}, Vec3{});
  if (wt.hit()) origin = wt.end;
  Edict& r = Mut(slot);
  r.kind = EntityKind::kRocket;
  r.flags = kFlagInUse;
  r.owner = player;
  r.origin = origin;
  r.velocity = forward * kRocketSpeed;
  r.mins = Vec3{};
  r.maxs = Vec3{};
  r.spawn_tick = globals().tick;
  r.next_tick = globals().tick + TicksFor(kRocketLifetimeMs);
  if (wt.hit()) {
    LinkEdict(slot);
    Explode(slot, origin, -1);
    return;
  }
  LinkEdict(slot);
  FlyRocket(slot, kRocketLaunchFlight);
}

bool World::FlyRocket(EntityId id, float distance) {
  const Edict& r = Get(id);
  const Vec3 start = r.origin;
  Vec3 end = start + Normalize(r.velocity) * distance;
  collision::Trace wt = collision_.TraceBox(start, end, Vec3{}, Vec3{});
  const Vec3 wall_end = wt.hit() ? wt.end : end;
  float f;
  EntityId victim = RayHitEntity(start, wall_end, r.owner, &f);
  if (victim > 0) {
    Explode(id, start + (wall_end - start) * f, victim);
    return true;
  }
  if (wt.hit()) {
    Explode(id, wt.end, -1);
    return true;
  }
  Edict& m = Mut(id);
  m.origin = end;
  LinkEdict(id);
  return false;
}

// Direct hit damage, then splash to every other player in reach and line of sight, falling off
// linearly to zero at kRocketSplashRadius (half for the shooter). The rocket becomes an
// explosion that the world phase removes after one tick.
void World::Explode(EntityId rocket, Vec3 at, EntityId direct_hit) {
  static thread_local std::vector<EntityId> near;
  const EntityId owner = Get(rocket).owner;
  Vec3 dir_out = Normalize(Get(rocket).velocity);
  if (direct_hit > 0) Damage(direct_hit, owner, kRocketDirectDamage, dir_out);
  QueryBox(Bounds{at, at}.Expanded(kRocketSplashRadius), &near);
  for (EntityId id : near) {
    if (id == direct_hit) continue;
    const Edict& e = Get(id);
    if (e.kind != EntityKind::kPlayer || !(e.flags & kFlagSolid)) continue;
    const float dist = DistanceToBox(at, EdictBox(e));
    if (dist >= kRocketSplashRadius) continue;
    int damage = static_cast<int>(kRocketSplashDamage * (1.0f - dist / kRocketSplashRadius));
    if (id == owner) damage /= 2;
    if (damage <= 0 || !collision_.LineOfSight(at, EdictCenter(e))) continue;
    Damage(id, owner, damage, Normalize(EdictCenter(e) - at));
  }
  Edict& x = Mut(rocket);
  x.kind = EntityKind::kExplosion;
  x.origin = at;
  x.velocity = Vec3{};
  x.next_tick = globals().tick + 1;
  LinkEdict(rocket);
}

// Armor absorbs armor_pct of the damage (rounded up) while it lasts; the rest is health.
void World::Damage(EntityId target, EntityId attacker, int damage, Vec3 knockback_dir) {
  const Edict& t0 = Get(target);
  if (t0.kind != EntityKind::kPlayer || !(t0.flags & kFlagSolid) || damage <= 0) return;
  Edict& t = Mut(target);
  int save = (t.armor_pct * damage + 99) / 100;
  if (save >= t.armor) {
    save = t.armor;
    t.armor_pct = 0;
  }
  t.armor -= save;
  const int take = damage - save;
  t.health -= take;
  t.damage_taken += take;
  t.velocity += knockback_dir * (static_cast<float>(damage) * kKnockbackScale);
  ClampVelocity(&t.velocity);
  if (t.velocity.z > kGroundBreakSpeedZ) t.flags &= ~kFlagOnGround;
  if (t.health <= 0) Kill(target, attacker);
}

void World::Kill(EntityId victim, EntityId attacker) {
  Edict& v = Mut(victim);
  v.flags = (v.flags | kFlagDead) & ~(kFlagSolid | kFlagOnGround);
  may_be_dead_[static_cast<size_t>(victim)] = 1;
  v.deaths++;
  v.velocity = Vec3{};
  v.next_tick = globals().tick + TicksFor(kRespawnDelayMs);
  if (attacker == victim || !IsPlayerId(attacker)) {
    v.frags--;
  } else {
    Mut(attacker).frags++;
  }
  LinkEdict(victim);  // the body stays visible, not solid
}

void World::Telefrag(EntityId mover, const Bounds& box) {
  static thread_local std::vector<EntityId> near;
  QueryBox(box.Expanded(kTelefragMargin), &near);
  for (EntityId id : near) {
    if (id == mover) continue;
    const Edict& e = Get(id);
    if (e.kind == EntityKind::kPlayer && (e.flags & kFlagSolid)) Kill(id, mover);
  }
}

}  // namespace game
