// Connectionless messages: raw UDP datagrams on the lobby's base port that start with
// kConnectionlessPrefix (0xFF 0xFF 0xFF 0xFF) and are answered before ENet parses anything
// (ENetHost::intercept). Text after the prefix, QuakeWorld style. Pure functions, thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "server/core/status.h"

namespace proto {

inline constexpr std::array<uint8_t, 4> kConnectionlessPrefix = {0xFF, 0xFF, 0xFF, 0xFF};
inline constexpr size_t kMaxConnectionlessBytes = 1400;  // any datagram, request or reply

enum class ConnectionlessRequest : uint8_t { kGetChallenge, kStatus };

// True if the datagram starts with the prefix (the intercept hook consumes it either way).
bool IsConnectionless(std::span<const uint8_t> datagram);

// What a status request asks for. QuakeWorld's argument is a bit set: 0 (or none) asks for
// both parts, bit 1 for the info line, bit 2 for the player lines; other bits (spectators, 4;
// team display, 16) are accepted and change nothing here. qstat sends "status 23".
struct StatusParts {
  bool info = true;
  bool players = true;
  friend bool operator==(const StatusParts&, const StatusParts&) = default;
};
StatusParts StatusPartsFromFlags(uint32_t flags);

// Requests: prefix + "getchallenge", or prefix + "status" with an optional " <decimal flags>"
// (0..2^31-1), each optionally followed by one '\n'. `parts` (if not null) receives what a
// status request asks for.
std::vector<uint8_t> EncodeRequest(ConnectionlessRequest request);
core::Status ParseRequest(std::span<const uint8_t> datagram, ConnectionlessRequest* request,
                          StatusParts* parts = nullptr);

// Challenge reply: prefix + "challenge <decimal u32>\n".
std::vector<uint8_t> EncodeChallengeReply(uint32_t challenge);
core::Status ParseChallengeReply(std::span<const uint8_t> datagram, uint32_t* challenge);

struct StatusPlayer {
  uint32_t user_id = 0;  // the player's id (JoinAccept.player_id), 0..65535
  int32_t frags = 0;     // -32768..32767
  uint32_t minutes = 0;  // connected for, whole minutes, 0..99999
  uint32_t ping_ms = 0;  // 0..9999
  std::string name;      // passes ValidateName
  friend bool operator==(const StatusPlayer&, const StatusPlayer&) = default;
};

struct ServerStatus {
  std::string hostname;  // 0..63 printable ASCII, no '\'
  std::string map;       // 1..63 printable ASCII, no '\' or ' '
  uint32_t players = 0;  // players connected (may exceed player_list.size())
  uint32_t max_players = 0;  // "maxclients" on the wire, as QuakeWorld names it
  uint32_t fraglimit = 0;  // 0 = none
  uint64_t uptime_s = 0;
  uint32_t protocol_version = 0;
  uint32_t tick_rate_hz = 0;
  std::vector<StatusPlayer> player_list;
  friend bool operator==(const ServerStatus&, const ServerStatus&) = default;
};

// Status reply, QuakeWorld's out-of-band print (SVC_Status): prefix + 'n' + the
// "\key\value..." info line + '\n' (if parts.info), then (if parts.players) one line per player
// `<user_id> <frags> <minutes> <ping_ms> "<name>" "" 0 0\n` (skin, top and bottom colour are
// QuakeWorld's; we have none). Players past kMaxConnectionlessBytes are left out;
// *players_listed (if not null) says how many were written. InvalidArgument on a bad field.
core::Status EncodeStatusReply(const ServerStatus& status, std::vector<uint8_t>* out,
                               size_t* players_listed = nullptr, StatusParts parts = {});
// Parses a reply with both parts. Unknown keys are ignored (forward compatibility); every key
// EncodeStatusReply writes is required.
core::Status ParseStatusReply(std::span<const uint8_t> datagram, ServerStatus* status);

}  // namespace proto
