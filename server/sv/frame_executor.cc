// FrameExecutor: commands under the locking scheme, snapshots into bytes, and the master's sum
// of the per-frame counters.
#include "server/sv/frame_executor.h"

#include <algorithm>
#include <mutex>
#include <optional>

#include <spdlog/spdlog.h>

#include "server/areanode/areanode_tree.h"
#include "server/core/spin_wait.h"

namespace sv {

FrameExecutor::FrameExecutor(int index, FrameShared* shared)
    : index_(index), shared_(shared), world_(shared->world) {
  const LockingScheme scheme = shared->options->locking;
  if (scheme == LockingScheme::kAreanode || scheme == LockingScheme::kAreanodeOpt) {
    locker_ = std::make_unique<game::RegionLocker>(&world_->tree(),
                                                   scheme == LockingScheme::kAreanodeOpt);
  }
}

void FrameExecutor::CountRequest() {
  ++counters_.requests;
  AddRelaxed(shared_->stats->thread(index_).requests, 1);
}

// ---- Request phase ---------------------------------------------------------------------------

void FrameExecutor::ExecuteCommands(std::span<const PlayerCommand> commands, PhaseClock* clock) {
  clock->Switch(Phase::kExec);
  areanode::ParentLockCounters& parent = areanode::ThisThreadParentLockCounters();
  const uint64_t parent_before = parent.wait_ns;
  uint64_t executed = 0;
  counters_.executed += static_cast<uint32_t>(commands.size());
  for (const PlayerCommand& pc : commands) {
    const core::Status st = ExecuteLocked(pc.player, pc.cmd);
    if (!st.ok()) {
      ++counters_.refused_commands;
      spdlog::debug("thread {}: command {} of player {} refused: {}", index_, pc.cmd.sequence,
                    pc.player, st.ToString());
      continue;
    }
    ++executed;
  }
  AddRelaxed(shared_->stats->thread(index_).commands, executed);
  uint64_t leaf_wait = global_wait_ns_;
  global_wait_ns_ = 0;
  if (locker_) leaf_wait += locker_->TakeWaitNs();
  clock->Carve(Phase::kLockLeaf, leaf_wait);
  clock->Carve(Phase::kLockParent, parent.wait_ns - parent_before);
}

core::Status FrameExecutor::ExecuteLocked(game::EntityId player, const game::UserCmd& cmd) {
  std::unique_lock<std::mutex> global;        // the `global` scheme
  std::optional<game::RegionLock> region;     // the areanode schemes
  if (shared_->options->locking == LockingScheme::kGlobal) {
    global = std::unique_lock<std::mutex>(shared_->global_lock, std::try_to_lock);
    if (!global.owns_lock()) {
      global_wait_ns_ += core::LockPollingFirst(shared_->global_lock);
      global = std::unique_lock<std::mutex>(shared_->global_lock, std::adopt_lock);
      ++counters_.waited_commands;
    }
  } else if (locker_) {
    region.emplace(locker_.get(), *world_, player, cmd);
    counters_.retries += locker_->TakeRetries();
    counters_.waited_commands += locker_->TakeBlocked() ? 1 : 0;
    ++counters_.locked_commands;
    counters_.distinct_leaves += locker_->held().size();
  }
  const core::Status st = world_->ExecuteCommand(player, cmd);
  // A command is recorded (taking its execution sequence number, and the lock hand-offs of the
  // schedule) while its locks are still held: the leaves, or the global lock as lock 0.
  if (st.ok() && shared_->recorder != nullptr) {
    static constexpr int kGlobalLockId[] = {0};
    std::span<const int> held;
    if (global.owns_lock()) held = kGlobalLockId;
    else if (region) held = locker_->held();
    shared_->recorder->Record(index_, player, cmd, held);
  }
  return st;
}

// ---- Reply phase -----------------------------------------------------------------------------

void FrameExecutor::PrepareReplies() {
  // Every thread buckets the same entities: tens of microseconds, cheaper than another barrier.
  interest_.Build(*world_, *shared_->pvs);
  shown_.Build(*world_);
}

core::Status FrameExecutor::EncodeSnapshot(game::EntityId player, uint32_t ack_snapshot_id,
                                           proto::SnapshotEncoder* encoder,
                                           proto::EncodedSnapshot* out) {
  BuildSnapshot(*world_, interest_, shown_, player, shared_->options->interest_radius,
                shared_->frame_no, &visible_, &snapshot_);
  return encoder->Encode(snapshot_, ack_snapshot_id, out);
}

void FrameExecutor::CountReplies(uint64_t n) {
  AddRelaxed(shared_->stats->thread(index_).replies, n);
}

// ---- Frame statistics (master) ---------------------------------------------------------------

void SumFrameCounters(std::span<FrameExecutor* const> executors, bool steady, ServerStats* stats) {
  // Requests per thread per frame, over the threads that took part in the closed frame.
  uint32_t lo = UINT32_MAX, hi = 0, exec_lo = UINT32_MAX, exec_hi = 0;
  uint64_t exec_sum = 0;
  int in_frame = 0, locking_threads = 0;
  for (FrameExecutor* e : executors) {
    FrameExecutor::FrameCounters& c = e->frame_counters();
    if (!c.in_frame) continue;
    ++in_frame;
    AddRelaxed(stats->rptf_samples, 1);
    AddRelaxed(stats->rptf_sum, c.requests);
    AddRelaxed(stats->rptf_sum_sq, static_cast<uint64_t>(c.requests) * c.requests);
    lo = std::min(lo, c.requests);
    hi = std::max(hi, c.requests);
    exec_lo = std::min(exec_lo, c.executed);
    exec_hi = std::max(exec_hi, c.executed);
    exec_sum += c.executed;
    AddRelaxed(stats->routed_commands, c.routed);
    AddRelaxed(stats->locked_commands, c.locked_commands);
    AddRelaxed(stats->distinct_leaves, c.distinct_leaves);
    AddRelaxed(stats->lock_retries, c.retries);
    AddRelaxed(stats->waited_commands, c.waited_commands);
    AddRelaxed(stats->refused_commands, c.refused_commands);
    if (c.locked_commands > 0) ++locking_threads;  // only locking schemes count them
  }
  if (in_frame >= 2) {
    AddRelaxed(stats->rptf_spread_sum, hi - lo);
    AddRelaxed(stats->rptf_spread_frames, 1);
    // (most - fewest) commands among the threads, and their mean (x1000), summed over frames.
    const uint64_t mean_milli = exec_sum * 1000 / static_cast<uint64_t>(in_frame);
    AddRelaxed(stats->exec_spread_sum, exec_hi - exec_lo);
    AddRelaxed(stats->exec_mean_milli_sum, mean_milli);
    if (steady) {
      AddRelaxed(stats->steady_frames, 1);
      AddRelaxed(stats->steady_exec_spread_sum, exec_hi - exec_lo);
      AddRelaxed(stats->steady_exec_mean_milli_sum, mean_milli);
    }
  }
  // Leaf statistics: relocks and leaves shared by two or more threads in the frame.
  if (!executors.empty() && executors[0]->locker() != nullptr) {
    const int leaves = executors[0]->locker()->leaf_count();
    uint64_t acquisitions = 0, relocks = 0;
    int shared_leaves = 0;
    for (int l = 0; l < leaves; ++l) {
      uint64_t a = 0;
      int t = 0;
      for (FrameExecutor* e : executors) {
        const uint32_t n = e->locker()->frame_counts()[l];
        a += n;
        t += n > 0 ? 1 : 0;
      }
      acquisitions += a;
      relocks += a > 1 ? a - 1 : 0;
      shared_leaves += t >= 2 ? 1 : 0;
    }
    AddRelaxed(stats->leaf_acquisitions, acquisitions);
    AddRelaxed(stats->relocks, relocks);
    if (locking_threads >= 2) {
      AddRelaxed(stats->shared_frames, 1);
      AddRelaxed(stats->shared_leaves_milli_pct,
                 static_cast<uint64_t>(100000.0 * shared_leaves / leaves));
    }
    for (FrameExecutor* e : executors) e->locker()->ResetFrame();
  }
  for (FrameExecutor* e : executors) e->frame_counters() = FrameExecutor::FrameCounters{};
}

}  // namespace sv
