// The connection-level and input messages of the Aftershock protocol (everything except the
// Snapshot, see snapshot_codec.h): plain structs plus Validate/Encode/Decode for each.
//
// Every ENet packet holds exactly one message whose first byte is its proto::MessageType.
// Encode validates first, so the server and bots can never emit what a decoder would reject.
// Decode rejects anything malformed: wrong type byte, truncation, trailing bytes, packets over
// kMaxPacketBytes, out-of-range enums, NaN/inf floats, bad lengths or characters. On error *m is
// left partly written and must not be used. All functions are pure and thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "server/core/status.h"
#include "server/core/vec3.h"
#include "server/protocol/protocol_format.h"

namespace proto {

// --- join sequence (channel kChannelControl, reliable) ---------------------------------------

// Client -> lobby, first message after the ENet connect.
struct JoinRequest {
  uint16_t protocol_version = kProtocolVersion;
  uint32_t challenge = 0;     // from the connectionless "challenge" reply
  std::string name;           // lobby refuses (kBadName) unless ValidateName(name) is OK
  uint64_t secret_token = 0;  // identity: (name, token) names a durable player
  friend bool operator==(const JoinRequest&, const JoinRequest&) = default;
};

// Lobby -> client: go to worker_port and present session_ticket.
struct JoinAccept {
  uint16_t worker_port = 0;            // != 0
  uint16_t player_id = 0;              // != kNoPlayer
  uint64_t session_ticket = 0;         // != 0
  uint32_t last_applied_sequence = 0;  // newest UserCmd sequence applied for this identity
  uint16_t tick_rate_hz = 0;           // 1..1000
  uint32_t server_tick = 0;
  uint64_t server_time_ms = 0;
  friend bool operator==(const JoinAccept&, const JoinAccept&) = default;
};

// Lobby -> client (JoinRefuse) or worker -> client (Refuse); the server disconnects after it.
struct Refusal {
  RefuseReason reason = RefuseReason::kServerFull;
  std::string text;  // 0..127 printable ASCII
  friend bool operator==(const Refusal&, const Refusal&) = default;
};
struct JoinRefuse : Refusal {};
struct Refuse : Refusal {};

// Client -> worker, first message after the ENet connect to the worker port.
struct Hello {
  uint64_t session_ticket = 0;  // != 0
  uint16_t player_id = 0;       // != kNoPlayer
  friend bool operator==(const Hello&, const Hello&) = default;
};

// Worker -> client: the player is in the game; commands and snapshots may flow.
struct Welcome {
  uint16_t player_id = 0;  // != kNoPlayer
  uint32_t server_tick = 0;
  uint32_t last_applied_sequence = 0;  // continue numbering commands after this
  friend bool operator==(const Welcome&, const Welcome&) = default;
};

// --- input (channel kChannelCommand, unreliable unsequenced) ---------------------------------

// One player intention covering duration_ms of game time (QuakeWorld usercmd_t).
struct UserCmd {
  uint32_t sequence = 0;     // >= 1, +1 per command, never reused by an identity
  uint8_t duration_ms = 0;   // 1..250
  core::Vec3 view_angles;    // degrees: x = pitch [-90,90], y = yaw [-360,360], z = roll [-90,90]
  int16_t forward_move = 0;  // [-400, 400]
  int16_t side_move = 0;     // [-400, 400]
  int16_t up_move = 0;       // [-400, 400]
  uint8_t buttons = 0;       // kButtonAttack | kButtonJump; other bits invalid
  uint8_t impulse = 0;       // 0..kMaxImpulse
  friend bool operator==(const UserCmd&, const UserCmd&) = default;
};

// Newest command first: cmds[0] is current, cmds[i].sequence == cmds[0].sequence - i.
struct CommandPacket {
  uint32_t ack_snapshot_id = 0;  // newest snapshot decoded, 0 = none (asks for a full snapshot)
  uint8_t count = 0;             // 1..kMaxCommandsPerPacket
  std::array<UserCmd, kMaxCommandsPerPacket> cmds{};
  friend bool operator==(const CommandPacket& a, const CommandPacket& b);
};

// --- chat and events (channel kChannelControl, reliable) -------------------------------------

struct ClientChat {
  std::string text;  // 1..127 printable ASCII
  friend bool operator==(const ClientChat&, const ClientChat&) = default;
};

// Frags and deaths are not messages of their own: they ride in the Snapshot (KillEvent,
// snapshot.h).

struct ChatEvent {
  uint16_t from_id = kNoPlayer;  // kNoPlayer: the server itself
  std::string from_name;         // 0..31 printable ASCII (empty for the server)
  std::string text;              // 1..127 printable ASCII
  friend bool operator==(const ChatEvent&, const ChatEvent&) = default;
};

// Server -> client just before it disconnects the peer.
struct Kick {
  KickReason reason = KickReason::kAdmin;
  std::string text;  // 0..127 printable ASCII
  friend bool operator==(const Kick&, const Kick&) = default;
};

// The message type of a packet, or nullopt if empty or the first byte names no known type.
std::optional<MessageType> PeekType(std::span<const uint8_t> packet);

// Text rules shared with the connectionless codec.
bool IsPrintableAscii(std::string_view text);
core::Status ValidateName(std::string_view name);

// Per message: Validate checks the field rules; Encode validates then replaces *out with the
// packet bytes; Decode parses and validates one whole packet.
core::Status Validate(const JoinRequest& m);
core::Status Encode(const JoinRequest& m, std::vector<uint8_t>* out);
core::Status Decode(std::span<const uint8_t> packet, JoinRequest* m);
core::Status Validate(const JoinAccept& m);
core::Status Encode(const JoinAccept& m, std::vector<uint8_t>* out);
core::Status Decode(std::span<const uint8_t> packet, JoinAccept* m);
core::Status Validate(const JoinRefuse& m);
core::Status Encode(const JoinRefuse& m, std::vector<uint8_t>* out);
core::Status Decode(std::span<const uint8_t> packet, JoinRefuse* m);
core::Status Validate(const Hello& m);
core::Status Encode(const Hello& m, std::vector<uint8_t>* out);
core::Status Decode(std::span<const uint8_t> packet, Hello* m);
core::Status Validate(const Welcome& m);
core::Status Encode(const Welcome& m, std::vector<uint8_t>* out);
core::Status Decode(std::span<const uint8_t> packet, Welcome* m);
core::Status Validate(const Refuse& m);
core::Status Encode(const Refuse& m, std::vector<uint8_t>* out);
core::Status Decode(std::span<const uint8_t> packet, Refuse* m);
core::Status Validate(const CommandPacket& m);
core::Status Encode(const CommandPacket& m, std::vector<uint8_t>* out);
core::Status Decode(std::span<const uint8_t> packet, CommandPacket* m);
core::Status Validate(const ClientChat& m);
core::Status Encode(const ClientChat& m, std::vector<uint8_t>* out);
core::Status Decode(std::span<const uint8_t> packet, ClientChat* m);
core::Status Validate(const ChatEvent& m);
core::Status Encode(const ChatEvent& m, std::vector<uint8_t>* out);
core::Status Decode(std::span<const uint8_t> packet, ChatEvent* m);
core::Status Validate(const Kick& m);
core::Status Encode(const Kick& m, std::vector<uint8_t>* out);
core::Status Decode(std::span<const uint8_t> packet, Kick* m);

// A single command's field rules (used by Validate(CommandPacket)).
core::Status ValidateUserCmd(const UserCmd& cmd);

}  // namespace proto
