// Durability: the bridge between the game World and recovery/. At start-up it recovers the
// world from a data directory (newest valid backup, then the logged ticks after it replayed
// through ApplyTick); then, per tick, it logs the tick's record, lets the frame wait for it to be
// durable, and runs the checkpointer at tick boundaries (its hook is the World's write hook).
//
// Per tick t (log ticks are consecutive, one per server frame, starting at recovered_tick() + 1):
//   world part + request phase           (ApplyLeave/ApplyJoin/ApplyWorldPhase, commands)
//   AppendTickRecord(t, record)          master, no command running: log the record
//   WaitDurable(t)                       sync mode: before any reply reflecting tick t leaves
//   replies                              read-only
//   TickBoundary(t)                      master, no worker writing: checkpoint point
// Any error (failed fsync, ENOSPC, a failed checkpoint write) comes back as a Status; it is
// sticky, and the server must stop rather than go on as if durable.
//
// Threading: Open, AppendTickRecord, TickBoundary, Close on the frame orchestrator's serial
// thread (the master); WaitDurable and stats from any thread. The World's write hook (installed by Open)
// runs on worker threads. The World must outlive the Durability (the destructor removes the hook).
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "recovery/checkpointer.h"
#include "recovery/env.h"
#include "recovery/log_writer.h"
#include "server/core/mutex.h"
#include "server/core/status.h"
#include "server/core/thread_annotations.h"
#include "server/durability/replay_check.h"
#include "server/durability/tick_record.h"
#include "server/game/world.h"

namespace durability {

struct DurabilityOptions {
  recovery::Env* env = recovery::Env::Posix();
  std::string data_dir = "./data";  // created (with parents) if missing
  recovery::Algorithm algorithm = recovery::Algorithm::kCou;
  recovery::SyncMode sync_mode = recovery::SyncMode::kSync;
  int checkpoint_interval_ms = 0;   // 0: next checkpoint as soon as the previous is durable
  int async_flush_ms = 200;         // kAsync: log fdatasync interval
  uint64_t segment_bytes = 64ull << 20;
  // If not empty: a real file (not through env) to which AppendTickRecord appends "tick hash\n"
  // (decimal log tick, 16 hex digits of World::StateHash after the tick), flushed to the OS but
  // not synced, before the tick's record is logged. For crash tests; costs one hash per tick.
  std::string hash_log_path;
  // Threads that replay the log's commands at start-up, 1..kMaxReplayThreads (parallel_replay.h):
  // 1 replays serially; more replay each tick's commands of disjoint regions at once, with the
  // same resulting state. Open refuses other values (InvalidArgument).
  int replay_threads = 1;
  // With replay_threads > 1: true (the server's choice) replays each tick the way measured to be
  // faster as recovery goes (ParallelReplay::Options::adaptive); false puts every tick with
  // enough commands on the pool (to measure the pool itself).
  bool adaptive_replay = true;
  // If set, Open runs the replay check (ReplayCheck) while or after recovering, before it opens
  // the writers: it must make a World of this directory's map and configuration, in its initial
  // state, which the check restores the older backup into. It may be called on a thread of its
  // own while recovery runs (check_beside_min_span_ms), so it must not touch the world being
  // recovered. Read only; it costs a second world, the older backup's read, the log after it
  // read again, and the ticks between the two backups replayed serially.
  std::function<core::Status(std::unique_ptr<game::World>*)> make_check_world;
  // With make_check_world: a check that differs makes Open fail (Corruption) before the writers
  // open, so nothing is appended to a directory this binary does not replay faithfully.
  bool refuse_differing_replay = false;
  // With make_check_world and replay_threads > 1: a check that replays at least this much game
  // (its two backups' ticks apart, times the world's tick) runs on one of the replay threads,
  // beside recovery, which replays on the others; a shorter one runs after recovery, which then
  // has them all (Open says why). Tests set 0 to run every check beside recovery.
  double check_beside_min_span_ms = 1000;
};

// What start-up recovery did.
struct WorldRecoveryReport {
  bool found_state = false;      // the directory held a backup or log records
  bool from_checkpoint = false;
  int backup_index = -1;         // backup used, -1: none (replayed from the initial world)
  uint64_t checkpoint_tick = 0;  // log tick of the loaded backup (0: none)
  // World::StateHash of that backup before any replay, if RecoverWorldOptions::hash_checkpoint
  // (Durability::Open: with make_check_world); else 0.
  uint64_t checkpoint_state_hash = 0;
  uint64_t ticks_replayed = 0;
  uint64_t recovered_tick = 0;   // the world is the state after this log tick
  int32_t world_tick = 0;        // Globals::tick of the recovered world
  double restore_ms = 0;         // backup read, verify, copy, relink
  double replay_ms = 0;          // decode + ApplyTick of every replayed tick
  int replay_threads = 1;        // DurabilityOptions::replay_threads
  uint64_t commands_replayed = 0;
  // Game time of the replayed ticks (ticks_replayed * the world's tick_ms) / replay_ms: how many
  // times faster than the live server (at its nominal tick rate) the log was replayed. 0 if
  // nothing was replayed.
  double speed_x_realtime = 0;
  // Parallel replay only (ParallelReplay::Stats): ticks and commands the pool replayed, how many
  // of those ticks it linked from the records' live lock order (the others by the walk), the sum
  // of those ticks' longest dependency chains (replay_pool_commands / replay_critical_path bounds
  // the speed-up any thread count could give on them), and how often the walk had to wait.
  uint64_t replay_parallel_ticks = 0;
  uint64_t replay_pool_commands = 0;
  uint64_t replay_lock_order_ticks = 0;
  // Pool ticks whose lock order was over leaves finer than this server's tree
  // (--areanode-depth below the one the log was written with): the walk replayed them.
  uint64_t replay_coarse_tree_ticks = 0;
  uint64_t replay_cross_waits = 0;   // on those ticks: commands that waited on another stream
  uint64_t replay_unmet_waits = 0;   // and how often a thread found such a wait unmet
  uint64_t replay_blocker_runs = 0;  // commands a waiting thread ran for another stream
  uint64_t replay_critical_path = 0;
  uint64_t replay_dispatch_stalls = 0;
  double total_ms = 0;           // the whole Open
  uint64_t state_hash = 0;       // World::StateHash after recovery
  bool torn_tail_cut = false;    // where it was: in notes
  std::vector<std::string> notes;  // backups skipped and why, the tail that was cut
  ReplayCheck replay_check;        // Durability::Open with make_check_world
};

// How RecoverWorld reads a data directory.
struct RecoverWorldOptions {
  recovery::Env* env = recovery::Env::Posix();
  std::string data_dir;
  bool repair_tail = true;  // false: nothing is written (a torn tail is only reported)
  uint64_t max_checkpoint_tick = UINT64_MAX;  // use only backups of this tick or earlier
  uint64_t last_tick = UINT64_MAX;  // hand over logged ticks up to this one only (all are validated)
  // Hash the restored backup (WorldRecoveryReport::checkpoint_state_hash; one pass over the state).
  bool hash_checkpoint = false;
};

// Applies one logged tick (decoded) to the world; Durability passes ApplyTick.
using LoggedTickFn = std::function<core::Status(uint64_t tick, const TickRecord& record)>;

// Restores the newest valid backup allowed by `options` into `world` (checking that it holds a
// state of this map and configuration, then relinking), and hands every logged tick after it to
// `apply`, in order. The one recovery path of the server (Durability::Open) and of
// aftershock-replay. report->recovered_tick is the last tick handed over (or the backup's). On
// an error, the report still says which backup was loaded (from_checkpoint, backup_index,
// checkpoint_tick) and why others were skipped (notes).
// Does not check world.id: the caller does (CheckOrCreateIdentity or CheckIdentity).
core::Status RecoverWorld(const RecoverWorldOptions& options, game::World* world,
                          const LoggedTickFn& apply, WorldRecoveryReport* report);

// RecoverWorld from the backup of exactly log tick `tick`, read only (no torn tail is cut): into
// `world`, a fresh world of the directory's configuration, and `apply` gets the logged ticks
// after it up to `last_tick` (none if it is `tick`; the rest of the log is validated, not
// decoded). report->checkpoint_state_hash is the backup's hash. NotFound, saying why, if no backup
// of that tick verifies (nothing is applied then); another error if the log after it does not.
// The replay check and aftershock-replay's recorded hash.
core::Status RestoreBackupOfTick(recovery::Env* env, const std::string& data_dir, uint64_t tick,
                                 uint64_t last_tick, game::World* world, const LoggedTickFn& apply,
                                 WorldRecoveryReport* report);

struct DurabilityStats {
  recovery::CheckpointStats checkpoint;
  recovery::LogWriter::Stats log;
  uint64_t ticks_logged = 0;
  uint64_t durable_tick = 0;
  double log_append_ms_total = 0;   // inside AppendTickRecord (encode, hash line, queue)
  double wait_durable_ms_total = 0;
  double wait_durable_ms_max = 0;
};

class Durability {
 public:
  // Creates data_dir if missing, checks that it belongs to this world (world.id), recovers the
  // world if the directory holds state, runs the replay check if options.make_check_world is set
  // (its outcome goes in report->replay_check; it is an error only if it differs and
  // options.refuse_differing_replay), opens the log and the checkpointer and installs the world's
  // write hook. On error the World may be partly restored and must not be served.
  // `world` must outlive the Durability, or its Close: Close (and so the destructor) removes the
  // hooks from the world.
  static core::Status Open(const DurabilityOptions& options, game::World* world,
                           WorldRecoveryReport* report, std::unique_ptr<Durability>* out);
  // Recovers `world` from options.data_dir as Open does, but writes nothing: the directory must
  // already hold world.id (InvalidArgument otherwise), a torn log tail is reported in the notes
  // but not cut, and no log or checkpointer is opened. For recovering one directory again and
  // again: the recovery benchmark, and tests that compare replay thread counts.
  static core::Status RecoverReadOnly(const DurabilityOptions& options, game::World* world,
                                      WorldRecoveryReport* report);
  ~Durability();  // Close(), ignoring its status
  Durability(const Durability&) = delete;
  Durability& operator=(const Durability&) = delete;

  // The log tick of the recovered (or initial) state, fixed after Open: the first record logged
  // is recovered_tick() + 1.
  uint64_t recovered_tick() const { return recovered_tick_; }

  // Logs tick `tick` (recovered_tick() + 1 first, then consecutive). Call when the tick's commands have all run and
  // none is running. Returns the log's sticky error.
  core::Status AppendTickRecord(uint64_t tick, const TickRecord& record);
  // Blocks until tick is durable in the configured mode (sync: fdatasync'ed; async and off
  // return at once). Returns the log's sticky error.
  core::Status WaitDurable(uint64_t tick);
  // True if WaitDurable(tick) would return OK at once (sync: the tick is fdatasync'ed; other
  // modes: the log has no error). Never blocks; any thread.
  bool IsDurable(uint64_t tick) const;
  // The state is consistent as of `tick` and no worker writes: may start a checkpoint.
  core::Status TickBoundary(uint64_t tick);
  // Blocks until no checkpoint is in flight (tests, orderly shutdown).
  core::Status WaitCheckpointIdle();

  uint64_t durable_tick() const { return log_->durable_tick(); }
  // OK, or the first sticky error of the log or the checkpointer.
  core::Status status() const;
  DurabilityStats stats() const;

  // Stops the checkpointer (waiting for a checkpoint in flight), flushes and closes the log,
  // removes the write hook. Idempotent.
  core::Status Close();

 private:
  Durability(const DurabilityOptions& options, game::World* world);
  core::Status OpenWriters();

  const DurabilityOptions options_;
  game::World* const world_;
  uint64_t recovered_tick_ = 0;
  std::unique_ptr<recovery::LogWriter> log_;
  std::unique_ptr<recovery::Checkpointer> checkpointer_;
  std::FILE* hash_log_ = nullptr;
  std::string payload_;  // AppendTickRecord scratch
  bool closed_ = false;

  // Counters written by the master and WaitDurable callers, read by stats() from any thread.
  mutable core::Mutex stats_mu_;
  uint64_t ticks_logged_ GUARDED_BY(stats_mu_) = 0;
  double log_append_ms_total_ GUARDED_BY(stats_mu_) = 0;
  double wait_durable_ms_total_ GUARDED_BY(stats_mu_) = 0;
  double wait_durable_ms_max_ GUARDED_BY(stats_mu_) = 0;
};

}  // namespace durability
