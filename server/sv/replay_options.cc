// Command-line parsing for aftershock-replay (cxxopts): flags, defaults, cross-field rules.
#include "server/sv/replay_options.h"

#include <cxxopts.hpp>
#include <vector>

#include "server/areanode/areanode_tree.h"
#include "server/core/atomic_file.h"
#include "server/core/flag_error.h"
#include "server/core/int_range.h"

namespace sv {

namespace {

constexpr core::IntRange kReplayThreads{"--threads", 1, 64};
constexpr core::IntRange kReplayDepth{"--areanode-depth", areanode::kMinDepth, areanode::kMaxDepth};

cxxopts::Options MakeReplayOptions() {
  cxxopts::Options o("aftershock-replay",
                     "Re-executes the game a server recorded in --data-dir (its command log and "
                     "checkpoints), offline and at full speed, through the server's own frame "
                     "phases: the logged world part, the commands under --locking on --threads "
                     "workers, and every requesting player's snapshot built and encoded into memory. "
                     "The data directory is only read. docs/recovery.md, \"Replaying a trace\".");
  // clang-format off
  o.add_options()
    ("data-dir", "Data directory a server wrote (world.id, log segments, backups); read only", cxxopts::value<std::string>())
    ("map", "The .map file the server ran (checked against the directory's world.id)", cxxopts::value<std::string>()->default_value("maps/dm_arena.map"))
    ("threads", "Frame threads (1..64; may exceed the machine's cores: then read the conflict figures)", cxxopts::value<int>()->default_value("1"))
    ("locking", "Command locking, as the server's: sequential (1 thread, no locks), global, areanode or areanode-opt",
     cxxopts::value<std::string>()->default_value("sequential"))
    ("assign", "Player to thread assignment, as the server's: block or round-robin (slot = player id - 1), "
               "or locality (the thread owning the leaves the player stands in, from the replayed positions)",
     cxxopts::value<std::string>()->default_value("block"))
    ("order", "free: every thread runs its players' commands as fast as it can, as the server does (the game may "
              "then differ from the recorded one); log: in the recorded order across the threads, each waiting "
              "its turn, so the recorded game is replayed at any thread count and the conflict figures are "
              "its own (times and waits then mean nothing)",
     cxxopts::value<std::string>()->default_value("free"))
    ("rebalance-s", "--assign locality: seconds of the trace between checks of the players per thread",
     cxxopts::value<double>()->default_value("1"))
    ("rebalance-threshold", "--assign locality: move leaves when (most - fewest) players per thread exceeds this share of the mean",
     cxxopts::value<double>()->default_value("0.1"))
    ("migrate-margin", "--assign locality: hysteresis in units, as the server's", cxxopts::value<float>()->default_value("64"))
    ("areanode-depth", "Areanode tree depth (1..12): 2^depth leaves to lock (default: 4, or 11 with "
                       "--assign locality, as the server's)", cxxopts::value<int>())
    ("interest-radius", "Snapshot interest radius in units (as the server's)", cxxopts::value<float>()->default_value("2048"))
    ("from-tick", "Reach this log tick untimed and serially (from the newest backup at or before it, or the "
                  "initial world), then time the ticks after it", cxxopts::value<uint64_t>()->default_value("0"))
    ("to-tick", "Last log tick replayed (default: the log's last); its state is compared with the live hash from hash.log, else with a backup of that tick", cxxopts::value<uint64_t>())
    ("stats-out", "Write the server's stats JSON plus the replay's figures to this file (docs/stats.md)",
     cxxopts::value<std::string>()->default_value(""))
    ("vis-cache", "Directory of the map visibility (PVS) cache (default: the server's, $XDG_CACHE_HOME/aftershock/vis "
                  "or ~/.cache/aftershock/vis; none: build it now); never the data directory",
     cxxopts::value<std::string>()->default_value(""))
    ("log-level", "trace, debug, info, warn, error, critical or off", cxxopts::value<std::string>()->default_value("info"))
    ("h,help", "Print this help");
  // clang-format on
  return o;
}

ParseResult ReplayError(const std::string& msg, const std::string& help) {
  return {ParseOutcome::kError, "error: " + msg + "\n\n" + help};
}

}  // namespace

core::Status ValidateReplayOptions(const ReplayOptions& o) {
  if (o.data_dir.empty()) return core::Status::InvalidArgument("--data-dir is required");
  if (core::Status s = kReplayThreads.Check(o.threads); !s.ok()) return s;
  if (o.locking == LockingScheme::kSequential && o.threads != 1) {
    return core::Status::InvalidArgument(
        "--locking sequential runs one thread: use --threads 1 or another scheme");
  }
  if (core::Status s = kReplayDepth.Check(o.areanode_depth); !s.ok()) return s;
  if (!(o.interest_radius > 0) || !(o.interest_radius <= 65536)) {  // as the server's
    return core::Status::InvalidArgument("--interest-radius must be in (0, 65536]");
  }
  if (core::Status s = ValidateLocalityFlags(o.rebalance_s, o.rebalance_threshold, o.migrate_margin);
      !s.ok()) {
    return s;
  }
  if (o.from_tick >= o.to_tick) {
    return core::Status::InvalidArgument(
        "--from-tick " + std::to_string(o.from_tick) + " must be below " +
        (o.to_tick == UINT64_MAX ? std::string("the log's last tick") : "--to-tick " + std::to_string(o.to_tick)));
  }
  return core::Status::OK();
}

ParseResult ParseReplayOptions(int argc, const char* const* argv, ReplayOptions* out) {
  cxxopts::Options options = MakeReplayOptions();
  const std::string help = options.help();
  try {
    const cxxopts::ParseResult r = options.parse(argc, argv);
    if (r.count("help")) return {ParseOutcome::kHelp, help};
    if (!r.unmatched().empty()) {
      return ReplayError("unexpected argument '" + r.unmatched()[0] + "'", help);
    }
    ReplayOptions o;
    if (r.count("data-dir")) o.data_dir = r["data-dir"].as<std::string>();
    o.map_path = r["map"].as<std::string>();
    o.threads = r["threads"].as<int>();
    const std::string locking = r["locking"].as<std::string>();
    if (!ParseLockingName(locking, &o.locking)) {
      return ReplayError("--locking must be sequential, global, areanode or areanode-opt, not '" +
                             locking + "'", help);
    }
    const std::string assign = r["assign"].as<std::string>();
    if (!ParseAssignmentName(assign, &o.assign)) {
      return ReplayError("--assign must be block, round-robin or locality, not '" + assign + "'", help);
    }
    const std::string order = r["order"].as<std::string>();
    if (order != "free" && order != "log") {
      return ReplayError("--order must be free or log, not '" + order + "'", help);
    }
    o.log_order = order == "log";
    o.rebalance_s = r["rebalance-s"].as<double>();
    o.rebalance_threshold = r["rebalance-threshold"].as<double>();
    o.migrate_margin = r["migrate-margin"].as<float>();
    o.areanode_depth = r.count("areanode-depth") ? r["areanode-depth"].as<int>() : DefaultAreanodeDepth(o.assign);
    o.interest_radius = r["interest-radius"].as<float>();
    o.from_tick = r["from-tick"].as<uint64_t>();
    if (r.count("to-tick")) {
      o.to_tick = r["to-tick"].as<uint64_t>();
      // UINT64_MAX means "the log's last" inside; no log reaches it, so it cannot be asked for.
      if (o.to_tick == UINT64_MAX) return ReplayError("--to-tick must be below 18446744073709551615", help);
    }
    o.stats_out = r["stats-out"].as<std::string>();
    if (!o.stats_out.empty()) {
      if (core::Status s = core::CheckReplaceable(o.stats_out); !s.ok()) {
        return ReplayError("--stats-out " + s.message(), help);
      }
    }
    o.vis_cache_dir = r["vis-cache"].as<std::string>();
    o.log_level = r["log-level"].as<std::string>();
    static const std::vector<std::string> kLevels = {"trace", "debug", "info", "warn",
                                                     "error", "critical", "off"};
    bool level_ok = false;
    for (const auto& l : kLevels) level_ok = level_ok || l == o.log_level;
    if (!level_ok) {
      return ReplayError("--log-level must be one of trace..off, not '" + o.log_level + "'", help);
    }
    const core::Status s = ValidateReplayOptions(o);
    if (!s.ok()) return ReplayError(s.message(), help);
    *out = o;
    return {ParseOutcome::kRun, ""};
  } catch (const cxxopts::exceptions::exception& e) {
    return ReplayError(core::NameFlagOfBadValue(e.what(), argc, argv), help);
  }
}

}  // namespace sv
