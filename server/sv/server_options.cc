// Command-line parsing for aftershock-server (cxxopts): flags, defaults, cross-field rules.
#include "server/sv/server_options.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cxxopts.hpp>
#include <spdlog/spdlog.h>
#include <thread>
#include <vector>

#include "server/areanode/areanode_tree.h"
#include "server/core/atomic_file.h"
#include "server/core/flag_error.h"
#include "server/core/int_range.h"
#include "server/durability/parallel_replay.h"

namespace sv {

const char* LockingName(LockingScheme s) {
  switch (s) {
    case LockingScheme::kSequential: return "sequential";
    case LockingScheme::kGlobal: return "global";
    case LockingScheme::kAreanode: return "areanode";
    case LockingScheme::kAreanodeOpt: return "areanode-opt";
  }
  return "?";
}

bool ParseLockingName(std::string_view name, LockingScheme* out) {
  for (LockingScheme s : {LockingScheme::kSequential, LockingScheme::kGlobal,
                          LockingScheme::kAreanode, LockingScheme::kAreanodeOpt}) {
    if (name == LockingName(s)) {
      *out = s;
      return true;
    }
  }
  return false;
}

const char* FrameModeName(FrameMode m) { return m == FrameMode::kRequest ? "request" : "fixed"; }

const char* AssignmentName(Assignment a) {
  switch (a) {
    case Assignment::kBlock: return "block";
    case Assignment::kRoundRobin: return "round-robin";
    case Assignment::kLocality: return "locality";
  }
  return "?";
}

int DefaultAreanodeDepth(Assignment assign) {
  return assign == Assignment::kLocality ? kLocalityAreanodeDepth : areanode::kDefaultDepth;
}

bool ParseAssignmentName(std::string_view name, Assignment* out) {
  for (Assignment a : {Assignment::kBlock, Assignment::kRoundRobin, Assignment::kLocality}) {
    if (name == AssignmentName(a)) {
      *out = a;
      return true;
    }
  }
  return false;
}

std::string ResolveVisCacheDir(const std::string& flag, const std::string& fallback) {
  if (flag == "none") return "";
  if (!flag.empty()) return flag;
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg != nullptr && *xdg != '\0') return std::string(xdg) + "/aftershock/vis";
  const char* home = std::getenv("HOME");
  if (home != nullptr && *home != '\0') return std::string(home) + "/.cache/aftershock/vis";
  return fallback;
}

vis::PvsProgressReporter LogVisibilityProgress() {
  vis::PvsProgressReporter progress;
  progress.fn = [](const vis::PvsProgress& p) {
    spdlog::info("visibility: {}", vis::DescribeProgress(p));
  };
  return progress;
}

int WorkerForSlot(Assignment assign, int slot, int threads, int max_players) {
  // Locality: the port only sends the player's replies, so spread the ports evenly at every fill
  // level; block's would put every reply of a half-full server on worker 0.
  if (assign == Assignment::kRoundRobin || assign == Assignment::kLocality) return slot % threads;
  return static_cast<int>(static_cast<int64_t>(slot) * threads / max_players);
}

LocalityOptions LocalityOptionsOf(const ServerOptions& o) {
  LocalityOptions l;
  l.rebalance_ticks = std::max(1, static_cast<int>(std::lround(o.rebalance_s * o.tick_hz)));
  l.rebalance_threshold = o.rebalance_threshold;
  l.margin = o.migrate_margin;
  return l;
}

namespace {

int HardwareThreads() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

cxxopts::Options MakeOptions() {
  cxxopts::Options o("aftershock-server",
                     "Aftershock: a multithreaded Quake-style dedicated server (ENet, UDP).\n"
                     "The lobby listens on --port; worker thread i on --port + 1 + i. With --port 0 the system "
                     "picks every port; the stats file's `ports` names them.");
  // clang-format off
  o.add_options()
    ("map", "Quake .map file to serve", cxxopts::value<std::string>()->default_value("maps/dm_arena.map"))
    ("bind", "IPv4 address to bind the lobby and workers to", cxxopts::value<std::string>()->default_value("0.0.0.0"))
    ("port", "Base UDP port: the lobby (joins, getchallenge/status queries)", cxxopts::value<int>()->default_value(std::to_string(proto::kDefaultBasePort)))
    ("threads", "Worker threads, each with its own UDP port (default: hardware cores; 1 with --locking sequential)", cxxopts::value<int>())
    ("max-players", "Most players online at once", cxxopts::value<int>()->default_value("64"))
    ("max-records", "Offline players' records kept; when full, the one seen least recently is evicted (1..1000000)",
     cxxopts::value<int>()->default_value("20000"))
    ("new-identity-burst", "New player names one source IPv4 address may bring at once", cxxopts::value<double>()->default_value("256"))
    ("new-identity-per-min", "New player names per minute one source address gains back", cxxopts::value<double>()->default_value("60"))
    ("locking", "Command locking: sequential (1 thread, no locks), global (one lock per command), "
                "areanode (leaf locks of the move box; long-range actions lock all leaves), "
                "areanode-opt (projectiles lock an expanded box, hitscan a directional box)",
     cxxopts::value<std::string>()->default_value("areanode-opt"))
    ("areanode-depth", "Areanode tree depth (1..12): 2^depth leaves to lock (default: 4, or 11 with "
                       "--assign locality)", cxxopts::value<int>())
    ("frame-mode", "fixed: every worker in every frame at --tick-hz; request: the first thread "
                   "that sees a request becomes master of the frame (the paper's server)",
     cxxopts::value<std::string>()->default_value("fixed"))
    ("tick-hz", "Frames per second in fixed mode; in request mode the world phase runs at most this often (sv_mintic)",
     cxxopts::value<int>()->default_value("30"))
    ("assign", "Player to worker assignment: block (the paper's), round-robin, or locality (each "
               "thread owns a connected part of the map's areanode leaves and runs the commands of "
               "the players in it; docs/architecture.md)", cxxopts::value<std::string>()->default_value("block"))
    ("rebalance-s", "--assign locality: seconds between checks of the players per thread",
     cxxopts::value<double>()->default_value("1"))
    ("rebalance-threshold", "--assign locality: move leaves between threads when (most - fewest) "
                            "players per thread exceeds this share of the mean",
     cxxopts::value<double>()->default_value("0.1"))
    ("migrate-margin", "--assign locality: a player moves to another thread's leaf only once it is "
                       "this many units away from every leaf of its own thread (hysteresis)",
     cxxopts::value<float>()->default_value("64"))
    ("duration", "Serve this many seconds, then shut down cleanly (0 = until SIGINT/SIGTERM)", cxxopts::value<double>()->default_value("0"))
    ("stats-out", "Write statistics as JSON to this file (atomically) every --stats-interval and at exit; schema in docs/stats.md",
     cxxopts::value<std::string>()->default_value(""))
    ("stats-interval", "Seconds between stats JSON rewrites and console summary lines", cxxopts::value<double>()->default_value("5"))
    ("log-level", "trace, debug, info, warn, error, critical or off", cxxopts::value<std::string>()->default_value("info"))
    ("instrument", "Per-phase time breakdown: on or off (off only to measure its overhead)", cxxopts::value<std::string>()->default_value("on"))
    ("region-check", "Abort if a command touches an entity outside its declared region (debug)")
    ("interest-radius", "Snapshot interest radius in units", cxxopts::value<float>()->default_value("2048"))
    ("vis-cache", "Directory of the map visibility (PVS) cache (default: "
                  "$XDG_CACHE_HOME/aftershock/vis or ~/.cache/aftershock/vis; none: build at every start)", cxxopts::value<std::string>()->default_value(""))
    ("seed", "World random seed", cxxopts::value<uint64_t>()->default_value("1"))
    ("hostname", "Name reported by the status query", cxxopts::value<std::string>()->default_value("aftershock"))
    ("data-dir", "Directory of the command log and checkpoints; recovered at start-up if it holds state "
                 "(\"\" = no durability: nothing recovered or written)",
     cxxopts::value<std::string>()->default_value("./data"))
    ("checkpoint", "Checkpoint algorithm: cou (copy-on-update), naive (full snapshot), pingpong "
                   "(wait-free ping-pong) or none (log only)", cxxopts::value<std::string>()->default_value("cou"))
    ("checkpoint-interval-ms", "Minimum time between checkpoint starts (0 = start the next as soon as "
                               "the previous one is durable)", cxxopts::value<int>()->default_value("0"))
    ("durability", "sync: no reply reflects a command before its frame's log record is on disk; "
                   "async: log synced every --async-flush-ms; off: log written, never synced",
     cxxopts::value<std::string>()->default_value("sync"))
    ("async-flush-ms", "Log sync interval with --durability async", cxxopts::value<int>()->default_value("200"))
    ("metrics-port", "Serve Prometheus metrics at http://BIND:PORT/metrics on this TCP port (absent: "
                     "off; 0: the system picks it, and the stats file's ports.metrics names it); the "
                     "list is in docs/stats.md", cxxopts::value<int>())
    ("agones", "Tell the Agones SDK sidecar (localhost:$AGONES_SDK_HTTP_PORT, default 9358) Ready once "
               "recovered and listening, Health every --agones-health-ms, Shutdown after a clean --duration end")
    ("agones-health-ms", "Agones Health ping interval", cxxopts::value<int>()->default_value("2000"))
    ("replay-threads", "Threads that replay the log at start-up (1..64; default: hardware cores): "
                       "each tick's commands of disjoint regions replay at once, with the same result as 1; "
                       "a recovery check of 1 s of game or more takes one of them",
     cxxopts::value<int>())
    ("recovery-check", "on: after recovering, replay the log from the older backup to the newer one "
                       "and compare their state hashes (is this build replaying the game the writing "
                       "server played?), and report it; refuse: the same, and if they differ, do not "
                       "start (exit 1); off: skip it", cxxopts::value<std::string>()->default_value("on"))
    ("hash-log", "Append \"log-tick state-hash\" for every frame to DATA_DIR/hash.log (crash tests)")
    ("h,help", "Print this help");
  // clang-format on
  return o;
}

ParseResult Error(const std::string& msg, const std::string& help) {
  return {ParseOutcome::kError, "error: " + msg + "\n\n" + help};
}

}  // namespace

// The settings' ranges: ValidateOptions checks them and its errors quote them.
constexpr core::IntRange kThreads{"--threads", 1, 64};
constexpr core::IntRange kMaxPlayers{"--max-players", 1, 4096};
constexpr core::IntRange kMaxRecords{"--max-records", 1, 1000000};
constexpr core::IntRange kAreanodeDepth{"--areanode-depth", areanode::kMinDepth, areanode::kMaxDepth};
constexpr core::IntRange kTickHz{"--tick-hz", 1, 1000};
constexpr core::IntRange kAsyncFlushMs{"--async-flush-ms", 1, 60000};
constexpr core::IntRange kAgonesHealthMs{"--agones-health-ms", 10, 600000};
constexpr core::IntRange kPort{"--port", 0, 65535};
constexpr core::IntRange kMetricsPort{"--metrics-port", 0, 65535};
constexpr core::IntRange kReplayThreads{"--replay-threads", 1, durability::kMaxReplayThreads};

std::optional<int> ExitForParse(const ParseResult& r) {
  if (r.outcome == ParseOutcome::kRun) return std::nullopt;
  std::fputs(r.text.c_str(), r.outcome == ParseOutcome::kHelp ? stdout : stderr);
  return r.outcome == ParseOutcome::kHelp ? 0 : 2;
}

core::Status ValidateLocalityFlags(double rebalance_s, double rebalance_threshold, float margin) {
  if (!(rebalance_s > 0 && rebalance_s <= 3600)) {
    return core::Status::InvalidArgument("--rebalance-s must be in (0, 3600]");
  }
  if (!(rebalance_threshold >= 0 && rebalance_threshold <= 100)) {
    return core::Status::InvalidArgument("--rebalance-threshold must be in [0, 100]");
  }
  if (!(margin >= 0 && margin <= 65536)) {
    return core::Status::InvalidArgument("--migrate-margin must be in [0, 65536]");
  }
  return core::Status::OK();
}

core::Status ValidateOptions(const ServerOptions& o) {
  if (core::Status s = kThreads.Check(o.threads); !s.ok()) return s;
  if (o.locking == LockingScheme::kSequential && o.threads != 1) {
    return core::Status::InvalidArgument("--locking sequential runs one thread: use --threads 1");
  }
  if (core::Status s = kMaxPlayers.Check(o.max_players); !s.ok()) return s;
  if (core::Status s = kMaxRecords.Check(o.max_records); !s.ok()) return s;
  if (!(o.new_identity_burst >= 1) || !(o.new_identity_per_min >= 0) ||
      !std::isfinite(o.new_identity_burst) || !std::isfinite(o.new_identity_per_min)) {
    return core::Status::InvalidArgument("--new-identity-burst must be >= 1 and --new-identity-per-min >= 0");
  }
  if (core::Status s = kAreanodeDepth.Check(o.areanode_depth); !s.ok()) return s;
  if (core::Status s = kTickHz.Check(o.tick_hz); !s.ok()) return s;
  if (static_cast<int>(o.port) + o.threads > 65535) {
    return core::Status::InvalidArgument("--port must leave room for one port per thread");
  }
  // Checked here, not only when the ports open: that is after recovery, which has opened the log.
  if (in_addr a; !o.bind_address.empty() && inet_pton(AF_INET, o.bind_address.c_str(), &a) != 1) {
    return core::Status::InvalidArgument("--bind must be an IPv4 address such as 0.0.0.0 or 127.0.0.1, not '" +
                                         o.bind_address + "'");
  }
  if (!(o.duration_s >= 0) || !std::isfinite(o.duration_s)) {
    return core::Status::InvalidArgument("--duration must be >= 0");
  }
  if (!(o.stats_interval_s > 0) || !std::isfinite(o.stats_interval_s)) {
    return core::Status::InvalidArgument("--stats-interval must be > 0");
  }
  if (!(o.interest_radius > 0) || !(o.interest_radius <= 65536)) {
    return core::Status::InvalidArgument("--interest-radius must be in (0, 65536]");
  }
  if (o.checkpoint_interval_ms < 0) {
    return core::Status::InvalidArgument("--checkpoint-interval-ms must be >= 0");
  }
  if (core::Status s = kAsyncFlushMs.Check(o.async_flush_ms); !s.ok()) return s;
  if (core::Status s = kReplayThreads.Check(o.replay_threads); !s.ok()) return s;
  if (core::Status s = kAgonesHealthMs.Check(o.agones_health_ms); !s.ok()) return s;
  if (o.assign == Assignment::kLocality && o.frame_mode != FrameMode::kFixed) {
    return core::Status::InvalidArgument(
        "--assign locality needs --frame-mode fixed (request frames run only the threads that "
        "have requests, so a command could not wait for its owner)");
  }
  if (core::Status s = ValidateLocalityFlags(o.rebalance_s, o.rebalance_threshold, o.migrate_margin);
      !s.ok()) {
    return s;
  }
  if (o.hash_log && o.data_dir.empty()) {
    return core::Status::InvalidArgument("--hash-log needs a --data-dir");
  }
  return core::Status::OK();
}

ParseResult ParseServerOptions(int argc, const char* const* argv, ServerOptions* out) {
  cxxopts::Options options = MakeOptions();
  const std::string help = options.help();
  try {
    const cxxopts::ParseResult r = options.parse(argc, argv);
    if (r.count("help")) return {ParseOutcome::kHelp, help};
    if (!r.unmatched().empty()) return Error("unexpected argument '" + r.unmatched()[0] + "'", help);
    ServerOptions o;
    o.map_path = r["map"].as<std::string>();
    o.bind_address = r["bind"].as<std::string>();
    const int port = r["port"].as<int>();
    if (core::Status s = kPort.Check(port); !s.ok()) return Error(s.message(), help);
    o.port = static_cast<uint16_t>(port);
    o.max_players = r["max-players"].as<int>();
    o.max_records = r["max-records"].as<int>();
    o.new_identity_burst = r["new-identity-burst"].as<double>();
    o.new_identity_per_min = r["new-identity-per-min"].as<double>();
    const std::string locking = r["locking"].as<std::string>();
    if (!ParseLockingName(locking, &o.locking)) return Error("--locking must be sequential, global, areanode or areanode-opt, not '" + locking + "'", help);
    if (r.count("threads")) {
      o.threads = r["threads"].as<int>();
    } else {
      o.threads = o.locking == LockingScheme::kSequential ? 1 : HardwareThreads();
    }
    const std::string mode = r["frame-mode"].as<std::string>();
    if (mode == "fixed") o.frame_mode = FrameMode::kFixed;
    else if (mode == "request") o.frame_mode = FrameMode::kRequest;
    else return Error("--frame-mode must be request or fixed, not '" + mode + "'", help);
    o.tick_hz = r["tick-hz"].as<int>();
    const std::string assign = r["assign"].as<std::string>();
    if (!ParseAssignmentName(assign, &o.assign)) return Error("--assign must be block, round-robin or locality, not '" + assign + "'", help);
    o.areanode_depth = r.count("areanode-depth") ? r["areanode-depth"].as<int>() : DefaultAreanodeDepth(o.assign);
    o.rebalance_s = r["rebalance-s"].as<double>();
    o.rebalance_threshold = r["rebalance-threshold"].as<double>();
    o.migrate_margin = r["migrate-margin"].as<float>();
    o.duration_s = r["duration"].as<double>();
    o.stats_out = r["stats-out"].as<std::string>();
    if (!o.stats_out.empty()) {
      if (core::Status s = core::CheckReplaceable(o.stats_out); !s.ok()) return Error("--stats-out " + s.message(), help);
    }
    o.stats_interval_s = r["stats-interval"].as<double>();
    o.log_level = r["log-level"].as<std::string>();
    static const std::vector<std::string> kLevels = {"trace", "debug", "info", "warn",
                                                     "error", "critical", "off"};
    bool level_ok = false;
    for (const auto& l : kLevels) level_ok = level_ok || l == o.log_level;
    if (!level_ok) return Error("--log-level must be one of trace..off, not '" + o.log_level + "'", help);
    const std::string instrument = r["instrument"].as<std::string>();
    if (instrument != "on" && instrument != "off") return Error("--instrument must be on or off", help);
    o.instrument = instrument == "on";
    o.region_check = r.count("region-check") > 0;
    o.interest_radius = r["interest-radius"].as<float>();
    o.vis_cache_dir = r["vis-cache"].as<std::string>();
    o.seed = r["seed"].as<uint64_t>();
    o.hostname = r["hostname"].as<std::string>();
    o.data_dir = r["data-dir"].as<std::string>();
    core::Status ps = recovery::ParseAlgorithm(r["checkpoint"].as<std::string>(), &o.checkpoint);
    if (!ps.ok()) return Error("--checkpoint must be cou, naive, pingpong or none, not '" +
                               r["checkpoint"].as<std::string>() + "'", help);
    o.checkpoint_interval_ms = r["checkpoint-interval-ms"].as<int>();
    ps = recovery::ParseSyncMode(r["durability"].as<std::string>(), &o.sync_mode);
    if (!ps.ok()) return Error("--durability must be sync, async or off, not '" +
                               r["durability"].as<std::string>() + "'", help);
    o.async_flush_ms = r["async-flush-ms"].as<int>();
    o.hash_log = r.count("hash-log") > 0;
    const std::string check = r["recovery-check"].as<std::string>();
    if (check == "on") {
      o.recovery_check = RecoveryCheck::kOn;
    } else if (check == "off") {
      o.recovery_check = RecoveryCheck::kOff;
    } else if (check == "refuse") {
      o.recovery_check = RecoveryCheck::kRefuse;
    } else {
      return Error("--recovery-check must be on, off or refuse, not '" + check + "'", help);
    }
    o.replay_threads = r.count("replay-threads") ? r["replay-threads"].as<int>() : HardwareThreads();
    if (r.count("metrics-port") != 0) {
      const int metrics_port = r["metrics-port"].as<int>();
      if (core::Status s = kMetricsPort.Check(metrics_port); !s.ok()) return Error(s.message(), help);
      o.metrics = true;
      o.metrics_port = static_cast<uint16_t>(metrics_port);
    }
    o.agones = r.count("agones") > 0;
    o.agones_health_ms = r["agones-health-ms"].as<int>();
    const core::Status s = ValidateOptions(o);
    if (!s.ok()) return Error(s.message(), help);
    *out = o;
    return {ParseOutcome::kRun, ""};
  } catch (const cxxopts::exceptions::exception& e) {
    return Error(core::NameFlagOfBadValue(e.what(), argc, argv), help);
  }
}

}  // namespace sv
