// Field rules for the states carried by a Snapshot.
#include "server/protocol/snapshot.h"

#include <cmath>
#include <string>

namespace proto {
namespace {

using core::Status;

bool InRange(core::Vec3 v, float max_abs) { return WithinAbs(v, max_abs); }

Status Bad(const std::string& field, const char* why) {
  return Status::InvalidArgument(field + ": " + why);
}

}  // namespace

Status Validate(const PlayerState& p) {
  if (!InRange(p.origin, kMaxCoord)) return Bad("PlayerState.origin", "out of range or NaN");
  if (!InRange(p.velocity, kMaxCoord)) return Bad("PlayerState.velocity", "out of range or NaN");
  if (!InRange(p.view_angles, 360.0f)) {
    return Bad("PlayerState.view_angles", "out of range or NaN");
  }
  if (p.weapons & ~kValidWeaponBits) return Bad("PlayerState.weapons", "unknown bits set");
  if (static_cast<uint8_t>(p.current_weapon) > kMaxWeaponId) {
    return Bad("PlayerState.current_weapon", "not a WeaponId");
  }
  if (p.flags & ~kValidPlayerFlags) return Bad("PlayerState.flags", "unknown bits set");
  return Status::OK();
}

Status Validate(const EntityState& e) {
  // Decide first, then build the message: a valid entity costs no allocation.
  const char* field = nullptr;
  const char* why = nullptr;
  switch (FirstFault(e)) {
    case EntityFault::kNone:
      return Status::OK();
    case EntityFault::kId:
      field = "id", why = "over kMaxEntityId (32767)";
      break;
    case EntityFault::kType:
      field = "type", why = "not an EntityType";
      break;
    case EntityFault::kOrigin:
      field = "origin", why = "out of range or NaN";
      break;
    case EntityFault::kAngles:
      field = "angles", why = "out of range or NaN";
      break;
    case EntityFault::kEffects:
      field = "effects", why = "unknown bits set";
      break;
  }
  return Bad("EntityState[" + std::to_string(e.id) + "]." + field, why);
}

Status Validate(const KillEvent& e) {
  if (e.victim_id == kNoPlayer) return Bad("KillEvent.victim_id", "is kNoPlayer");
  if (e.killer_id != kNoPlayer) {
    if (e.how > kMaxWeaponId) return Bad("KillEvent.how", "not a WeaponId");
  } else if (e.how < 1 || e.how > kMaxDeathCause) {
    return Bad("KillEvent.how", "not a DeathCause");
  }
  return Status::OK();
}

}  // namespace proto
