// Log reading for recovery and aftershock-inspect. ScanLog validates every segment in a
// directory, cuts a torn tail off the newest segment (the only write recovery ever makes), and
// hands the records after a given tick to a callback in order. Damage anywhere else is reported
// as Corruption naming the file and offset. Not thread-safe against a running LogWriter.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "recovery/env.h"
#include "server/core/status.h"

namespace recovery {

// What one segment holds, as found by a scan.
struct SegmentInfo {
  std::string file;           // file name, e.g. "log-000003.aslog"
  uint64_t number = 0;        // from the file name
  bool header_ok = false;
  uint64_t header_first_tick = 0;
  uint64_t records = 0;       // valid records before any damage
  uint64_t first_tick = 0;    // of the valid records (0 if none)
  uint64_t last_tick = 0;
  uint64_t size_bytes = 0;
  bool damaged = false;
  uint64_t damage_offset = 0;
  std::string damage;         // what is wrong at damage_offset
  bool tail_only = false;     // damage is a torn tail: no valid record follows it
};

// Checks one segment's bytes and calls fn (may be empty) for each valid record until the first
// damage, which is described in *info. Returns the callback's first error, else OK.
core::Status ParseSegment(std::string_view data, const std::string& file, uint64_t number,
                          SegmentInfo* info,
                          const std::function<core::Status(uint64_t, std::string_view)>& fn);

// Reads the segment file `name` in `dir` and checks it as ParseSegment does, into *info. At
// most log_format::kMaxSegmentFileBytes are read: a longer file is damaged there (a tail), if
// not sooner, and info->size_bytes is its whole size. Returns the open's or the read's error;
// damage is in *info, not in the status. aftershock-inspect's per-segment check.
core::Status CheckSegmentFile(Env* env, const std::string& dir, const std::string& name, uint64_t number,
                              SegmentInfo* info);

struct LogScanOptions {
  bool repair_tail = true;  // truncate (and sync) a torn tail of the newest segment
  uint64_t after_tick = 0;  // deliver only records with tick > after_tick
  // The segments' bytes the scan keeps in memory between checking them and delivering their
  // records. Segments past this are read (and checksummed) again when their records are due, so
  // a log that was never cut by a checkpoint (--checkpoint none, days of play) is replayed in
  // bounded memory instead of the whole log held at once. Those reads go into one buffer,
  // reused, and when a single segment is due and not kept, pass 2 takes its bytes from that
  // buffer unread. 0 holds a recovery's memory to its largest segment, but reading and
  // checksumming again cost more than the memory saved where a crashed server's pages were just
  // freed (docs/recovery.md, "Reading the log").
  uint64_t max_kept_bytes = 512ull << 20;
};

struct LogScanReport {
  bool truncated = false;             // a torn tail was cut (or would be, without repair_tail)
  std::string truncated_file;
  uint64_t truncated_offset = 0;
  uint64_t truncated_bytes = 0;
  uint64_t last_tick = 0;             // highest valid tick in the log (0 if none)
};

using RecordFn = std::function<core::Status(uint64_t tick, std::string_view payload)>;

// Validates the log first, then delivers records with tick > after_tick in order. They must be
// consecutive from after_tick + 1 (a gap is Corruption). A damaged record anywhere but at the
// very end of the newest segment is Corruption: "<file> offset N: ...; use aftershock-inspect
// DIR". fn may be empty (validate only). With after_tick > 0, the records at or before it are
// not read: only their headers, to find the next record (a length that runs past the file or a
// tick out of order is still damage there), so a flipped bit in their payloads goes unseen, as
// in a log that recovery does not need. aftershock-inspect checks every record.
core::Status ScanLog(Env* env, const std::string& dir, const LogScanOptions& options,
                     const RecordFn& fn, LogScanReport* report);

}  // namespace recovery
