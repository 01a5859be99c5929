// Recover: choose the backup, validate the log, load the image, replay. The log is validated
// (pass 1 of ScanLog) before any record is replayed, so a damaged log stops start-up cleanly.
#include "recovery/recover.h"

#include <chrono>
#include <cstring>
#include <memory>

#include "recovery/backup_format.h"
#include "recovery/byte_buffer.h"
#include "server/core/steady_clock.h"

namespace recovery {

namespace bf = backup_format;

using Clock = std::chrono::steady_clock;

core::Status Recover(const RecoverOptions& options, void* base, const RecordFn& replay,
                     RecoveryReport* report) {
  *report = RecoveryReport{};
  if (options.object_count == 0 || options.object_size == 0 || base == nullptr) {
    return core::Status::InvalidArgument("recover: need the state geometry and memory");
  }
  const Clock::time_point t0 = Clock::now();
  // Newest valid backup first; a damaged one is skipped with a note.
  struct Candidate {
    int index;
    bf::Header header;
  };
  std::vector<Candidate> candidates;
  for (const bf::HeaderRead& r : bf::ReadHeaders(options.env, options.dir)) {
    const std::string name = bf::BackupFileName(r.index);
    if (!r.status.ok()) {
      report->notes.push_back("skipped " + name + ": " + r.status.ToString());
    } else if (r.header.tick > options.max_checkpoint_tick) {
      report->notes.push_back("passed over " + name + ": its tick " +
                              std::to_string(r.header.tick) + " is after " +
                              std::to_string(options.max_checkpoint_tick));
    } else {
      candidates.push_back({r.index, r.header});
    }
  }
  std::sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
    return a.header.sequence > b.header.sequence;
  });
  // Scratch for the candidates (LoadBackup writes every byte before it says OK): not zeroed
  // first, and populated at once (byte_buffer.h), not faulted in a page at a time by the read.
  const size_t image_bytes = options.object_count * options.object_size;
  ByteBuffer image;
  if (core::Status s = image.Allocate(image_bytes, "recover: the backup image"); !s.ok()) return s;
  for (const Candidate& c : candidates) {
    bf::Header h;
    core::Status s = bf::LoadBackup(options.env, JoinPath(options.dir, bf::BackupFileName(c.index)),
                                    options.object_count, options.object_size, image.data(), &h);
    if (s.code() == core::Status::Code::kInvalidArgument) return s;  // wrong geometry: refuse
    if (!s.ok()) {
      report->notes.push_back("skipped " + bf::BackupFileName(c.index) + ": " + s.ToString());
      continue;
    }
    report->from_checkpoint = true;
    report->backup_index = c.index;
    report->checkpoint_tick = h.tick;
    break;
  }
  report->restore_ms = core::MsSince(t0);

  // Validate the log (cutting a torn tail) and replay what follows the checkpoint.
  LogScanOptions scan;
  scan.repair_tail = options.repair_tail;
  scan.after_tick = report->checkpoint_tick;
  LogScanReport log;
  bool loaded = false;  // a record came: the log after the checkpoint is valid
  core::Status s = ScanLog(options.env, options.dir, scan,
                           [&](uint64_t tick, std::string_view payload) -> core::Status {
    if (!loaded) {  // the log is valid: only now touch the caller's memory
      if (report->from_checkpoint) std::memcpy(base, image.data(), image_bytes);
      loaded = true;
    }
    if (tick > options.last_tick) return core::Status::OK();  // neither decoded nor replayed
    report->last_tick = tick;
    ++report->records_replayed;
    return replay(tick, payload);
  }, &log);
  if (!loaded && s.ok() && report->from_checkpoint) std::memcpy(base, image.data(), image_bytes);
  if (log.truncated) {
    report->truncated_tail = true;
    report->notes.push_back(std::string(options.repair_tail ? "cut" : "found") + " a torn tail of " +
                            std::to_string(log.truncated_bytes) + " bytes at offset " +
                            std::to_string(log.truncated_offset) + " of " + log.truncated_file);
  }
  if (!s.ok()) return s;
  if (report->records_replayed == 0) report->last_tick = report->checkpoint_tick;
  if (!report->from_checkpoint && !loaded && log.last_tick > 0) {
    // Can only happen if the log starts after tick 1 (ScanLog checks continuity from tick 1).
    return core::Status::Corruption("no valid backup and the log does not start at tick 1");
  }
  return core::Status::OK();
}

}  // namespace recovery
