// LogWriter: the logical log of ticks. The game appends one opaque payload per tick (its ordered
// commands, joins, leaves); a log thread writes batches to segment files and group-commits them
// with one fdatasync per batch. Durability modes (docs/recovery.md, "Durability modes"):
//   sync  - a tick is durable once its record is fdatasync'ed; the server must WaitDurable(tick)
//           before any reply that depends on the tick leaves.
//   async - the log thread writes and fdatasyncs every async_flush_ms; up to that much is lost.
//   off   - written to the OS, never synced: survives a process crash, not a power cut.
//           durable_tick() then means "handed to the OS".
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "recovery/env.h"
#include "server/core/mutex.h"
#include "server/core/status.h"
#include "server/core/thread_annotations.h"

namespace recovery {

enum class SyncMode { kSync, kAsync, kOff };
// "sync" | "async" | "off".
core::Status ParseSyncMode(std::string_view name, SyncMode* out);
const char* SyncModeName(SyncMode d);

struct LogOptions {
  Env* env = Env::Posix();
  std::string dir;                          // must exist; segments are created inside
  SyncMode sync_mode = SyncMode::kSync;
  int async_flush_ms = 10;                  // kAsync: interval between fdatasyncs
  uint64_t segment_bytes = 64ull << 20;     // rotate to a new segment past this size; at most
                                            // log_format::kMaxSegmentBytes
  uint64_t next_tick = 1;                   // tick of the first record Append will accept
};

class LogWriter {
 public:
  struct Stats {
    uint64_t records = 0;
    uint64_t bytes = 0;    // record bytes written (headers included)
    uint64_t syncs = 0;    // fdatasync calls on segments
    uint64_t sync_ns = 0;  // wall time spent in those fdatasync calls, summed (steady clock)
    uint64_t batches = 0;  // group commits
    uint64_t segments_created = 0;
    uint64_t segments_deleted = 0;
  };

  // Opens a new segment (number = highest existing + 1) and starts the log thread. Recovery must
  // have run first (it truncates a torn tail; the old segments stay for replay and are removed
  // later by RemoveObsoleteSegments).
  static core::Status Open(const LogOptions& options, std::unique_ptr<LogWriter>* out);
  ~LogWriter();  // Close(), ignoring its status
  LogWriter(const LogWriter&) = delete;
  LogWriter& operator=(const LogWriter&) = delete;

  // Queues the record of `tick`; returns at once. Ticks must be consecutive (every tick is
  // logged, with an empty payload if nothing happened). Returns the sticky error once the log
  // has failed. Call from one thread (the tick thread).
  core::Status Append(uint64_t tick, std::string_view payload);

  // Highest tick whose record is durable (per mode); 0 if none yet. Any thread.
  uint64_t durable_tick() const;
  bool IsDurable(uint64_t tick) const { return durable_tick() >= tick; }
  // Blocks until `tick` is durable, or returns the log's error. Any thread. In sync mode a
  // caller that finds records queued and no write under way writes and syncs them itself.
  core::Status WaitDurable(uint64_t tick);
  // Makes everything appended so far durable (syncs even in kAsync; in kOff only writes).
  core::Status Flush();

  // Deletes the segments whose every record has tick <= oldest_checkpoint_tick, the tick of the
  // OLDER of the two valid backups (recovery may fall back to it). Never the active segment.
  // Any thread (the checkpoint writer calls it after each commit).
  core::Status RemoveObsoleteSegments(uint64_t oldest_checkpoint_tick);

  // Flushes, syncs (unless kOff) and stops the log thread. Idempotent.
  core::Status Close();
  // OK, or the first error (sticky: an I/O error or failed fsync is never retried).
  core::Status status() const;
  Stats stats() const;

 private:
  struct Segment {
    uint64_t first_tick;
    bool known;  // header readable
  };
  struct Pending {
    uint64_t tick;
    std::string bytes;
  };

  explicit LogWriter(const LogOptions& options);
  core::Status OpenSegment(uint64_t number, uint64_t first_tick) EXCLUDES(mu_);  // log thread / Open only
  core::Status WriteBatch(std::vector<Pending>* batch, bool sync) EXCLUDES(mu_);  // the writer only
  // Becomes the writer (!writing_, queue not empty): writes and syncs the queue with mu_
  // released, then publishes durable_tick_ or the error. False on error.
  bool WriteQueued() REQUIRES(mu_);
  void ThreadMain() EXCLUDES(mu_);

  const LogOptions options_;

  mutable core::Mutex mu_;
  core::CondVar work_cv_;
  core::CondVar durable_cv_;
  std::vector<Pending> queue_ GUARDED_BY(mu_);
  uint64_t last_appended_ GUARDED_BY(mu_) = 0;
  uint64_t durable_tick_ GUARDED_BY(mu_) = 0;
  uint64_t flush_requested_ GUARDED_BY(mu_) = 0;  // tick up to which a Flush wants a sync
  bool closing_ GUARDED_BY(mu_) = false;
  bool writing_ GUARDED_BY(mu_) = false;  // a thread owns the writer state below
  core::Status error_ GUARDED_BY(mu_);
  Stats stats_ GUARDED_BY(mu_);
  std::map<uint64_t, Segment> segments_ GUARDED_BY(mu_);  // every segment file in dir
  uint64_t active_number_ GUARDED_BY(mu_) = 0;

  // Writer state: owned by the thread that set writing_ (the log thread or a WaitDurable
  // leader), and by Open before the log thread starts.
  std::unique_ptr<File> active_;
  std::vector<Pending> batch_;  // the batch being written (its capacity kept between batches)
  std::string write_buf_;       // records of the batch bound for one segment
  uint64_t active_size_ = 0;
  std::thread thread_;
  bool closed_ = false;  // Close() ran (called from the owner thread only)
};

}  // namespace recovery
