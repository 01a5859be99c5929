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

// Requests: prefix + "getchallenge" or prefix + "status", each optionally followed by one '\n'.
std::vector<uint8_t> EncodeRequest(ConnectionlessRequest request);
core::Status ParseRequest(std::span<const uint8_t> datagram, ConnectionlessRequest* request);

// Challenge reply: prefix + "challenge <decimal u32>\n".
std::vector<uint8_t> EncodeChallengeReply(uint32_t challenge);
core::Status ParseChallengeReply(std::span<const uint8_t> datagram, uint32_t* challenge);

struct StatusPlayer {
  int32_t frags = 0;     // -32768..32767
  uint32_t ping_ms = 0;  // 0..9999
  std::string name;      // passes ValidateName
  friend bool operator==(const StatusPlayer&, const StatusPlayer&) = default;
};

struct ServerStatus {
  std::string hostname;  // 0..63 printable ASCII, no '\'
  std::string map;       // 1..63 printable ASCII, no '\' or ' '
  uint32_t players = 0;  // players connected (may exceed player_list.size())
  uint32_t max_players = 0;
  uint32_t fraglimit = 0;  // 0 = none
  uint64_t uptime_s = 0;
  uint32_t protocol_version = 0;
  uint32_t tick_rate_hz = 0;
  std::vector<StatusPlayer> player_list;
  friend bool operator==(const ServerStatus&, const ServerStatus&) = default;
};

// Status reply: prefix + "status\n" + "\key\value..." line + one line per player
// `<frags> <ping_ms> "<name>"`. Players past kMaxConnectionlessBytes are left out;
// *players_listed (if not null) says how many were written. InvalidArgument on a bad field.
core::Status EncodeStatusReply(const ServerStatus& status, std::vector<uint8_t>* out,
                               size_t* players_listed = nullptr);
// Unknown keys are ignored (forward compatibility); every key above is required.
core::Status ParseStatusReply(std::span<const uint8_t> datagram, ServerStatus* status);

}  // namespace proto
