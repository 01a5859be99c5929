// What a client sees of the world in one server frame: its own PlayerState and the states of the
// entities the server chose for it. Plain values; snapshot_codec.h puts them on the wire.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

#include "server/core/status.h"
#include "server/core/vec3.h"
#include "server/protocol/protocol_format.h"

namespace proto {

// Largest |coordinate| and |velocity component| the wire accepts, in Quake units.
inline constexpr float kMaxCoord = 65536.0f;

// The receiving player's own state; always sent in full (55 bytes).
struct PlayerState {
  core::Vec3 origin;
  core::Vec3 velocity;
  core::Vec3 view_angles;  // degrees, each in [-360, 360]
  int16_t health = 0;
  uint8_t armor = 0;
  uint16_t weapons = 0;  // bit (WeaponId - 1) per weapon owned; only kValidWeaponBits
  WeaponId current_weapon = WeaponId::kNone;
  std::array<uint16_t, kNumAmmoTypes> ammo{};  // indexed by AmmoType
  int16_t frags = 0;
  uint16_t deaths = 0;
  uint8_t flags = 0;  // PlayerFlag bits; only kValidPlayerFlags
  friend bool operator==(const PlayerState&, const PlayerState&) = default;
};

// One visible entity. `model` is opaque to the protocol: its meaning depends on `type` (the
// weapon a player holds, the kind of an item...), fixed by the game.
struct EntityState {
  uint16_t id = 0;  // 0..kMaxEntityId, unique within a snapshot
  EntityType type = EntityType::kPlayer;
  core::Vec3 origin;    // |component| <= kMaxCoord
  core::Vec3 angles;    // degrees (pitch, yaw, roll), each in [-360, 360]
  uint8_t effects = 0;  // EntityEffect bits; only kValidEffects
  uint8_t model = 0;
  friend bool operator==(const EntityState&, const EntityState&) = default;
};

// A death as the kill feed shows it. It rides in the snapshot stream, numbered per client, and
// is carried again until the client acknowledges a snapshot that held it (docs/protocol.md,
// 6.4): no acknowledgement datagram of its own, as a reliable packet would cost.
struct KillEvent {
  uint16_t killer_id = kNoPlayer;  // kNoPlayer: a death with no killing player
  uint16_t victim_id = 0;          // != kNoPlayer
  // killer_id set: the WeaponId 0..kMaxWeaponId (0: telefrag or another kill without a weapon;
  // killer == victim: suicide with a weapon). Else the DeathCause 1..kMaxDeathCause.
  uint8_t how = 0;
  friend bool operator==(const KillEvent&, const KillEvent&) = default;
};

struct Snapshot {
  uint32_t snapshot_id = 0;  // server frame number, >= 1, increasing per client
  uint32_t server_tick = 0;
  uint32_t last_applied_sequence = 0;  // newest UserCmd of this client applied to the world
  PlayerState player;
  std::vector<EntityState> entities;  // decoded: sorted by id, at most kMaxSnapshotEntities
  // Decoded only (the encoder takes its events from its queue, see SnapshotEncoder): the kill
  // events this client had not decoded before, oldest first, and the number of the first.
  std::vector<KillEvent> events;
  uint32_t first_event_seq = 0;
  friend bool operator==(const Snapshot&, const Snapshot&) = default;
};

core::Status Validate(const PlayerState& p);
core::Status Validate(const EntityState& e);

// The first rule of EntityState that e breaks, in the order Validate checks them (kNone: valid).
// Inline, for decoders that check every entity they build; Validate names the fault (by the
// enumerators' order).
enum class EntityFault : uint8_t { kNone, kId, kType, kOrigin, kAngles, kEffects };
inline bool WithinAbs(core::Vec3 v, float max_abs) {  // false for NaN and infinities too
  return std::fabs(v.x) <= max_abs && std::fabs(v.y) <= max_abs && std::fabs(v.z) <= max_abs;
}
inline EntityFault FirstFault(const EntityState& e) {
  const uint8_t type = static_cast<uint8_t>(e.type);
  if (e.id > kMaxEntityId) return EntityFault::kId;
  if (type < 1 || type > kMaxEntityType) return EntityFault::kType;
  if (!WithinAbs(e.origin, kMaxCoord)) return EntityFault::kOrigin;
  if (!WithinAbs(e.angles, 360.0f)) return EntityFault::kAngles;
  if (e.effects & ~kValidEffects) return EntityFault::kEffects;
  return EntityFault::kNone;
}
core::Status Validate(const KillEvent& e);

}  // namespace proto
