// Replay: aftershock-replay's engine. It re-executes the game a server recorded in a data
// directory (its command log and checkpoints: a trace), offline and at full speed, through the
// server's own frame phases: per logged tick the master applies the world part as logged
// (durability::ApplyLoggedWorldPart: leaves, joins, world phase), then every frame thread runs
// its players' logged commands under the chosen locking scheme (FrameExecutor, the server's
// request phase with its RegionLocker), then builds and encodes the snapshot of every player
// that sent a command in that tick (FrameExecutor, the server's reply phase) into memory. The
// phases are separated by the server's three barriers (A: world part done, B: commands done,
// C: replies done) and timed by its PhaseClock into its ServerStats, so the stats JSON is the
// server's (stats_report.h) plus the replay's figures.
//
// Order: one thread runs a tick's commands in their logged exec_seq order, which reproduces the
// recorded state exactly. Several threads run each player's commands in that order on the
// player's thread (--assign: block or round-robin by slot = player id - 1, or locality by the
// replayed positions, LocalityAssignment as the server) and let the locks order the rest, as the live
// server did: conflicting commands may then run in another order than logged and the state
// may differ (docs/recovery.md, "Replaying a trace"). With --order log each thread waits until
// every command logged before its next one has run (turn_), so any thread count replays the
// recorded game, still each command on its player's thread under its locks.
//
// The data directory is only read: world.id (never created), the backups, the log (a torn tail
// is reported, never cut) and the recorded hash of the last tick: hash.log's (the live hashes,
// when the server ran with --hash-log), else that of a backup of the last tick.
//
// Threading: Create, Run, Report and world() on one controlling thread; Run starts and joins
// the frame threads.
#pragma once

#include <atomic>
#include <barrier>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "maps/map.h"
#include "server/collision/collision_world.h"
#include "server/core/status.h"
#include "server/durability/durability.h"
#include "server/durability/tick_record.h"
#include "server/game/world.h"
#include "server/protocol/snapshot_codec.h"
#include "server/sv/frame_executor.h"
#include "server/sv/frame_shared.h"
#include "server/sv/locality.h"
#include "server/sv/replay_options.h"
#include "server/sv/server_options.h"
#include "server/sv/server_stats.h"
#include "server/sv/stats_report.h"
#include "server/vis/pvs.h"

namespace sv {

class Replay {
 public:
  // Checks the options and the directory, builds the world of the directory's configuration
  // (world.id) on options.map_path with its PVS, restores the newest backup at or before
  // from_tick (or starts from the initial world), replays serially and untimed up to from_tick,
  // and reads the logged ticks after it, up to to_tick, into memory. A missing, foreign or
  // damaged directory is an error naming the file; nothing is written into it.
  static core::Status Create(const ReplayOptions& options, std::unique_ptr<Replay>* out);
  ~Replay();

  // Replays the ticks read by Create on options.threads frame threads, timed. Once. An error if
  // a logged world part no longer applies (the state diverged from the recorded one).
  core::Status Run();

  // The server's stats report of the replayed range with the replay's figures (after Run).
  StatsReport Report() const;
  const game::World& world() const { return *world_; }
  // How the state at from_tick was reached: the backup loaded (if any) and the ticks applied.
  const durability::WorldRecoveryReport& start_report() const { return start_report_; }
  uint64_t first_tick() const { return ticks_.empty() ? 0 : ticks_.front().tick; }
  uint64_t last_tick() const { return ticks_.empty() ? 0 : ticks_.back().tick; }

 private:
  struct LoggedTick {
    uint64_t tick = 0;
    durability::TickRecord record;
  };
  // One frame thread's scratch (its own; summed after the threads join).
  struct alignas(64) ThreadScratch {
    std::vector<PlayerCommand> commands;
    std::vector<size_t> log_index;  // --order log: commands[i] is the tick's log_index[i]-th
    std::vector<game::EntityId> requesters;
    proto::EncodedSnapshot encoded;
    uint64_t snapshot_bytes = 0;
  };

  explicit Replay(const ReplayOptions& options);
  core::Status BuildWorld();
  core::Status LoadTrace();
  void ReadRecordedHashes();
  // Without a hash.log line for last_tick(): the hash of a backup of that tick, if one verifies.
  void HashBackupOfLastTick();

  void FrameThread(int index, std::barrier<>* barrier);
  // Master, before barrier A: sums the closed frame's counters, applies ticks_[k]'s world part.
  void WorldPart(size_t k, PhaseClock* clock);
  // Notes ticks_[k - 1], the frame closed before tick k's world part, with population_; whether
  // its population was steady (false for k == 0: no frame closed).
  bool NoteClosedTick(size_t k);
  // The thread's request phase: its players' commands of the tick, in logged order.
  void RequestPhase(int index, const durability::TickRecord& record, ThreadScratch* scratch,
                    PhaseClock* clock);
  // The thread's reply phase: a snapshot for each player that sent a command in the tick.
  void ReplyPhase(int index, ThreadScratch* scratch, PhaseClock* clock);
  int ThreadFor(game::EntityId player) const;

  const ReplayOptions options_;
  ServerOptions server_options_;  // what FrameShared hands the executors (locking, radius)
  maps::Map map_;
  std::unique_ptr<collision::CollisionWorld> collision_;
  vis::Pvs pvs_;
  std::unique_ptr<game::World> world_;
  std::unique_ptr<LocalityAssignment> locality_;  // --assign locality (master: world part)
  ServerStats stats_;
  FrameShared shared_;
  std::vector<std::unique_ptr<FrameExecutor>> executors_;
  std::vector<FrameExecutor*> executor_ptrs_;
  std::vector<LoggedTick> ticks_;  // the timed range, consecutive ticks
  std::vector<ThreadScratch> scratch_;  // by thread index; each thread touches its own

  // Per player id: its snapshot encoder, the last snapshot encoded for it (the client's ack:
  // an ideal client acknowledges every snapshot) and the tick it last sent a command in.
  // Written by the player's thread only (reply and request phases), reset by the master on join.
  std::vector<proto::SnapshotEncoder> encoders_;
  std::vector<uint32_t> last_snapshot_;
  std::vector<uint64_t> requested_tick_;

  durability::WorldRecoveryReport start_report_;
  std::atomic<bool> failed_{false};
  // --order log: index in the tick's command list of the next command to run. Reset by the master
  // in the world part; in the request phase the thread that ran command k stores k + 1 (release)
  // and the owner of command k + 1 waits for it (acquire).
  std::atomic<size_t> turn_{0};
  core::Status run_status_;    // the master's world-part error, read after the threads join
  uint64_t frame_start_ns_ = 0;  // master
  PopulationWatch population_{1};  // master; sized to the trace's tick rate by Create
  bool ran_ = false;
  double wall_s_ = 0;
  uint64_t snapshot_bytes_ = 0;
  uint64_t recorded_hash_ = 0;
  // Where recorded_hash_ came from: "hash.log" or the backup's file name; empty: no recorded hash.
  std::string recorded_hash_source_;
  game::WorldConfig config_;  // the directory's configuration (BuildWorld)
  uint64_t state_hash_ = 0;
};

}  // namespace sv
