// FrameExecutor: one frame thread's request and reply phases with no network in them. It runs a
// list of player commands under the locking scheme (the paper's section 3.3: none, the global
// lock, or the command's region through a game::RegionLocker) and builds and encodes snapshots
// (InterestIndex + BuildSnapshot + SnapshotEncoder) into bytes. Where the commands come from and
// where the bytes go belong to the caller: the server's Worker feeds it what its ENet port
// received and sends the bytes to sockets; aftershock-replay (replay.h) feeds it a logged tick's
// commands and keeps the bytes in memory. Both run these phases through this one class.
//
// Threading: one per frame thread, used only by that thread; frame_counters() and locker() are
// read and reset by the master at a phase boundary (SumFrameCounters).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "server/core/status.h"
#include "server/game/region_locker.h"
#include "server/game/user_cmd.h"
#include "server/protocol/snapshot.h"
#include "server/protocol/snapshot_codec.h"
#include "server/sv/frame_shared.h"
#include "server/sv/interest.h"
#include "server/sv/server_stats.h"
#include "server/sv/snapshot_builder.h"

namespace sv {

class FrameExecutor {
 public:
  // Per-frame figures, reset by the master when it closes the frame.
  struct FrameCounters {
    bool in_frame = false;  // took part in the frame (request mode: not every thread does)
    uint32_t requests = 0;
    uint32_t locked_commands = 0;
    uint64_t distinct_leaves = 0;
    uint32_t retries = 0;
    uint32_t waited_commands = 0;  // commands that blocked on a lock another thread held
    uint32_t refused_commands = 0;  // commands World::ExecuteCommand refused
    uint32_t executed = 0;  // commands handed to ExecuteCommands (the thread's load)
    uint32_t routed = 0;    // of those, read on another thread's port (--assign locality)
  };

  // Thread `index` of the frame engine; `shared` (its world, options, pvs, stats, recorder) must
  // outlive the executor.
  FrameExecutor(int index, FrameShared* shared);
  FrameExecutor(const FrameExecutor&) = delete;
  FrameExecutor& operator=(const FrameExecutor&) = delete;

  // Request phase. Marks the thread as in the frame; counts one request (a command packet).
  void BeginRequests() { counters_.in_frame = true; }
  void CountRequest();
  // Executes `commands` in order, each under the scheme's locks, and records each applied one
  // (shared->recorder, if set) while its locks are held. Switches `clock` to kExec and carves
  // the lock waits out of it (kLockLeaf, kLockParent). A refused command is counted and skipped.
  void ExecuteCommands(std::span<const PlayerCommand> commands, PhaseClock* clock);
  // Counts `n` of this frame's commands as read on another thread's port (--assign locality).
  void CountRouted(uint32_t n) { counters_.routed += n; }

  // Reply phase (read-only on the world). Indexes this frame's entities; call once per frame
  // before EncodeSnapshot.
  void PrepareReplies();
  // Builds `player`'s snapshot of this frame (id shared->frame_no) and encodes it with the
  // player's encoder, as a delta against `ack_snapshot_id` if the encoder still holds it.
  core::Status EncodeSnapshot(game::EntityId player, uint32_t ack_snapshot_id,
                              proto::SnapshotEncoder* encoder, proto::EncodedSnapshot* out);
  // Counts `n` snapshots sent (or kept) in this frame.
  void CountReplies(uint64_t n);

  int index() const { return index_; }
  FrameCounters& frame_counters() { return counters_; }
  game::RegionLocker* locker() { return locker_.get(); }

 private:
  // Runs the command under the locking scheme's locks and records it while they are held.
  core::Status ExecuteLocked(game::EntityId player, const game::UserCmd& cmd);

  const int index_;
  FrameShared* shared_;
  game::World* world_;
  std::unique_ptr<game::RegionLocker> locker_;
  FrameCounters counters_;
  uint64_t global_wait_ns_ = 0;
  InterestIndex interest_;  // this frame's entities by column (reply phase)
  ShownStates shown_;       // this frame's entities as clients see them (reply phase)
  std::vector<game::EntityId> visible_;
  proto::Snapshot snapshot_;
};

// Whether the player population is steady: no join or leave in the last `window` ticks. A ramp
// of joins loads the threads unevenly by design (block assignment fills one thread's slots
// first), so the per-thread load figures also count steady frames apart. The start counts as a
// change: nothing is known of the ticks before it.
class PopulationWatch {
 public:
  explicit PopulationWatch(int window_ticks) : window_(window_ticks) {}
  // Once per tick, with whether a player joined or left in it. True if no tick of the last
  // `window` (this one included) had a join or leave, and `window` ticks have been seen.
  bool NoteTick(bool joins_or_leaves) {
    calm_ = joins_or_leaves ? 0 : calm_ + 1;
    return calm_ >= window_;
  }

 private:
  int window_;
  int calm_ = 0;  // ticks since the last join or leave
};

// Sums the closed frame's counters of every executor into `stats` (requests per thread per
// frame, leaf locking, leaves shared by two or more threads) and resets them; `steady` (a
// PopulationWatch's verdict on that frame's tick) also counts its load spread among the steady
// frames'. The master, at a phase boundary (no executor running).
void SumFrameCounters(std::span<FrameExecutor* const> executors, bool steady, ServerStats* stats);

}  // namespace sv
