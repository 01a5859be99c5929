// Field rules for the states carried by a Snapshot.
#include "server/protocol/snapshot.h"

#include <string>

namespace proto {
namespace {

using core::Status;

Status Bad(const std::string& field, const char* why) {
  return Status::InvalidArgument(field + ": " + why);
}

}  // namespace

Status Validate(const PlayerState& p) {
  if (!WithinAbs(p.origin, kMaxCoord)) return Bad("PlayerState.origin", "out of range or NaN");
  if (!WithinAbs(p.velocity, kMaxCoord)) return Bad("PlayerState.velocity", "out of range or NaN");
  if (!WithinAbs(p.view_angles, 360.0f)) {
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
  // The field and the broken rule, by EntityFault (kNone has none).
  static constexpr const char* kFault[][2] = {{nullptr, nullptr},
                                              {"id", "over kMaxEntityId (32767)"},
                                              {"type", "not an EntityType"},
                                              {"origin", "out of range or NaN"},
                                              {"angles", "out of range or NaN"},
                                              {"effects", "unknown bits set"}};
  const EntityFault f = FirstFault(e);
  if (f == EntityFault::kNone) return Status::OK();  // no allocation for a valid entity
  const auto* fault = kFault[static_cast<size_t>(f)];
  return Bad("EntityState[" + std::to_string(e.id) + "]." + fault[0], fault[1]);
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
