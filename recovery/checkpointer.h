// Checkpointer: consistent checkpoints of the game state into the double backup, taken at tick
// boundaries and written by an asynchronous writer thread (Vaz Salles et al., VLDB'09, sec. 4.1
// framework; Cao et al., SIGMOD'11, Wait-Free Ping-Pong). The state is object_count fixed-size
// objects at `base` (object i at base + i * object_size); recovery/ never knows what they mean.
//
// Write protocol: every write of object i is bracketed by OnUpdate(i) before it and
// AfterUpdate(i, offset, bytes) after it, on the writing thread, before the next TickBoundary;
// or it goes through Write(i, offset, src, bytes), which does all three. cou acts in OnUpdate
// (the old value), pingpong in AfterUpdate (the new value); an algorithm that needs neither call
// returns at once.
//
// Threading contract:
//   OnUpdate(i), AfterUpdate(i, ...), Write(i, ...)
//                     - any worker thread, for its write of object i. Different threads may call
//                       them concurrently for different objects; one writer per object at a time.
//   TickBoundary(t)   - the frame orchestrator, between frames, when no worker is writing.
//   everything else   - the owner thread (the one that called Open), never concurrently with
//                       TickBoundary.
// The writer thread reads `base` only through the algorithm's protocol (see docs/recovery.md).
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "recovery/backup_writer.h"
#include "recovery/env.h"
#include "server/core/mutex.h"
#include "server/core/status.h"
#include "server/core/thread_annotations.h"

namespace recovery {

enum class Algorithm {
  kNone,      // log only: no checkpoints (recovery replays the whole log)
  kNaive,     // Naive-Snapshot: copy the whole state at the boundary, write it all in background
  kCou,       // Copy-on-Update (default): save an object's old value at its first update
  kPingPong,  // Wait-Free Ping-Pong: each write also lands in the current copy; the boundary swaps
};
core::Status ParseAlgorithm(std::string_view name, Algorithm* out);  // none|naive|cou|pingpong
const char* AlgorithmName(Algorithm a);

struct CheckpointOptions {
  Env* env = Env::Posix();
  std::string dir;
  Algorithm algorithm = Algorithm::kCou;
  uint64_t object_count = 0;
  uint32_t object_size = 0;
  // 0: start the next checkpoint at the first boundary after the previous one is durable;
  // otherwise the minimum time between checkpoint starts.
  int interval_ms = 0;
  // Called on the writer thread after each commit with the committed tick and the tick of the
  // older valid backup (0 if only one is valid): log segments with every tick <= that may go
  // (LogWriter::RemoveObsoleteSegments). Its error becomes the checkpointer's sticky error.
  std::function<core::Status(uint64_t tick, uint64_t oldest_backup_tick)> on_commit;
};

struct CheckpointStats {
  uint64_t checkpoints = 0;        // committed
  uint64_t boundaries = 0;         // TickBoundary calls
  double pause_total_ms = 0;       // time inside TickBoundary
  double pause_max_ms = 0;
  uint64_t saved_on_update = 0;    // cou: old values saved by the hook
  uint64_t objects_written = 0;
  uint64_t bytes_written = 0;      // to backup files (headers included)
  double checkpoint_total_ms = 0;  // boundary that started it -> commit
  double checkpoint_max_ms = 0;
  uint64_t last_tick = 0;          // tick of the newest committed checkpoint (0: none)
  double mean_pause_ms() const { return boundaries ? pause_total_ms / double(boundaries) : 0; }
  double mean_checkpoint_ms() const { return checkpoints ? checkpoint_total_ms / double(checkpoints) : 0; }
};

class Checkpointer {
 public:
  // Call at a tick boundary once the state at `base` is the state after `tick` (after recovery
  // and replay). Reads both backup files to learn which is valid; the first checkpoint goes to
  // the other one (never over the only valid backup), and the first checkpoint into each backup
  // after Open is a full one. `base` must outlive the Checkpointer.
  static core::Status Open(const CheckpointOptions& options, uint8_t* base, uint64_t tick,
                           std::unique_ptr<Checkpointer>* out);
  ~Checkpointer();  // Close(), ignoring its status
  Checkpointer(const Checkpointer&) = delete;
  Checkpointer& operator=(const Checkpointer&) = delete;

  // Hook: object i is about to be written. cou marks it changed (a byte store) and, only while
  // the writer has not yet passed i in a checkpoint, checks whether its old value must be saved
  // first (the first write to i in the checkpoint's write set saves it).
  void OnUpdate(uint32_t object) {
    if (algorithm_ != Algorithm::kCou) return;
    changed_[object] = 1;
    if (copied_upto_.load(std::memory_order_acquire) <= object) ProtectOldValue(object);
  }
  // Hook: bytes [offset, offset + bytes) of object i have just been written. pingpong copies the
  // 8-byte cells of i that hold them into the current (ping) copy and flags them: the write
  // itself lands in both places, so the boundary has nothing to copy. Wait-free: no lock, no
  // atomic RMW.
  void AfterUpdate(uint32_t object, uint32_t offset, uint32_t bytes) {
    if (algorithm_ == Algorithm::kPingPong) CopyToPing(object, offset, bytes);
  }
  // The whole write protocol in one call, for callers that write bytes they hold (Cao et al.'s
  // handleWrite): OnUpdate, then bytes [offset, offset + bytes) of object i := src, then
  // pingpong's copy, taken from src rather than read back from the state when the write covers
  // whole 8-byte cells. Same threading contract as OnUpdate/AfterUpdate.
  void Write(uint32_t object, uint32_t offset, const void* src, uint32_t bytes) {
    OnUpdate(object);
    std::memcpy(base_ + uint64_t{object} * size_ + offset, src, bytes);
    if (algorithm_ != Algorithm::kPingPong) return;
    if ((offset | bytes) % kCellBytes == 0) WriteCellsToPing(object, offset, src, bytes);
    else CopyToPing(object, offset, bytes);
  }

  // The state is consistent as of `tick`. May start a checkpoint of it; the writer picks it up
  // within about a millisecond. Until the writer fails it takes no lock, allocates nothing and
  // makes no system call (naive also copies the whole state here, cou builds its write set).
  // Returns the sticky error of the writer (the server may stop, or go on without checkpoints).
  core::Status TickBoundary(uint64_t tick);

  // Blocks until no checkpoint is in flight. Returns the sticky error.
  core::Status WaitIdle();
  // Waits for the checkpoint in flight, stops the writer. Idempotent.
  core::Status Close();
  core::Status status() const;
  CheckpointStats stats() const;

 private:
  struct Job {
    uint64_t tick;
    int backup;
    bool full;
    uint64_t sequence;
    int pong;  // pingpong: the copy handed to the writer
    std::chrono::steady_clock::time_point start;
  };
  // Objects staged for one write call each run: the cou writer's copies on their way to disk.
  struct StagedRun {
    uint64_t first;
    uint64_t count;
    uint64_t offset;  // in staging_
  };

  Checkpointer(const CheckpointOptions& options, uint8_t* base);
  void ProtectOldValue(uint32_t object);                  // cou hook, slow path
  void StartCouSet(bool full);                            // cou, at the boundary, writer idle
  static constexpr uint32_t kCellBytes = 8;  // pingpong's unit of copy: one word
  inline void CopyToPing(uint32_t object, uint32_t offset, uint32_t bytes);  // pingpong hook
  inline void WriteCellsToPing(uint32_t object, uint32_t offset, const void* src, uint32_t bytes);
  void MergePongIntoImage(int pong);                      // pingpong, writer thread
  Job MakeJob(uint64_t tick, std::chrono::steady_clock::time_point start);  // at the boundary, writer idle
  void WriterMain() EXCLUDES(mu_);
  core::Status RunJob(Job* job) EXCLUDES(mu_);            // writer thread
  // Writer thread: write `set` from a complete image of the job's tick (naive, pingpong).
  core::Status WriteFromImage(const uint8_t* image, const std::vector<uint64_t>& set, core::Status s)
      EXCLUDES(mu_);
  // Writer thread: write in_set_ through the cou protocol (live value or saved old value).
  core::Status WriteCouSet(core::Status s) EXCLUDES(mu_);
  core::Status FlushStaged(std::vector<StagedRun>* runs, core::Status s);  // writer thread

  const CheckpointOptions options_;
  const Algorithm algorithm_;
  uint8_t* const base_;
  const uint64_t n_;
  const uint32_t size_;
  const size_t words_;

  // Copy-on-Update (docs/recovery.md "Copy-on-Update protocol"), shared with the hooks.
  // changed_[i] = 1: written since the last checkpoint start (plain bytes: one writer per object;
  // the boundary reads and clears them when no worker runs). in_set_: the write set of the
  // checkpoint in flight, fixed at its start. pending_: in the set, and neither claimed by the
  // writer nor saved by a hook (whoever clears the bit first, by an atomic RMW, owns the old
  // value). saved_: a hook has copied the old value to shadow_ (release; the writer acquires).
  // copied_upto_: the writer is done with every object below it (release); UINT64_MAX when no
  // cou checkpoint is in flight, so the hook costs one load and one compare then.
  // Invariant: a write to object i in the set waits until i is saved or copied_upto_ > i.
  std::vector<uint8_t> changed_;
  std::vector<uint64_t> changed_before_;  // boundary thread: changed_ of the previous period
  std::vector<uint64_t> in_set_;
  std::unique_ptr<std::atomic<uint64_t>[]> pending_;
  std::unique_ptr<std::atomic<uint64_t>[]> saved_;
  // On its own cache line: the writer stores it per word while every hook loads it.
  alignas(64) std::atomic<uint64_t> copied_upto_{UINT64_MAX};
  alignas(64) std::vector<uint8_t> shadow_;

  // Naive: snapshot taken at the boundary.
  std::vector<uint8_t> snapshot_;
  // Pingpong (Cao et al. IPP-Copy). copies_[ping_] receives every write of the current period
  // (hooks); cell_written_[k] has one bit per 8-byte cell of an object (a byte per 64 bytes of
  // the object, never shared by two objects): copies_[k] holds that cell's newest value. At a
  // checkpoint start the boundary swaps ping_ (the writer is idle then); the writer merges the
  // flagged cells of the other copy into image_ (the state at the last checkpoint tick) and
  // clears their flags before it reports idle. Plain bytes, no atomics: each flag byte and cell
  // has one writer at a time, and the hand-over goes through busy_ (job_) and the frame barrier
  // that precedes TickBoundary.
  // Invariant: while a job runs, no hook touches copies_[pong] or cell_written_[pong].
  uint32_t flag_bytes_per_object_ = 0;
  std::vector<uint8_t> copies_[2];
  std::vector<uint8_t> cell_written_[2];
  int ping_ = 0;
  uint8_t* ping_copy_ = nullptr;   // copies_[ping_].data(), for the hook
  uint8_t* ping_flags_ = nullptr;  // cell_written_[ping_].data(), for the hook
  std::vector<uint8_t> image_;     // writer thread
  std::vector<uint64_t> need_[2];  // writer thread: objects backup b has not received yet

  // Boundary-thread bookkeeping.
  int next_backup_ = 0;
  uint64_t sequence_ = 0;
  bool full_done_[2] = {false, false};  // a full checkpoint went to backup b since Open
  std::chrono::steady_clock::time_point last_start_{};
  std::vector<char> staging_;           // writer thread: cou objects on their way to disk

  alignas(64) mutable core::Mutex mu_;  // its own line: both threads write it
  core::CondVar cv_;
  // The hand-over, one atomic store and no lock or wake-up on the boundary's side (WriterMain says
  // why). busy_: a job is queued or running. TickBoundary writes job_ only while busy_ is false,
  // then publishes it with busy_ = true (release); the writer reads job_ once it sees busy_ true
  // (acquire) and clears busy_ under mu_ when done (release; cv_ wakes WaitIdle and Close).
  // Invariant: while busy_ is true only the writer touches job_.
  Job job_{};
  std::atomic<bool> busy_{false};
  std::atomic<bool> failed_{false};  // error_ is set (it never clears); TickBoundary reads it
  bool stop_ GUARDED_BY(mu_) = false;
  core::Status error_ GUARDED_BY(mu_);
  CheckpointStats stats_ GUARDED_BY(mu_);  // except the boundary's three below
  // Written by TickBoundary only (load + store), read by stats().
  std::atomic<uint64_t> boundaries_{0};
  std::atomic<double> pause_total_ms_{0};
  std::atomic<double> pause_max_ms_{0};
  uint64_t committed_tick_[2] GUARDED_BY(mu_) = {0, 0};
  bool committed_valid_[2] GUARDED_BY(mu_) = {false, false};

  BackupWriter backup_writer_;  // writer thread only
  std::thread writer_;
  bool closed_ = false;
};

// Inline: it runs once per write. It copies from the live object (the new bytes are there
// already) the whole cells the write touched, and no others. The read-back can wait for the
// state's cache line (perf showed it at high update rates), which is why Write copies from the
// caller's bytes instead.
void Checkpointer::CopyToPing(uint32_t object, uint32_t offset, uint32_t bytes) {
  if (bytes == 0) return;
  const uint64_t at = uint64_t{object} * size_;
  uint8_t* copy = ping_copy_ + at;
  const uint8_t* live = base_ + at;
  uint8_t* flags = ping_flags_ + uint64_t{object} * flag_bytes_per_object_;
  const uint32_t first = offset / kCellBytes;
  const uint32_t end = (offset + bytes + kCellBytes - 1) / kCellBytes;
  const uint32_t begin_byte = first * kCellBytes;
  if (end == first + 1 && begin_byte + kCellBytes <= size_) {
    std::memcpy(copy + begin_byte, live + begin_byte, kCellBytes);
  } else {
    std::memcpy(copy + begin_byte, live + begin_byte, std::min(end * kCellBytes, size_) - begin_byte);
  }
  for (uint32_t c = first; c < end; ++c) flags[c / 8] |= static_cast<uint8_t>(1u << (c % 8));
}

// Write's pingpong part for whole cells: the same bytes into the ping copy, straight from the
// caller's source. Reading them back from the state stalled: the load could not always be served
// from the store buffer and waited for the state's cache line.
void Checkpointer::WriteCellsToPing(uint32_t object, uint32_t offset, const void* src, uint32_t bytes) {
  if (bytes == 0) return;
  std::memcpy(ping_copy_ + uint64_t{object} * size_ + offset, src, bytes);
  uint8_t* flags = ping_flags_ + uint64_t{object} * flag_bytes_per_object_;
  const uint32_t end = (offset + bytes) / kCellBytes;
  for (uint32_t c = offset / kCellBytes; c < end; ++c) flags[c / 8] |= static_cast<uint8_t>(1u << (c % 8));
}

}  // namespace recovery
