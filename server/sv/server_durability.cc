// The server's durability glue: recovery at start-up, the checkpoint boundary before each world
// phase, the tick record after every request, replies held until their tick is durable, and the
// stop on a durability failure (docs/recovery.md).
#include <spdlog/spdlog.h>

#include "server/durability/tick_apply.h"
#include "server/sv/server.h"

namespace sv {

core::Status Server::OpenDurability() {
  durability::DurabilityOptions o;
  o.data_dir = options_.data_dir;
  o.algorithm = options_.checkpoint;
  o.sync_mode = options_.sync_mode;
  o.checkpoint_interval_ms = options_.checkpoint_interval_ms;
  o.async_flush_ms = options_.async_flush_ms;
  o.replay_threads = options_.replay_threads;
  if (options_.hash_log) o.hash_log_path = recovery::JoinPath(options_.data_dir, "hash.log");
  if (options_.recovery_check != RecoveryCheck::kOff) {
    o.make_check_world = [this](std::unique_ptr<game::World>* out) {
      return game::World::Create(map_, *collision_, WorldConfigOf(options_), out);
    };
    o.refuse_differing_replay = options_.recovery_check == RecoveryCheck::kRefuse;
  }
  const durability::WorldRecoveryReport& r = recovery_report_;
  core::Status s = durability::Durability::Open(o, world_.get(), &recovery_report_, &durability_);
  for (const std::string& note : r.notes) spdlog::warn("recovery: {}", note);
  if (!s.ok()) return s;
  if (r.found_state) {
    spdlog::info("recovered {} to log tick {} (world tick {}): checkpoint tick {} (backup {}), "
                 "{} ticks ({} commands) replayed on {} threads; restore {:.1f} ms, replay {:.1f} ms "
                 "({:.0f}x real time), total {:.1f} ms; state hash {:016x}",
                 options_.data_dir, r.recovered_tick, r.world_tick, r.checkpoint_tick,
                 r.backup_index, r.ticks_replayed, r.commands_replayed, r.replay_threads,
                 r.restore_ms, r.replay_ms, r.speed_x_realtime, r.total_ms, r.state_hash);
    LogReplayCheck();
    if (r.replay_coarse_tree_ticks > 0) {
      spdlog::warn("recovery: {} ticks replayed by the walk, not by the log's lock order, which is over "
                   "finer areanode leaves than --areanode-depth {}: the state is the same, a restart "
                   "with the depth the log was written with replays faster",
                   r.replay_coarse_tree_ticks, options_.areanode_depth);
    }
  } else {
    spdlog::info("data dir {}: no saved state, a new world ({} checkpoints, {} durability)",
                 options_.data_dir, recovery::AlgorithmName(options_.checkpoint),
                 recovery::SyncModeName(options_.sync_mode));
  }
  log_tick_ = durability_->recovered_tick();
  // The lock ids are the tree's leaves, or lock 0 for the global scheme's one lock.
  const int lock_depth = options_.locking == LockingScheme::kGlobal ? 0 : world_->tree().depth();
  recorder_ = std::make_unique<durability::TickRecorder>(options_.threads, world_->tree().leaf_count(),
                                                         lock_depth);
  shared_.recorder = recorder_.get();
  // Players online at the crash have no session now: the first frame logs their leaves.
  for (game::EntityId id = 1; id <= world_->max_players(); ++id) {
    if (world_->Get(id).flags & game::kFlagConnected) recovered_online_.push_back(id);
  }
  return core::Status::OK();
}

void Server::LogReplayCheck() const {
  const durability::ReplayCheck& c = recovery_report_.replay_check;
  switch (c.outcome) {
    case durability::ReplayCheck::Outcome::kOff:
      break;
    case durability::ReplayCheck::Outcome::kNotRun:
      if (c.fallback_damaged) {
        spdlog::warn("recovery check not run: {}; until the next checkpoint commits, recovery could "
                     "not fall back to the older backup", c.detail);
      } else {
        spdlog::info("recovery check not run: {}", c.detail);
      }
      break;
    case durability::ReplayCheck::Outcome::kMatch:
      spdlog::info("recovery check: the log replays the older backup (tick {}) to the recovered one "
                   "(tick {}), state hash {:016x}, in {:.1f} ms{}",
                   c.from_tick, c.to_tick, c.backup_hash, c.duration_ms,
                   c.beside_recovery ? " beside recovery" : " after recovery");
      break;
    case durability::ReplayCheck::Outcome::kDiffers:
      spdlog::error("recovery check FAILED: the log does not replay the older backup (tick {}) to the "
                    "recovered one (tick {}): {}. This binary does not reproduce the game the writing "
                    "server played (another build, or a nondeterminism bug): the ticks replayed after "
                    "tick {} ({} of them) may differ from what clients were shown",
                    c.from_tick, c.to_tick, c.detail, c.to_tick, recovery_report_.ticks_replayed);
      break;
  }
}

void Server::LeaveRecovered() {
  for (game::EntityId id : recovered_online_) {
    const core::Status s = durability::ApplyLeave(world_.get(), id, &record_);
    if (!s.ok()) spdlog::warn("leave of recovered player {} failed: {}", id, s.ToString());
  }
  recovered_online_.clear();
}

void Server::CheckpointPhase(PhaseClock* clock) {
  clock->Switch(Phase::kCheckpoint);
  CheckpointBoundary();
}

void Server::CheckpointBoundary() {
  if (durability_ == nullptr || boundary_tick_ == 0) return;
  const core::Status s = durability_->TickBoundary(boundary_tick_);
  boundary_tick_ = 0;
  if (!s.ok()) Fail(s);
}

void Server::AppendTickRecord() {
  recorder_->MergeInto(&record_);
  if (durability_failed_.load(std::memory_order_acquire)) return;
  const core::Status s = durability_->AppendTickRecord(log_tick_, record_);
  if (!s.ok()) return Fail(s);
  boundary_tick_ = log_tick_;  // every reply waits for it to be durable before the next frame
}

void Server::ReplyWhenDurable(Worker& w, PhaseClock* clock) {
  // Encoded while the log syncs the tick (sync mode); each leaves once the tick is durable.
  w.BuildReplies(clock, [this] { return durability_ == nullptr || durability_->IsDurable(log_tick_); });
  if (durability_ != nullptr && !w.released()) {
    clock->Switch(Phase::kLogSync);
    const core::Status s = durability_->WaitDurable(log_tick_);  // at once unless sync
    if (!s.ok()) {
      Fail(s);
      w.DropReplies();  // nothing a client is shown may be lost
      return;
    }
  }
  w.SendReplies(clock);
}

void Server::Fail(const core::Status& s) {
  {
    core::MutexLock lock(&fatal_mu_);
    if (!fatal_.ok()) return;
    fatal_ = s;
  }
  durability_failed_.store(true, std::memory_order_release);
  spdlog::critical("durability failed: {}; stopping (no reply is sent for a frame that is not "
                   "durable)", s.ToString());
  RequestStop();
}

}  // namespace sv
