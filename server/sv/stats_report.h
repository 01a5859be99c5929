// StatsReport: a consistent-enough copy of ServerStats taken at one moment, its JSON form
// (schema: docs/stats.md), the one-line console summary, and atomic publication of the file.
// Pure functions over values; safe on any thread.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "server/core/status.h"
#include "server/durability/durability.h"
#include "server/sv/server_stats.h"

namespace sv {

struct ReportInfo {
  int threads = 1;
  std::string locking, frame_mode, assign, map;
  int tick_hz = 0;
  int areanode_depth = 0;
  int leaf_count = 0;
  int max_players = 0;
  int max_records = 0;
  bool instrument = true;
  double uptime_s = 0;
  uint16_t lobby_port = 0;             // as bound
  std::vector<uint16_t> worker_ports;  // as bound, by worker index
  uint16_t metrics_port = 0;           // as bound; 0: no metrics endpoint
};

// Durability figures (only with a data directory).
struct DurabilityReport {
  bool enabled = false;
  std::string data_dir, algorithm, mode;
  int interval_ms = 0;
  durability::WorldRecoveryReport recovery;
  durability::DurabilityStats stats;
};

// The junk filter's counters (JunkCounters), and their sum.
struct JunkReport {
  uint64_t dropped = 0;
  uint64_t short_datagrams = 0, oversize = 0, unreadable = 0, bad_header = 0, bad_connect = 0,
           unknown_peer = 0, connectionless_bad = 0, connectionless_limited = 0, connect_capped = 0;
  uint64_t half_open_expired = 0, half_open_evicted = 0, half_open_max = 0;
};

// aftershock-replay's figures (docs/recovery.md, "Replaying a trace"), written after the
// server's fields when enabled.
struct ReplayFigures {
  bool enabled = false;
  std::string data_dir;
  uint64_t from_tick = 0, to_tick = 0;  // the timed range is (from_tick, to_tick]
  uint64_t ticks = 0;                   // ticks replayed in the timed range
  double wall_s = 0;                    // wall time of the timed range
  double speed_x_realtime = 0;          // ticks * tick length / wall_s
  uint64_t state_hash = 0;              // World::StateHash after to_tick
  bool has_recorded_hash = false;       // the live server's hash of to_tick is known
  uint64_t recorded_state_hash = 0;
  std::string recorded_hash_source;     // "hash.log", a backup's file name, or "none"
  bool order_as_recorded = false;       // one thread: commands ran in exec_seq order
  uint64_t commands_refused = 0;        // commands the game refused in replay (0 unless diverged)
  uint64_t snapshot_bytes = 0;          // encoded snapshots, all threads
};

struct StatsReport {
  ReportInfo info;
  uint64_t players = 0, max_players_online = 0;
  uint64_t frames = 0, world_ticks = 0, requests = 0, commands = 0, replies = 0;
  uint64_t kill_events = 0, kill_events_dropped = 0;
  uint64_t invalid_packets = 0, chat_dropped = 0, kicked = 0, joins = 0, join_refusals = 0, leaves = 0;
  JunkReport junk;
  struct Records {
    uint64_t offline = 0, capacity = 0, evicted = 0, new_identity_refusals = 0;
  } records;  // docs/stats.md, `records`
  std::array<uint64_t, kPhaseCount> total_ns{};                 // summed over threads
  std::vector<std::array<uint64_t, kPhaseCount>> thread_ns;     // per thread
  std::vector<uint64_t> thread_requests, thread_commands, thread_replies, thread_frames;
  struct FrameSummary {
    uint64_t count = 0;
    double mean_ms = 0, p50_ms = 0, p99_ms = 0, max_ms = 0;
  } frame;
  double rptf_mean = 0, rptf_stddev = 0, rptf_mean_spread = 0;
  double leaves_per_request = 0, leaves_per_request_pct = 0, relock_pct = 0,
         shared_leaves_pct = 0;
  uint64_t leaf_acquisitions = 0, lock_retries = 0;
  uint64_t waited_commands = 0;   // commands that blocked on a lock another thread held
  double waited_commands_pct = 0;  // of the commands executed
  struct AssignmentFigures {       // docs/stats.md, `assignment`
    double exec_imbalance_pct = 0;   // sum over frames of (most - fewest) commands per thread,
                                     // in % of the sum of their means
    double exec_imbalance_steady_pct = 0;  // the same over steady-population frames only
    uint64_t steady_frames = 0;            // those frames (PopulationWatch)
    uint64_t routed_commands = 0;    // run on another thread than the port's (locality)
    double routed_commands_pct = 0;  // of the commands executed
    uint64_t migrations = 0, rebalances = 0, leaves_moved = 0;
    double migrations_per_s = 0;     // over uptime_s
  } assignment;
  DurabilityReport durability;
  ReplayFigures replay;
};

StatsReport TakeReport(const ServerStats& stats, const ReportInfo& info);

// Percentages of `ns` (sum 100 when any time was recorded, else all 0).
std::array<double, kPhaseCount> Percentages(const std::array<uint64_t, kPhaseCount>& ns);

std::string ToJson(const StatsReport& r);

// "players 16 | 30.0 frames/s | 480 req/s | frame p99 1.20 ms | lock 3.1% | wait 12.0%": rates
// are over the interval since `prev`.
std::string ConsoleLine(const StatsReport& prev, const StatsReport& cur);


}  // namespace sv
