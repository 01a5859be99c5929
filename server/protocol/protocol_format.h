// Wire-format constants shared by every encoder and decoder of the Aftershock protocol: version,
// ports, ENet channels, message type bytes, size limits and the enums that travel on the wire.
// docs/protocol.md describes the format in prose; change both together (and bump the version).
#pragma once

#include <cstddef>
#include <cstdint>

namespace proto {

// Bump on any incompatible change to a message layout or a validation rule.
inline constexpr uint16_t kProtocolVersion = 3;  // 3: kill events ride in the snapshot

// Ports: the lobby ENet host (and connectionless queries) listen on the base port; worker i
// listens on base + 1 + i.
inline constexpr uint16_t kDefaultBasePort = 27500;

// ENet channels. Every host is created with kNumChannels channels.
enum Channel : uint8_t {
  kChannelControl = 0,   // reliable: join, hello, events, chat, kick
  kChannelSnapshot = 1,  // unreliable sequenced: Snapshot
  kChannelCommand = 2,   // unreliable unsequenced: CommandPacket
};
inline constexpr size_t kNumChannels = 3;

// First byte of every ENet packet. Client->server types are < 0x80, server->client >= 0x80.
enum class MessageType : uint8_t {
  kJoinRequest = 0x01,    // client -> lobby, control
  kHello = 0x02,          // client -> worker, control
  kCommandPacket = 0x03,  // client -> worker, command
  kClientChat = 0x04,     // client -> worker, control
  kJoinAccept = 0x81,     // lobby -> client, control
  kJoinRefuse = 0x82,     // lobby -> client, control
  kWelcome = 0x83,        // worker -> client, control
  kRefuse = 0x84,         // worker -> client, control
  kSnapshot = 0x85,       // worker -> client, snapshot
  // 0x86 and 0x87 were FragEvent and DeathEvent up to version 2; kill events now ride in the
  // Snapshot (KillEvent), so the types are retired and invalid.
  kChatEvent = 0x88,      // worker -> client, control
  kKick = 0x89,           // lobby or worker -> client, control
};

// Size limits. Any packet longer than kMaxPacketBytes is invalid; hosts should set ENet's
// maximumPacketSize to it.
inline constexpr size_t kMaxPacketBytes = 1200;    // below ENet's 1400 MTU minus headers
inline constexpr size_t kMaxSnapshotBytes = 1200;  // encoder budget == decoder limit
// ENet's keepalive: a connected peer with no reliable packet in flight pings every this many ms
// (ENet's default is 500), and the other side acknowledges each ping. Snapshots and commands
// flow 30 times a second and are unreliable, so at 500 ms the pings and their acknowledgements
// were 0.13 datagrams per command each way. Both sides set it on every game connection.
inline constexpr uint32_t kEnetPingIntervalMs = 2000;
inline constexpr size_t kMaxNameChars = 31;        // player name: 1..31
inline constexpr size_t kMaxChatChars = 127;       // chat text: 1..127
inline constexpr size_t kMaxReasonChars = 127;     // refusal / kick text: 0..127
inline constexpr size_t kMaxHostnameChars = 63;    // status hostname: 0..63
inline constexpr size_t kMaxMapNameChars = 63;     // status map name: 1..63

// Commands.
inline constexpr size_t kMaxCommandsPerPacket = 4;  // current + up to 3 redundant
inline constexpr uint8_t kMinCommandMs = 1;
inline constexpr uint8_t kMaxCommandMs = 250;
inline constexpr int16_t kMaxMove = 400;      // forward/side/up in [-400, 400]
inline constexpr float kMaxPitchDeg = 90.0f;  // pitch in [-90, 90]
inline constexpr float kMaxYawDeg = 360.0f;   // yaw in [-360, 360]
inline constexpr float kMaxRollDeg = 90.0f;   // roll in [-90, 90]
enum Button : uint8_t { kButtonAttack = 1, kButtonJump = 2 };
inline constexpr uint8_t kValidButtons = kButtonAttack | kButtonJump;
// Impulse 0 = none; 1..8 selects the weapon with that WeaponId; 9 = next weapon; 10 = previous.
inline constexpr uint8_t kImpulseNextWeapon = 9;
inline constexpr uint8_t kImpulsePrevWeapon = 10;
inline constexpr uint8_t kMaxImpulse = 10;

// Snapshots.
inline constexpr size_t kMaxSnapshotEntities = 64;  // entities visible in one snapshot
inline constexpr uint16_t kMaxEntityId = 32767;     // entity ids are 0..32767 (15 bits)
inline constexpr size_t kSnapshotRing = 32;         // snapshots kept by each side for deltas
inline constexpr uint16_t kNoPlayer = 0xFFFF;       // "nobody" (world, server) in events
inline constexpr size_t kMaxSnapshotEvents = 16;    // kill events carried by one snapshot
inline constexpr size_t kMaxQueuedEvents = 256;     // kill events waiting for one client

// Weapons, as Quake's eight. WeaponId 0 is "no weapon".
enum class WeaponId : uint8_t {
  kNone = 0,
  kAxe = 1,
  kShotgun = 2,
  kSuperShotgun = 3,
  kNailgun = 4,
  kSuperNailgun = 5,
  kGrenadeLauncher = 6,
  kRocketLauncher = 7,
  kLightning = 8,
};
inline constexpr uint8_t kMaxWeaponId = 8;
// PlayerState::weapons has bit (id - 1) set for each weapon owned.
inline constexpr uint16_t kValidWeaponBits = 0x00FF;

enum AmmoType : uint8_t { kAmmoShells = 0, kAmmoNails = 1, kAmmoRockets = 2, kAmmoCells = 3 };
inline constexpr size_t kNumAmmoTypes = 4;

// PlayerState::flags.
enum PlayerFlag : uint8_t {
  kPlayerOnGround = 1,
  kPlayerDead = 2,
  kPlayerInWater = 4,
  kPlayerSpectator = 8,
};
inline constexpr uint8_t kValidPlayerFlags = 0x0F;

// EntityState::type.
enum class EntityType : uint8_t {
  kPlayer = 1,
  kRocket = 2,
  kGrenade = 3,
  kNail = 4,
  kItem = 5,
  kExplosion = 6,
  kTeleportFlash = 7,
  kGib = 8,
};
inline constexpr uint8_t kMaxEntityType = 8;

// Snapshot entity entry field mask (u16): which EntityState fields follow, in this bit order.
enum EntityField : uint16_t {
  kFieldType = 1 << 0,
  kFieldOriginX = 1 << 1,
  kFieldOriginY = 1 << 2,
  kFieldOriginZ = 1 << 3,
  kFieldPitch = 1 << 4,
  kFieldYaw = 1 << 5,
  kFieldRoll = 1 << 6,
  kFieldEffects = 1 << 7,
  kFieldModel = 1 << 8,
  kFieldNew = 1 << 15,  // a full entity, not a delta: mask must be kFieldNew | kAllEntityFields
};
inline constexpr uint16_t kAllEntityFields = 0x01FF;

// EntityState::effects.
enum EntityEffect : uint8_t {
  kEffectDead = 1,
  kEffectMuzzleFlash = 2,
  kEffectQuad = 4,
  kEffectInvisible = 8,
  kEffectRespawning = 16,
};
inline constexpr uint8_t kValidEffects = 0x1F;

// Why the lobby refused a JoinRequest (JoinRefuse) or a worker refused a Hello (Refuse).
enum class RefuseReason : uint8_t {
  kServerFull = 1,
  kWrongProtocolVersion = 2,
  kWrongToken = 3,
  kBadChallenge = 4,
  kBadName = 5,
  kBanned = 6,
  kShuttingDown = 7,
  kBadTicket = 8,
  kAlreadyConnected = 9,
};
inline constexpr uint8_t kMaxRefuseReason = 9;

// Why a connected client was dropped.
enum class KickReason : uint8_t {
  kInvalidInput = 1,
  kSpeedHack = 2,
  kTimeout = 3,
  kAdmin = 4,
  kServerShutdown = 5,
  kDuplicateLogin = 6,
};
inline constexpr uint8_t kMaxKickReason = 6;

// Why a player died without a killing player (DeathEvent).
enum class DeathCause : uint8_t {
  kSuicide = 1,
  kFall = 2,
  kLava = 3,
  kSlime = 4,
  kDrowned = 5,
  kCrushed = 6,
  kWorld = 7,
};
inline constexpr uint8_t kMaxDeathCause = 7;

}  // namespace proto
