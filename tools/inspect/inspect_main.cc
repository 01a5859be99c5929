// aftershock-inspect DIR: reads a recovery directory without changing it and reports its world
// identity (world.id), both backups (tick, validity), every log segment (tick range, record
// count) and any damage with its offset, then what recovery would do. Exit status: 0 clean,
// 1 damage found (or a directory the server would refuse), 2 usage/IO error.
#include <algorithm>
#include <cxxopts.hpp>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "recovery/backup_format.h"
#include "recovery/env.h"
#include "recovery/log_format.h"
#include "recovery/log_reader.h"
#include "server/durability/world_identity.h"

namespace {

namespace bf = recovery::backup_format;
namespace lf = recovery::log_format;

struct BackupState {
  bool present = false;
  bool valid = false;
  bf::Header header;
  std::string problem;
};

// Prints the two backups; returns how many are damaged.
int ReportBackups(recovery::Env* env, const std::string& dir, const std::vector<std::string>& names,
                  BackupState state[2]) {
  std::printf("Backups:\n");
  int damaged = 0;
  for (int b = 0; b < bf::kBackupCount; ++b) {
    const std::string name = bf::BackupFileName(b);
    BackupState& s = state[b];
    s.present = env->FileExists(recovery::JoinPath(dir, name));
    if (!s.present) {
      std::printf("  %-18s absent\n", name.c_str());
      continue;
    }
    core::Status st = bf::LoadBackup(env, recovery::JoinPath(dir, name), 0, 0, nullptr, &s.header);
    s.valid = st.ok();
    if (s.valid) {
      std::printf("  %-18s valid    tick %llu  sequence %llu  %llu objects x %u bytes\n", name.c_str(),
                  static_cast<unsigned long long>(s.header.tick),
                  static_cast<unsigned long long>(s.header.sequence),
                  static_cast<unsigned long long>(s.header.object_count), s.header.object_size);
    } else {
      ++damaged;
      s.problem = st.ToString();
      std::printf("  %-18s DAMAGED  %s\n", name.c_str(), s.problem.c_str());
    }
  }
  for (const std::string& n : names) {
    if (n.ends_with(".ckpt.tmp")) {
      std::printf("  %-18s leftover of an interrupted full checkpoint (ignored by recovery)\n", n.c_str());
    }
  }
  return damaged;
}

// Prints world.id; returns 1 if the server and aftershock-replay would refuse the directory for
// it (unreadable or unparsable, or absent beside a log or backups), else 0.
int ReportIdentity(recovery::Env* env, const std::string& dir, const std::vector<std::string>& names) {
  std::printf("World identity:\n");
  durability::WorldIdentity id;
  const core::Status s = durability::ReadIdentity(env, dir, &id);
  const char* name = durability::kIdentityFileName;
  if (s.ok()) {
    std::printf("  %-18s map %016llx  %u objects x %u bytes  %u players  tick %u ms  seed %llu\n", name,
                static_cast<unsigned long long>(id.map_hash), id.object_count, id.object_size,
                id.max_players, id.tick_ms, static_cast<unsigned long long>(id.seed));
    return 0;
  }
  const bool absent = std::find(names.begin(), names.end(), name) == names.end();
  if (absent && !durability::HoldsState(names)) {
    std::printf("  %-18s absent (nothing else either: the server writes it at its first start)\n", name);
    return 0;
  }
  if (absent) {
    std::printf("  %-18s ABSENT   aftershock-server and aftershock-replay refuse a directory that holds a "
                "log or backups without it (only aftershock-ckpt-bench writes such directories)\n", name);
  } else {
    std::printf("  %-18s DAMAGED  %s\n", name, s.ToString().c_str());
  }
  return 1;
}

struct LogSummary {
  int damaged = 0;
  bool torn_tail_only = false;
  uint64_t last_tick = 0;
  std::map<uint64_t, recovery::SegmentInfo> segments;
};

LogSummary ReportLog(recovery::Env* env, const std::string& dir, const std::vector<std::string>& names) {
  LogSummary sum;
  for (const std::string& n : names) {
    uint64_t number;
    if (!lf::ParseSegmentFileName(n, &number)) continue;
    recovery::SegmentInfo info;
    if (core::Status s = recovery::CheckSegmentFile(env, dir, n, number, &info); !s.ok()) {
      info.damaged = true, info.damage = s.ToString();
    }
    sum.segments[number] = info;
  }
  std::printf("Log segments: %zu\n", sum.segments.size());
  uint64_t prev_last = 0;
  for (auto it = sum.segments.begin(); it != sum.segments.end(); ++it) {
    const recovery::SegmentInfo& info = it->second;
    const bool newest = std::next(it) == sum.segments.end();
    std::printf("  %-18s ", info.file.c_str());
    if (info.records > 0) {
      std::printf("ticks %llu..%llu  %llu records  %llu bytes",
                  static_cast<unsigned long long>(info.first_tick),
                  static_cast<unsigned long long>(info.last_tick),
                  static_cast<unsigned long long>(info.records),
                  static_cast<unsigned long long>(info.size_bytes));
    } else {
      std::printf("no records  %llu bytes", static_cast<unsigned long long>(info.size_bytes));
    }
    if (info.records > 0 && prev_last != 0 && info.first_tick != prev_last + 1) {
      ++sum.damaged;
      std::printf("\n    DAMAGE: ticks %llu..%llu are missing before this segment",
                  static_cast<unsigned long long>(prev_last + 1),
                  static_cast<unsigned long long>(info.first_tick - 1));
    }
    if (info.damaged) {
      ++sum.damaged;
      const bool torn = newest && info.tail_only;
      sum.torn_tail_only = torn && sum.damaged == 1;
      std::printf("\n    DAMAGE at offset %llu: %s%s", static_cast<unsigned long long>(info.damage_offset),
                  info.damage.c_str(),
                  torn ? " (torn tail of the newest segment: recovery will cut it)"
                       : " (recovery will refuse to start)");
    }
    std::printf("\n");
    if (info.records > 0) prev_last = info.last_tick;
  }
  sum.last_tick = prev_last;
  return sum;
}

}  // namespace

int main(int argc, char** argv) {
  cxxopts::Options opts("aftershock-inspect", "Report the backups and log segments of an Aftershock recovery directory (read-only).");
  opts.add_options()("h,help", "show this help")("dir", "recovery directory", cxxopts::value<std::string>());
  opts.parse_positional({"dir"});
  opts.positional_help("DIR");
  std::string dir;
  try {
    auto result = opts.parse(argc, argv);
    if (result.count("help")) {
      std::printf("%s\nExit status: 0 clean, 1 damage found (or world.id missing beside a log or backups: the\n"
                  "server would refuse the directory), 2 usage or I/O error.\n", opts.help().c_str());
      return 0;
    }
    if (!result.count("dir")) throw cxxopts::exceptions::exception("missing DIR");
    if (!result.unmatched().empty()) {
      throw cxxopts::exceptions::exception("one DIR only: unexpected argument '" + result.unmatched()[0] + "'");
    }
    dir = result["dir"].as<std::string>();
  } catch (const cxxopts::exceptions::exception& e) {
    std::fprintf(stderr, "aftershock-inspect: %s\n\n%s", e.what(), opts.help().c_str());
    return 2;
  }
  recovery::Env* env = recovery::Env::Posix();
  std::vector<std::string> names;
  if (core::Status s = env->ListDir(dir, &names); !s.ok()) {
    std::fprintf(stderr, "aftershock-inspect: %s\n", s.ToString().c_str());
    return 2;
  }
  std::sort(names.begin(), names.end());
  std::printf("Recovery directory %s\n", dir.c_str());
  const int bad_identity = ReportIdentity(env, dir, names);
  BackupState backups[2];
  const int bad_backups = ReportBackups(env, dir, names, backups);
  const LogSummary log = ReportLog(env, dir, names);

  // What recovery would do (newest valid backup by sequence, then the log after it).
  int use = -1;
  for (int b = 0; b < 2; ++b) {
    if (backups[b].valid && (use < 0 || backups[b].header.sequence > backups[use].header.sequence)) use = b;
  }
  const uint64_t from = use >= 0 ? backups[use].header.tick : 0;
  if (use >= 0) std::printf("Recovery would load %s (tick %llu)", bf::BackupFileName(use).c_str(),
                            static_cast<unsigned long long>(from));
  else std::printf("Recovery would start from the initial state (no valid backup)");
  if (log.damaged > 0 && !log.torn_tail_only) std::printf(" but stop: the log is damaged\n");
  else if (log.last_tick > from)
    std::printf(" and replay ticks %llu..%llu\n", static_cast<unsigned long long>(from + 1),
                static_cast<unsigned long long>(log.last_tick));
  else std::printf(" and replay nothing\n");
  const int damage = bad_identity + bad_backups + log.damaged;
  std::printf("%s\n", damage == 0 ? "No damage found." : "Damage found (see above).");
  return damage == 0 ? 0 : 1;
}
