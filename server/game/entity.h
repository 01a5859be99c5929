// The persistent game state, object by object: object 0 holds the Globals, objects 1..N-1 are
// Edicts (Quake's edict array). Every object is a plain, trivially copyable, 256-byte struct with
// no implicit padding, so the whole state is one contiguous array that recovery can checkpoint by
// object id at base + id * kObjectSize, and that hashes and replays bit-exactly.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "server/core/bounds.h"
#include "server/core/vec3.h"
#include "server/game/game_constants.h"

namespace game {

using core::Bounds;
using core::Vec3;
using EntityId = int32_t;  // == object id == areanode entity id; 0 is the Globals object

inline constexpr size_t kObjectSize = 256;
inline constexpr uint32_t kStateMagic = 0x41534757;  // "WGSA"
inline constexpr uint32_t kStateVersion = 2;  // 2: the offline player record store
inline constexpr int kMaxNameLength = 31;
inline constexpr int kRocketsPerPlayer = 4;  // each player owns fixed rocket slots (no shared allocator)

// kRecord: an offline player's record in the record store (never linked, never sent).
enum class EntityKind : uint8_t { kFree = 0, kPlayer, kRocket, kExplosion, kPickup, kRecord };

// Edict::flags bits.
enum EdictFlag : uint32_t {
  kFlagInUse = 1u << 0,      // record exists (player ever joined / rocket flying / pickup placed)
  kFlagConnected = 1u << 1,  // player currently joined
  kFlagLinked = 1u << 2,     // linked in the areanode tree (derived links are rebuilt from this)
  kFlagSolid = 1u << 3,      // blocks player movement and hitscan (alive, connected players)
  kFlagDead = 1u << 4,       // player waiting to respawn (set only by World::Kill)
  kFlagOnGround = 1u << 5,   // player stands on a walkable surface (normal z >= 0.7)
  kFlagJumpHeld = 1u << 6,   // jump was held in the last command (no auto-rejump)
  kFlagAvailable = 1u << 7,  // pickup can be taken now
};

enum Weapon : uint8_t { kWeaponAxe = 0, kWeaponShotgun = 1, kWeaponRocketLauncher = 2, kWeaponCount };

enum class ItemType : uint8_t {
  kNone = 0, kHealth, kMegaHealth, kArmorGreen, kArmorYellow, kArmorRed,
  kWeaponShotgun, kWeaponRocketLauncher, kShells, kRockets,
};

// One entity. Field meaning depends on `kind`; unused fields stay zero. Sizes are chosen so
// that no implicit padding exists (checked below); `reserved` fills the object to 256 bytes.
struct Edict {
  EntityKind kind;
  ItemType item;             // pickups: what it gives
  uint8_t weapon;            // players: current Weapon
  uint8_t armor_pct;         // players: fraction of damage the armor absorbs, percent
  uint32_t flags;            // EdictFlag bits
  EntityId owner;            // rockets/explosions: the shooter
  int32_t index;             // pickups: index in the map's pickups; spawns: last spawn point used
  Vec3 origin;
  Vec3 velocity;             // units/s
  Vec3 mins, maxs;           // box relative to origin
  Vec3 view_angles;          // players: pitch, yaw, roll in degrees; rockets: flight direction
  int32_t health;
  int32_t armor;
  int32_t ammo_shells;
  int32_t ammo_rockets;
  uint32_t weapons_owned;    // bit per Weapon
  int32_t frags;
  int32_t deaths;
  int32_t attack_cooldown_ms;  // players: time until the next attack, in the player's own time
  uint32_t last_cmd_sequence;  // players: last applied UserCmd::sequence
  int32_t next_tick;         // pickup respawn / player respawn / rocket expiry / explosion removal
  int32_t spawn_tick;        // tick the entity (re)appeared: player spawn, rocket launch
  uint64_t token_hash;       // players: hash of the secret join token
  uint64_t rng;              // players: per-player random state (shot spread)
  char name[kMaxNameLength + 1];  // players: NUL-terminated
  uint32_t commands_executed;
  int32_t damage_taken;      // players: total, for statistics
  uint64_t seen_stamp;       // records: Globals::leave_stamp of the leave that stored it (LRU order)
  int32_t last_slot;         // records: the player id it left from (resumed there if free)
  uint8_t reserved[68];
};

// The entity's box in world coordinates (origin + mins/maxs): what the areanode tree links.
inline Bounds EdictBox(const Edict& e) { return Bounds::At(e.origin, e.mins, e.maxs); }
// The centre of the entity's box, as origin + (mins + maxs) / 2 (rounds differently from
// EdictBox(e).Center(); the game and its hashes use this form).
inline Vec3 EdictCenter(const Edict& e) { return e.origin + (e.mins + e.maxs) * 0.5f; }
// A player's eye: kEyeHeight above the origin. Shots and line of sight start here.
inline Vec3 EdictEye(const Edict& e) { return e.origin + Vec3{0, 0, kEyeHeight}; }

// True if the player has ammunition for `weapon` (the axe needs none). Decides both whether a
// command fires and when Fire switches weapon.
inline bool HasAmmo(const Edict& p, int weapon) {
  if (weapon == kWeaponShotgun) return p.ammo_shells > 0;
  if (weapon == kWeaponRocketLauncher) return p.ammo_rockets > 0;
  return true;
}

// Object 0: everything that is not an entity.
struct Globals {
  uint32_t magic;
  uint32_t version;
  uint32_t object_size;
  uint32_t object_count;
  uint32_t max_players;
  uint32_t rockets_per_player;
  uint32_t first_rocket;     // id of the first rocket slot
  uint32_t first_pickup;     // id of the first pickup
  uint32_t pickup_count;
  uint32_t tick_ms;          // world phase step
  int32_t tick;              // world phases run so far
  uint32_t players_allocated;  // player records ever created (slots in use)
  uint64_t rng;              // world random state (spawn seeds)
  uint64_t map_hash;         // the map this state belongs to
  uint64_t seed;             // initial seed
  uint32_t first_record;     // id of the first record-store object
  uint32_t record_capacity;  // record-store objects (--max-records)
  uint64_t leave_stamp;      // leaves that stored a record so far (stamps records for LRU)
  uint64_t records_evicted;  // records evicted so far
  uint8_t reserved[160];
};

// The Globals fields fixed when a world is built: its map, the layout of its object table, its
// tick length and its seed. Two states are states of the same world iff these are equal: the one
// definition World::LoadState and recovery (durability::IdentityOf, world.id) use.
struct WorldConfiguration {
  uint64_t map_hash = 0;
  uint32_t object_size = 0;
  uint32_t object_count = 0;
  uint32_t max_players = 0;
  uint32_t first_pickup = 0;
  uint32_t first_record = 0;
  uint32_t record_capacity = 0;
  uint32_t tick_ms = 0;
  uint64_t seed = 0;
  friend bool operator==(const WorldConfiguration&, const WorldConfiguration&) = default;
};

inline WorldConfiguration ConfigurationOf(const Globals& g) {
  return {g.map_hash,     g.object_size,     g.object_count, g.max_players, g.first_pickup,
          g.first_record, g.record_capacity, g.tick_ms,      g.seed};
}

union Object {
  Globals globals;
  Edict edict;
};

static_assert(std::is_trivially_copyable_v<Edict> && std::is_trivially_copyable_v<Globals>);
static_assert(sizeof(Edict) == kObjectSize && sizeof(Globals) == kObjectSize);
static_assert(sizeof(Object) == kObjectSize);
// No implicit padding: the members' sizes add up to the struct's size.
static_assert(offsetof(Edict, reserved) + sizeof(Edict::reserved) == kObjectSize &&
              offsetof(Edict, token_hash) == 120 && offsetof(Edict, name) == 136 &&
              offsetof(Edict, seen_stamp) == 176 && offsetof(Edict, last_slot) == 184 &&
              offsetof(Edict, reserved) == 188,
              "Edict has implicit padding");
static_assert(offsetof(Globals, rng) == 48 && offsetof(Globals, first_record) == 72 &&
              offsetof(Globals, leave_stamp) == 80 && offsetof(Globals, reserved) == 96,
              "Globals has implicit padding");

}  // namespace game
