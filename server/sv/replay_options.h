// ReplayOptions: every knob of aftershock-replay, and the command-line parser that fills it
// (cxxopts). Plain value type; the parser is pure (no globals, never exits), so tests call it.
#pragma once

#include <cstdint>
#include <string>

#include "server/core/status.h"
#include "server/sv/server_options.h"

namespace sv {

struct ReplayOptions {
  std::string data_dir;                        // required: a directory a server wrote
  std::string map_path = "maps/dm_arena.map";  // the map the server ran (world.id checks it)
  int threads = 1;                             // frame threads, 1..64 (may exceed the cores)
  LockingScheme locking = LockingScheme::kSequential;
  Assignment assign = Assignment::kBlock;
  // --order log: each tick's commands run in the recorded order across the threads (a thread
  // waits its turn, still under its locks), so the replay plays the recorded game at any thread
  // count; free: each thread runs its commands as soon as it can, as the server would.
  bool log_order = false;
  double rebalance_s = 1;          // --assign locality, as the server's (at the trace's tick rate)
  double rebalance_threshold = 0.1;
  float migrate_margin = 64;
  int areanode_depth = 4;
  float interest_radius = 2048;
  uint64_t from_tick = 0;          // replayed untimed up to this tick; the timed range is after it
  uint64_t to_tick = UINT64_MAX;   // last tick replayed (default: the log's last)
  std::string stats_out;           // empty: no JSON file
  // Where the map's PVS is cached: "" the user's cache (as the server), "none" no cache. Never
  // the data directory, which replay does not write.
  std::string vis_cache_dir;
  std::string log_level = "info";
};

// Parses argv into *out (defaults for what is absent) and checks the cross-field rules
// (ValidateReplayOptions). Never throws, never exits.
ParseResult ParseReplayOptions(int argc, const char* const* argv, ReplayOptions* out);

// --data-dir given; threads 1..64; sequential only with one thread; depth 1..12; from <= to.
core::Status ValidateReplayOptions(const ReplayOptions& o);

}  // namespace sv
