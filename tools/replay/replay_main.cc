// aftershock-replay: parses flags, loads the trace a server recorded in --data-dir (read only),
// replays it through the server's frame phases (sv::Replay) and writes the stats JSON.
// Exit code (as aftershock-server's): 0 replayed (whatever the hash), 2 bad flags, 1 the
// directory or map was refused, 3 the replay diverged (a logged world part no longer applied),
// 4 replayed but the --stats-out file could not be written.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "server/core/atomic_file.h"
#include "server/sv/replay.h"
#include "server/sv/replay_options.h"
#include "server/sv/server_options.h"
#include "server/sv/stats_report.h"

namespace {

// True if `file` would land inside `dir` (the data directory is never written).
bool InsideDir(const std::string& file, const std::string& dir) {
  std::error_code ec;
  const std::filesystem::path d = std::filesystem::weakly_canonical(dir, ec);
  if (ec) return false;
  const std::filesystem::path parent =
      std::filesystem::weakly_canonical(std::filesystem::absolute(file, ec).parent_path(), ec);
  if (ec) return false;
  for (std::filesystem::path p = parent; !p.empty(); p = p.parent_path()) {
    if (p == d) return true;
    if (p == p.parent_path()) break;
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  sv::ReplayOptions options;
  if (const std::optional<int> code = sv::ExitForParse(sv::ParseReplayOptions(argc, argv, &options))) {
    return *code;
  }
  auto logger = spdlog::stderr_color_mt("replay");
  logger->set_level(spdlog::level::from_str(options.log_level));
  spdlog::set_default_logger(logger);
  if (!options.stats_out.empty() && InsideDir(options.stats_out, options.data_dir)) {
    spdlog::critical("--stats-out {} is inside the data dir {}, which replay never writes",
                     options.stats_out, options.data_dir);
    return 2;
  }
  // The PVS cache is written when the map's visibility is built: never into the data dir either.
  if (const std::string vis = sv::ResolveVisCacheDir(options.vis_cache_dir, /*fallback=*/"");
      !vis.empty() && InsideDir(vis + "/cache.pvs", options.data_dir)) {
    spdlog::critical("--vis-cache {} is inside the data dir {}, which replay never writes (give "
                     "another directory, or none to build the visibility without a cache)",
                     vis, options.data_dir);
    return 2;
  }

  std::unique_ptr<sv::Replay> replay;
  core::Status s = sv::Replay::Create(options, &replay);
  if (!s.ok()) {
    spdlog::critical("cannot replay: {}", s.ToString());
    spdlog::shutdown();
    return 1;
  }
  s = replay->Run();
  const sv::StatsReport report = replay->Report();
  core::Status ws = core::Status::OK();
  if (!options.stats_out.empty()) {
    ws = core::WriteFileAtomically(options.stats_out, sv::ToJson(report));
    if (!ws.ok()) spdlog::critical("stats: {}", ws.ToString());
  }
  if (!s.ok()) {
    spdlog::critical("replay stopped: {}", s.ToString());
    spdlog::shutdown();
    return 3;
  }
  if (!ws.ok()) {  // the range was replayed, but the figures asked for are not there
    spdlog::shutdown();
    return 4;
  }
  const sv::ReplayFigures& p = report.replay;
  spdlog::info("replayed ticks {}..{} ({} ticks, {} commands) on {} thread(s), {}: {:.2f} s, "
               "{:.1f}x real time; state hash {:016x}, recorded {} ({})",
               p.from_tick + 1, p.to_tick, p.ticks, report.commands, options.threads,
               sv::LockingName(options.locking), p.wall_s, p.speed_x_realtime, p.state_hash,
               p.has_recorded_hash
                   ? fmt::format("{:016x} from {}", p.recorded_state_hash, p.recorded_hash_source)
                   : "unknown",
               !p.has_recorded_hash                     ? "no hash.log line or backup of that tick"
               : p.state_hash == p.recorded_state_hash ? "match"
                                                        : "differs");
  spdlog::shutdown();
  return 0;
}
