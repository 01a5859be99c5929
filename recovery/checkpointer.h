// Checkpointer: consistent checkpoints of the game state into the double backup, taken at tick
// boundaries and written by an asynchronous writer thread (Vaz Salles et al., VLDB'09, sec. 4.1
// framework; Cao et al., SIGMOD'11, Wait-Free Ping-Pong). The state is object_count fixed-size
// objects at `base` (object i at base + i * object_size); recovery/ never knows what they mean.
//
// Threading contract:
//   OnUpdate(i)       - any worker thread, BEFORE it writes object i. Different threads may call it
//                       concurrently for different objects; one writer per object at a time.
//   TickBoundary(t)   - the frame orchestrator, between frames, when no worker is writing.
//   everything else   - the owner thread (the one that called Open), never concurrently with
//                       TickBoundary.
// The writer thread reads `base` only through the algorithm's protocol (see docs/recovery.md).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
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
  kPingPong,  // Wait-Free Ping-Pong, adapted to a before-write hook (docs/recovery.md)
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

  // Hook: object i is about to be written. Cheap (a bit test) unless this is the first write to
  // i during a cou checkpoint, when it saves the old value.
  void OnUpdate(uint32_t object) {
    if (algorithm_ == Algorithm::kCou) OnUpdateCou(object);
    else if (algorithm_ == Algorithm::kPingPong) MarkBit(tick_dirty_.get(), object);
  }

  // The state is consistent as of `tick`. May start a checkpoint of it. Returns the sticky error
  // of the writer (the server may stop, or go on without checkpoints).
  core::Status TickBoundary(uint64_t tick);

  // Blocks until no checkpoint is in flight. Returns the sticky error.
  core::Status WaitIdle();
  // Waits for the checkpoint in flight, stops the writer. Idempotent.
  core::Status Close();
  core::Status status() const;
  CheckpointStats stats() const;

 private:
  // Per-object latch state for cou (docs/recovery.md "Copy-on-Update protocol").
  enum ObjState : uint8_t { kIdle, kPending, kSaving, kSaved, kCopying };
  struct Job {
    uint64_t tick;
    int backup;
    bool full;
    uint64_t sequence;
    int pong;                       // pingpong: the copy handed to the writer
    std::vector<uint64_t> objects;  // cou: bitset of the objects to write
    std::chrono::steady_clock::time_point start;
  };

  Checkpointer(const CheckpointOptions& options, uint8_t* base);
  static void MarkBit(std::atomic<uint64_t>* words, uint32_t i) {
    std::atomic<uint64_t>& w = words[i >> 6];
    const uint64_t bit = uint64_t{1} << (i & 63);
    if ((w.load(std::memory_order_relaxed) & bit) == 0) w.fetch_or(bit, std::memory_order_relaxed);
  }
  void OnUpdateCou(uint32_t object);
  void CopyTickDirtyToPing();                         // pingpong, at the boundary
  Job MakeJob(uint64_t tick);                         // at the boundary, writer idle
  void WriterMain() EXCLUDES(mu_);
  core::Status RunJob(Job* job) EXCLUDES(mu_);        // writer thread
  core::Status WriteSet(Job* job, const std::vector<uint64_t>& set, core::Status s)
      EXCLUDES(mu_);                                  // writer thread
  void ReadObjectForWriter(uint64_t i, char* dst);    // writer thread: value as of job tick

  const CheckpointOptions options_;
  const Algorithm algorithm_;
  uint8_t* const base_;
  const uint64_t n_;
  const uint32_t size_;
  const size_t words_;

  // Shared with worker threads (hooks).
  std::unique_ptr<std::atomic<uint64_t>[]> dirty_[2];  // cou: changed since backup b's checkpoint
  std::unique_ptr<std::atomic<uint8_t>[]> state_;      // cou: per-object latch
  std::unique_ptr<std::atomic<uint64_t>[]> tick_dirty_;  // pingpong: written during this tick
  std::vector<uint8_t> shadow_;                        // cou: saved old values
  std::atomic<uint64_t> saved_on_update_{0};

  // Naive: snapshot taken at the boundary. Pingpong: the two copies, their bitsets, and the
  // writer-private consistent image with per-backup "needs writing" bitsets.
  std::vector<uint8_t> snapshot_;
  std::vector<uint8_t> copies_[2];
  std::vector<uint64_t> copy_bits_[2];
  int ping_ = 0;
  std::vector<uint8_t> image_;
  std::vector<uint64_t> need_[2];

  // Boundary-thread bookkeeping.
  int next_backup_ = 0;
  uint64_t sequence_ = 0;
  bool full_done_[2] = {false, false};  // a full checkpoint went to backup b since Open
  std::chrono::steady_clock::time_point last_start_{};
  std::vector<char> staging_;           // writer thread: cou objects on their way to disk

  mutable core::Mutex mu_;
  core::CondVar cv_;
  std::unique_ptr<Job> job_ GUARDED_BY(mu_);  // set by TickBoundary, cleared by the writer
  bool busy_ GUARDED_BY(mu_) = false;         // a job is queued or running
  bool stop_ GUARDED_BY(mu_) = false;
  core::Status error_ GUARDED_BY(mu_);
  CheckpointStats stats_ GUARDED_BY(mu_);
  uint64_t committed_tick_[2] GUARDED_BY(mu_) = {0, 0};
  bool committed_valid_[2] GUARDED_BY(mu_) = {false, false};

  BackupWriter backup_writer_;  // writer thread only
  std::thread writer_;
  bool closed_ = false;
};

}  // namespace recovery
