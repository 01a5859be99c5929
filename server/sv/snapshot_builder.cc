// Edict -> wire state mapping and snapshot assembly.
#include "server/sv/snapshot_builder.h"

#include <algorithm>
#include <cmath>

namespace sv {

namespace {

float ClampAngle(float deg) {
  if (!std::isfinite(deg)) return 0;
  return std::remainder(deg, 360.0f);  // [-180, 180]
}

core::Vec3 ClampVec(core::Vec3 v, float limit) {
  auto c = [limit](float f) { return std::isfinite(f) ? std::clamp(f, -limit, limit) : 0.0f; };
  return {c(v.x), c(v.y), c(v.z)};
}

template <typename T>
T ClampTo(int64_t v) {
  return static_cast<T>(std::clamp<int64_t>(v, std::numeric_limits<T>::min(),
                                            std::numeric_limits<T>::max()));
}

// Pitch/yaw of a direction (Quake's vectoangles), degrees.
core::Vec3 AnglesOf(core::Vec3 dir) {
  const float len = std::sqrt(dir.x * dir.x + dir.y * dir.y + dir.z * dir.z);
  if (!(len > 0)) return {};
  const float yaw = std::atan2(dir.y, dir.x) * 57.29578f;
  const float pitch = -std::asin(std::clamp(dir.z / len, -1.0f, 1.0f)) * 57.29578f;
  return {pitch, yaw, 0};
}

}  // namespace

proto::WeaponId WireWeapon(uint8_t game_weapon) {
  switch (game_weapon) {
    case game::kWeaponAxe: return proto::WeaponId::kAxe;
    case game::kWeaponShotgun: return proto::WeaponId::kShotgun;
    case game::kWeaponRocketLauncher: return proto::WeaponId::kRocketLauncher;
    default: return proto::WeaponId::kNone;
  }
}

proto::PlayerState PlayerStateOf(const game::Edict& e) {
  proto::PlayerState p;
  p.origin = ClampVec(e.origin, proto::kMaxCoord);
  p.velocity = ClampVec(e.velocity, proto::kMaxCoord);
  p.view_angles = {ClampAngle(e.view_angles.x), ClampAngle(e.view_angles.y),
                   ClampAngle(e.view_angles.z)};
  p.health = ClampTo<int16_t>(e.health);
  p.armor = ClampTo<uint8_t>(e.armor);
  for (uint8_t w = 0; w < game::kWeaponCount; ++w) {
    if (e.weapons_owned & (1u << w)) {
      p.weapons |= static_cast<uint16_t>(1u << (static_cast<int>(WireWeapon(w)) - 1));
    }
  }
  p.current_weapon = WireWeapon(e.weapon);
  p.ammo[proto::kAmmoShells] = ClampTo<uint16_t>(e.ammo_shells);
  p.ammo[proto::kAmmoRockets] = ClampTo<uint16_t>(e.ammo_rockets);
  p.frags = ClampTo<int16_t>(e.frags);
  p.deaths = ClampTo<uint16_t>(e.deaths);
  if (e.flags & game::kFlagOnGround) p.flags |= proto::kPlayerOnGround;
  if (e.flags & game::kFlagDead) p.flags |= proto::kPlayerDead;
  return p;
}

bool EntityStateOf(const game::World& world, game::EntityId id, proto::EntityState* out) {
  if (id < 0 || id > proto::kMaxEntityId) return false;
  const game::Edict& e = world.Get(id);
  proto::EntityState s;
  s.id = static_cast<uint16_t>(id);
  switch (e.kind) {
    case game::EntityKind::kPlayer:
      if (!(e.flags & game::kFlagConnected)) return false;
      s.type = proto::EntityType::kPlayer;
      s.angles = {ClampAngle(e.view_angles.x), ClampAngle(e.view_angles.y), 0};
      s.model = static_cast<uint8_t>(WireWeapon(e.weapon));
      if (e.flags & game::kFlagDead) s.effects |= proto::kEffectDead;
      break;
    case game::EntityKind::kRocket:
      s.type = proto::EntityType::kRocket;
      s.angles = AnglesOf(e.velocity);
      break;
    case game::EntityKind::kExplosion:
      s.type = proto::EntityType::kExplosion;
      break;
    case game::EntityKind::kPickup:
      if (!(e.flags & game::kFlagAvailable)) return false;
      s.type = proto::EntityType::kItem;
      s.model = static_cast<uint8_t>(e.item);
      break;
    default:
      return false;
  }
  s.origin = ClampVec(e.origin, proto::kMaxCoord);
  *out = s;
  return true;
}

void ShownStates::Build(const game::World& world) {
  const size_t n = static_cast<size_t>(world.object_count());
  states_.resize(n);
  shown_.assign(n, 0);
  const areanode::AreanodeTree& tree = world.tree();
  for (game::EntityId id = 1; id < world.object_count(); ++id) {
    if (tree.IsLinked(id)) shown_[static_cast<size_t>(id)] = EntityStateOf(world, id, &states_[static_cast<size_t>(id)]);
  }
}

void BuildSnapshot(const game::World& world, InterestIndex& interest, const ShownStates& shown,
                   game::EntityId player, float interest_radius, uint32_t snapshot_id,
                   std::vector<game::EntityId>* visible, proto::Snapshot* snap) {
  const game::Edict& me = world.Get(player);
  snap->snapshot_id = snapshot_id;
  snap->server_tick = static_cast<uint32_t>(std::max(0, world.globals().tick));
  snap->last_applied_sequence = me.last_cmd_sequence;
  snap->player = PlayerStateOf(me);
  snap->entities.clear();
  // The encoder keeps the longest prefix that fits; more than this never does.
  interest.Select(world, player, interest_radius, proto::kMaxSnapshotEntities, visible);
  for (game::EntityId id : *visible) {
    if (const proto::EntityState* s = shown.Find(id)) snap->entities.push_back(*s);
  }
}

}  // namespace sv
