// BotOptions: every knob of aftershock-bots, and the command-line parser that fills it (cxxopts).
// Plain value type; the parser is pure (no globals, never exits), so tests can call it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "server/core/status.h"
#include "server/protocol/protocol_format.h"

namespace bots {

// What a bot tries to do in the arena (docs/bots.md, "Behaviours").
enum class Behavior : uint8_t {
  kWander,   // roam between waypoints (or a wall-avoiding random walk without a map)
  kFight,    // chase and shoot the nearest visible enemy; wander when none is visible
  kItems,    // run to the nearest visible pickup, else to a map pickup
  kHotspot,  // everyone to one area (the waypoint nearest the map centre): maximum contention
  kMixed,    // a seeded blend of the four above, chosen per bot
};

const char* BehaviorName(Behavior b);

// One server's lobby (its base port).
struct Endpoint {
  std::string host = "127.0.0.1";
  uint16_t port = proto::kDefaultBasePort;
};

struct BotOptions {
  // Lobbies to play on; bot i joins servers[i % size]. Usually one; several let one bot process
  // load more servers than one server's player limit.
  std::vector<Endpoint> servers = {Endpoint{}};
  int bots = 1;                  // 1..100000
  double rate_hz = 30;           // commands per second per bot, 1..250
  double duration_s = 10;        // whole run, ramp included; > 0
  double ramp_s = 0;             // joins spread evenly over this many seconds
  uint64_t seed = 1;
  int threads = 1;               // bot threads, 1..64
  Behavior behavior = Behavior::kMixed;
  std::string identity_prefix = "bot";  // bot i plays as "<prefix>-<i>"
  std::string out_path;          // JSON summary; empty = none
  std::string series_path;       // CSV, one row per second; empty = none
  bool verify = false;           // count durability violations on rejoin
  int silence_ms = 750;          // no snapshot for this long while playing: server lost (100..60000)
  int drain_ms = 500;            // after the stop, wait at most this long for answers in flight (0..600000)
  std::string map_path;          // for navigation; empty = ask the server's status for its map
  bool quiet = false;            // no console line every second

  // Game time each command covers: round(1000 / rate_hz), clamped to the protocol's 1..250.
  int command_ms() const;
};

enum class ParseOutcome : uint8_t { kRun, kHelp, kError };

struct ParseResult {
  ParseOutcome outcome = ParseOutcome::kRun;
  std::string text;  // kHelp: the help text; kError: "error: ...\n\n" + help text
};

// Parses argv into *out (defaults for what is absent). Never throws, never exits.
ParseResult ParseBotOptions(int argc, const char* const* argv, BotOptions* out);

// Cross-field rules, also applied by ParseBotOptions.
core::Status ValidateBotOptions(const BotOptions& o);

}  // namespace bots
