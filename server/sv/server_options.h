// ServerOptions: every knob of aftershock-server, and the command-line parser that fills it
// (cxxopts). Plain value type; the parser is pure (no globals), so tests can call it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "recovery/checkpointer.h"
#include "recovery/log_writer.h"
#include "server/core/status.h"
#include "server/protocol/protocol_format.h"
#include "server/vis/pvs_build.h"

namespace sv {

// How concurrent commands are kept apart (the parallel-Quake paper, sections 3.3 and 4.3).
enum class LockingScheme : uint8_t {
  kSequential,   // one thread, no locks: the baseline
  kGlobal,       // one mutex around each command
  kAreanode,     // leaf locks of the command's move box; long-range actions lock every leaf
  kAreanodeOpt,  // as kAreanode, but projectiles lock an expanded box, hitscan a directional one
};

// What starts a frame.
enum class FrameMode : uint8_t {
  kRequest,  // the paper: the first thread that sees a request becomes master of the frame
  kFixed,    // every worker in every frame, at --tick-hz (the paper's request batching, 5.2)
};

// How players are spread over worker threads.
enum class Assignment : uint8_t {
  kBlock,       // session slot s goes to worker s * threads / max_players (the paper's)
  kRoundRobin,  // session slot s goes to worker s % threads
  kLocality,    // the worker that owns the areanode leaves the player stands in runs its commands
                // (locality.h); its connection stays on the round-robin assignment's port
};

// --recovery-check: off; on (report the outcome); refuse (and stop the start-up if it differs).
enum class RecoveryCheck { kOff, kOn, kRefuse };

struct ServerOptions {
  std::string map_path = "maps/dm_arena.map";
  std::string bind_address = "0.0.0.0";
  uint16_t port = proto::kDefaultBasePort;  // lobby; worker i listens on port + 1 + i
                                            // (0: the system picks each; Server reports them)
  int threads = 1;                 // worker threads, 1..64
  int max_players = 64;            // players online at once
  int max_records = 20000;         // offline player records kept (docs/game.md, "Persistent players")
  double new_identity_burst = 256; // new player names per source IPv4 address at once...
  double new_identity_per_min = 60;  // ...and refilled per minute
  LockingScheme locking = LockingScheme::kAreanodeOpt;
  int areanode_depth = 4;
  FrameMode frame_mode = FrameMode::kFixed;
  int tick_hz = 30;                // fixed: frame rate; request: world phase at most this often
  Assignment assign = Assignment::kBlock;
  // --assign locality (locality.h): rebalance period, the imbalance that triggers it, hysteresis.
  double rebalance_s = 1;
  double rebalance_threshold = 0.1;
  float migrate_margin = 64;
  double duration_s = 0;           // 0 = serve until SIGINT/SIGTERM
  std::string stats_out;           // empty: no JSON file
  double stats_interval_s = 5;     // JSON rewrite and console line period
  std::string log_level = "info";
  bool instrument = true;          // per-phase timing (off only to measure its overhead)
  bool region_check = false;       // game's debug check that commands stay in their region
  float interest_radius = 2048;    // snapshot interest radius, units (the PVS is built for it)
  // Where the map's PVS is cached (docs/maps.md, "Visibility"). "": $XDG_CACHE_HOME/aftershock/vis
  // (~/.cache/aftershock/vis), or data_dir/vis without a home; "none": no cache.
  std::string vis_cache_dir;
  uint64_t seed = 1;               // world seed
  std::string hostname = "aftershock";

  // Durability (docs/recovery.md). An empty data_dir means no recovery and nothing written (the
  // default for in-process servers); the command line's default is ./data.
  std::string data_dir;
  recovery::Algorithm checkpoint = recovery::Algorithm::kCou;
  int checkpoint_interval_ms = 0;  // 0: next checkpoint as soon as the previous one is durable
  recovery::SyncMode sync_mode = recovery::SyncMode::kSync;
  int async_flush_ms = 200;
  bool hash_log = false;           // data_dir/hash.log: "log-tick state-hash" per frame
  int replay_threads = 1;          // start-up log replay threads, 1..64 (command line: cores)
  // After recovery, check that the log between the two backups replays from the older to the
  // newer (durability::ReplayCheck): its outcome is logged and reported; with kRefuse a failed
  // check also stops the start-up, before the log and checkpoint writers open.
  RecoveryCheck recovery_check = RecoveryCheck::kOn;

  // Operations (docs/stats.md, "Prometheus metrics").
  bool metrics = false;            // serve GET /metrics (main.cc) and publish its board
  uint16_t metrics_port = 0;       // its TCP port on bind_address; 0: the system's pick
  bool agones = false;             // call the Agones SDK (server/sv/agones.h, deploy/README.md)
  int agones_health_ms = 2000;     // Health ping interval

  int tick_ms() const { return tick_hz > 0 ? (1000 + tick_hz / 2) / tick_hz : 33; }
};

const char* LockingName(LockingScheme s);
// The scheme LockingName gives `name`; false (and *out untouched) for any other text.
bool ParseLockingName(std::string_view name, LockingScheme* out);
const char* FrameModeName(FrameMode m);
const char* AssignmentName(Assignment a);
// The assignment AssignmentName gives `name`; false (and *out untouched) for any other text.
bool ParseAssignmentName(std::string_view name, Assignment* out);
// The areanode depth when --areanode-depth is not given: 4 (16 leaves, as the paper measured
// the schemes), or 11 (2,048 leaves) under --assign locality, whose threads share fewer leaves
// the finer the leaves are (docs/architecture.md, "Locality assignment").
inline constexpr int kLocalityAreanodeDepth = 11;
int DefaultAreanodeDepth(Assignment assign);
// The PVS cache directory a --vis-cache value names: "none" is no cache (""); "" is the user's
// cache as XDG says (shared by every server of one map), or `fallback` on a machine without a
// home; anything else is that directory.
std::string ResolveVisCacheDir(const std::string& flag, const std::string& fallback);
// Logs a PVS build's progress (vis::DescribeProgress) at info, every 10 s: a server or replay
// whose map is not in the cache starts only after the build.
vis::PvsProgressReporter LogVisibilityProgress();
// The worker thread whose port serves session slot `slot` (0 <= slot < max_players) under
// `assign` (locality: the round-robin assignment's, so the reply work is even at any number of
// players; the commands may then run on another thread).
int WorkerForSlot(Assignment assign, int slot, int threads, int max_players);
// --assign locality's knobs (locality.h), the rebalance period in ticks.
struct LocalityOptions {
  int rebalance_ticks = 30;           // how often the leaves may be rebalanced
  double rebalance_threshold = 0.1;   // (max - min) / mean players per thread that triggers it
  float margin = 64;                  // hysteresis, units
};
// The locality options of `o`, its --rebalance-s in ticks at its --tick-hz.
LocalityOptions LocalityOptionsOf(const ServerOptions& o);

enum class ParseOutcome : uint8_t { kRun, kHelp, kError };

struct ParseResult {
  ParseOutcome outcome = ParseOutcome::kRun;
  std::string text;  // kHelp: the help text; kError: "error: ...\n\n" + help text
};

// For main() after parsing: prints the help to stdout (returns 0) or the error and help to stderr
// (returns 2, the exit code for bad flags); std::nullopt for kRun. Shared by aftershock-server
// and aftershock-replay.
std::optional<int> ExitForParse(const ParseResult& r);

// Parses argv into *out (defaults for what is absent). Never throws, never exits.
ParseResult ParseServerOptions(int argc, const char* const* argv, ServerOptions* out);

// Checks the cross-field rules (also applied by ParseServerOptions).
core::Status ValidateOptions(const ServerOptions& o);
// The ranges of --rebalance-s, --rebalance-threshold and --migrate-margin (server and replay).
core::Status ValidateLocalityFlags(double rebalance_s, double rebalance_threshold, float margin);

}  // namespace sv
