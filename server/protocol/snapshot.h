// What a client sees of the world in one server frame: its own PlayerState and the states of the
// entities the server chose for it. Plain values; snapshot_codec.h puts them on the wire.
#pragma once

#include <array>
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

struct Snapshot {
  uint32_t snapshot_id = 0;  // server frame number, >= 1, increasing per client
  uint32_t server_tick = 0;
  uint32_t last_applied_sequence = 0;  // newest UserCmd of this client applied to the world
  PlayerState player;
  std::vector<EntityState> entities;  // decoded: sorted by id, at most kMaxSnapshotEntities
  friend bool operator==(const Snapshot&, const Snapshot&) = default;
};

core::Status Validate(const PlayerState& p);
core::Status Validate(const EntityState& e);

}  // namespace proto
