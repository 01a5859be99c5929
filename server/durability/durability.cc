// Durability: start-up recovery into the World, then the per-tick log / wait / checkpoint calls.
#include "server/durability/durability.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstring>
#include <thread>

#include "recovery/backup_format.h"
#include "recovery/recover.h"
#include "server/core/file_kind.h"
#include "server/core/steady_clock.h"
#include "server/durability/parallel_replay.h"
#include "server/durability/tick_apply.h"
#include "server/durability/world_identity.h"

namespace durability {

namespace {

using Clock = std::chrono::steady_clock;

// Creates dir and its missing parents.
core::Status CreateDirs(recovery::Env* env, const std::string& dir) {
  for (size_t pos = dir.find('/', 1); pos != std::string::npos; pos = dir.find('/', pos + 1)) {
    core::Status s = env->CreateDir(dir.substr(0, pos));
    if (!s.ok()) return s;
  }
  return env->CreateDir(dir);
}

// The loaded image must be a state of this world (world.id guards the directory; this guards
// against a backup that verifies but holds something else).
core::Status CheckRestoredGlobals(const game::Globals& restored, const game::Globals& fresh) {
  if (restored.magic != game::kStateMagic || restored.version != game::kStateVersion) {
    return core::Status::Corruption("recovery: the backup's globals have a bad magic or version");
  }
  if (!(game::ConfigurationOf(restored) == game::ConfigurationOf(fresh))) {
    return core::Status::InvalidArgument(
        "recovery: the backup holds a state of another map or configuration");
  }
  return core::Status::OK();
}

core::Status CheckRecoveryOptions(const DurabilityOptions& options) {
  if (options.data_dir.empty()) return core::Status::InvalidArgument("durability: empty data dir");
  if (options.replay_threads < 1 || options.replay_threads > kMaxReplayThreads) {
    return core::Status::InvalidArgument("durability: replay threads must be in 1.." +
                                         std::to_string(kMaxReplayThreads) + ", not " +
                                         std::to_string(options.replay_threads));
  }
  return core::Status::OK();
}

// RecoverWorld for Durability::Open and RecoverReadOnly: the logged ticks replayed through
// ApplyTick, on a ParallelReplay pool (alive for the whole replay) if options.replay_threads > 1,
// and the pool's figures in the report. hash_checkpoint: the loaded backup's hash, for the check.
core::Status RecoverWithReplayThreads(const DurabilityOptions& options, bool repair_tail,
                                      bool hash_checkpoint, game::World* world,
                                      WorldRecoveryReport* report) {
  std::unique_ptr<ParallelReplay> parallel;
  if (options.replay_threads > 1) {
    ParallelReplay::Options po;
    po.threads = options.replay_threads;
    po.adaptive = options.adaptive_replay;
    parallel = std::make_unique<ParallelReplay>(world, po);
  }
  RecoverWorldOptions ro;
  ro.env = options.env;
  ro.data_dir = options.data_dir;
  ro.repair_tail = repair_tail;
  ro.hash_checkpoint = hash_checkpoint;
  const core::Status s = RecoverWorld(
      ro, world,
      [world, &parallel](uint64_t, const TickRecord& record) {
        return ApplyTick(world, record, parallel.get());
      },
      report);
  report->replay_threads = options.replay_threads;
  if (parallel) {
    const ParallelReplay::Stats ps = parallel->stats();
    report->replay_parallel_ticks = ps.parallel_ticks;
    report->replay_pool_commands = ps.pool_commands;
    report->replay_lock_order_ticks = ps.lock_order_ticks;
    report->replay_coarse_tree_ticks = ps.coarse_tree_ticks;
    report->replay_cross_waits = ps.cross_waits;
    report->replay_unmet_waits = ps.unmet_waits;
    report->replay_blocker_runs = ps.blocker_runs;
    report->replay_critical_path = ps.critical_path;
    report->replay_dispatch_stalls = ps.dispatch_stalls;
  }
  return s;
}

// The older backup for the replay check: the newest whose header verifies and whose tick is below
// `newer`. False if there is none.
bool OlderBackupTick(recovery::Env* env, const std::string& dir, uint64_t newer, uint64_t* tick) {
  bool found = false;
  for (const recovery::backup_format::HeaderRead& r :
       recovery::backup_format::ReadHeaders(env, dir)) {
    if (r.status.ok() && r.header.tick < newer && (!found || r.header.tick > *tick)) {
      found = true;
      *tick = r.header.tick;
    }
  }
  return found;
}

// The backup Recover tries first: the newest by sequence whose header verifies. Recovery loads
// it unless its image then fails to verify. False if there is none.
bool FirstBackupTick(recovery::Env* env, const std::string& dir, uint64_t* tick) {
  bool found = false;
  uint64_t sequence = 0;
  for (const recovery::backup_format::HeaderRead& r :
       recovery::backup_format::ReadHeaders(env, dir)) {
    if (r.status.ok() && (!found || r.header.sequence > sequence)) {
      found = true;
      sequence = r.header.sequence;
      *tick = r.header.tick;
    }
  }
  return found;
}

// The replay check (replay_check.h) up to its comparison, read only: the backup of `from_tick`
// restored into a world of its own and the logged ticks up to `to_tick` applied serially. It needs
// of recovery only the tick of the backup it loads, so Open can run it beside recovery.
struct CheckRun {
  ReplayCheck check;     // outcome and detail set if it ended early (not_run, or a tick refused)
  bool replayed = false;  // else: check.replayed_hash is the state after to_tick
};

CheckRun ReplayBackupTo(const DurabilityOptions& options, uint64_t from_tick, uint64_t to_tick) {
  CheckRun run;
  ReplayCheck& c = run.check;
  const Clock::time_point t0 = Clock::now();
  auto end_early = [&](ReplayCheck::Outcome outcome, std::string detail) {
    c.outcome = outcome;
    c.detail = std::move(detail);
    c.duration_ms = core::MsSince(t0);
    return run;
  };
  constexpr ReplayCheck::Outcome kNotRun = ReplayCheck::Outcome::kNotRun;
  c.from_tick = from_tick;
  c.to_tick = to_tick;
  std::unique_ptr<game::World> world;
  core::Status s = options.make_check_world(&world);
  if (!s.ok()) return end_early(kNotRun, "no world to replay into: " + s.ToString());
  uint64_t applied_to = c.from_tick;
  core::Status refused;  // ApplyTick's error: the replay diverged
  WorldRecoveryReport report;
  s = RestoreBackupOfTick(
      options.env, options.data_dir, c.from_tick, /*last_tick=*/c.to_tick, world.get(),
      [&](uint64_t tick, const TickRecord& record) {
        refused = ApplyTick(world.get(), record);
        if (refused.ok()) applied_to = tick;
        return refused;
      },
      &report);
  if (!refused.ok()) {
    return end_early(ReplayCheck::Outcome::kDiffers,
                     "log tick " + std::to_string(applied_to + 1) +
                         " no longer applies to the older backup's replay: " + refused.ToString());
  }
  if (s.code() == core::Status::Code::kNotFound) return end_early(kNotRun, s.message());
  if (!s.ok()) {
    c.fallback_damaged = true;
    return end_early(kNotRun, "the log after the older backup (tick " + std::to_string(c.from_tick) +
                                  ") does not verify: " + s.ToString());
  }
  if (applied_to != c.to_tick) {
    return end_early(kNotRun, applied_to == c.from_tick
                                  ? "the log holds no tick after the older backup's tick " +
                                        std::to_string(c.from_tick) + " (recovered backup: tick " +
                                        std::to_string(c.to_tick) + ")"
                                  : "the log holds ticks only up to " + std::to_string(applied_to) +
                                        ", before the recovered backup's tick " + std::to_string(c.to_tick));
  }
  c.replayed_hash = report.state_hash;  // RecoverWorld hashed the world after the last tick
  c.duration_ms = core::MsSince(t0);
  run.replayed = true;
  return run;
}

// The check's outcome: the replayed hash against the backup recovery loaded.
ReplayCheck CompareReplay(CheckRun run, const WorldRecoveryReport& recovered) {
  ReplayCheck c = std::move(run.check);
  c.backup_hash = recovered.checkpoint_state_hash;
  if (!run.replayed) return c;
  if (c.replayed_hash == c.backup_hash) {
    c.outcome = ReplayCheck::Outcome::kMatch;
    return c;
  }
  char buf[128];
  std::snprintf(buf, sizeof buf, "replayed to %016" PRIx64 ", the backup holds %016" PRIx64,
                c.replayed_hash, c.backup_hash);
  c.outcome = ReplayCheck::Outcome::kDiffers;
  c.detail = buf;
  return c;
}

// The whole check after recovery, for when it did not run beside it.
ReplayCheck CheckReplay(const DurabilityOptions& options, const WorldRecoveryReport& recovered) {
  ReplayCheck c;
  c.outcome = ReplayCheck::Outcome::kNotRun;
  if (!recovered.from_checkpoint) {
    c.detail = "no backup was loaded";
    return c;
  }
  c.to_tick = recovered.checkpoint_tick;
  c.backup_hash = recovered.checkpoint_state_hash;
  if (!OlderBackupTick(options.env, options.data_dir, c.to_tick, &c.from_tick)) {
    c.detail = "no other backup older than tick " + std::to_string(c.to_tick);
    return c;
  }
  return CompareReplay(ReplayBackupTo(options, c.from_tick, c.to_tick), recovered);
}

}  // namespace

const char* ReplayCheckName(ReplayCheck::Outcome outcome) {  // replay_check.h
  switch (outcome) {
    case ReplayCheck::Outcome::kOff: return "off";
    case ReplayCheck::Outcome::kNotRun: return "not_run";
    case ReplayCheck::Outcome::kMatch: return "match";
    case ReplayCheck::Outcome::kDiffers: return "differs";
  }
  return "?";
}

Durability::Durability(const DurabilityOptions& options, game::World* world)
    : options_(options), world_(world) {}

Durability::~Durability() { (void)Close(); }

core::Status Durability::Open(const DurabilityOptions& options, game::World* world,
                              WorldRecoveryReport* report, std::unique_ptr<Durability>* out) {
  const Clock::time_point t0 = Clock::now();
  *report = WorldRecoveryReport{};
  core::Status s = CheckRecoveryOptions(options);
  if (!s.ok()) return s;
  std::unique_ptr<Durability> d(new Durability(options, world));
  s = CreateDirs(options.env, options.data_dir);
  if (!s.ok()) return s;
  s = CheckOrCreateIdentity(options.env, options.data_dir, IdentityOf(world->globals()));
  if (!s.ok()) return s;
  // The replay check reads only what recovery reads, into a world of its own, and needs only the
  // tick of the backup recovery will load: the first one it tries, unless that one's image fails
  // (then the check runs again after recovery, against the one loaded). So when it has at least
  // check_beside_min_span_ms of game to replay and there are two replay threads or more, it runs on
  // one of them, beside recovery, which replays on the others: the serial check and recovery's
  // replay each on a core of their own finish sooner than one after the other, and no more
  // threads run than --replay-threads says. A shorter check is mostly a world's set-up and a
  // backup's read, which gained nothing beside recovery's own (docs/recovery.md, "The replay
  // check"), so it runs after recovery, which keeps all its threads. Recovery's one write,
  // cutting a torn log tail, removes bytes after the last whole record, which the check reads
  // as the torn tail it would have found.
  CheckRun beside;
  uint64_t beside_tick = 0, older_tick = 0;
  std::jthread checker;
  DurabilityOptions recovery_options = options;
  if (options.make_check_world && options.replay_threads > 1 &&
      FirstBackupTick(options.env, options.data_dir, &beside_tick) &&
      OlderBackupTick(options.env, options.data_dir, beside_tick, &older_tick) &&
      static_cast<double>(beside_tick - older_tick) * world->tick_ms() >=
          options.check_beside_min_span_ms) {
    recovery_options.replay_threads = options.replay_threads - 1;
    checker = std::jthread([&options, &beside, older_tick, beside_tick] {
      beside = ReplayBackupTo(options, older_tick, beside_tick);
    });
  }
  s = RecoverWithReplayThreads(recovery_options, /*repair_tail=*/true,
                               /*hash_checkpoint=*/static_cast<bool>(options.make_check_world), world,
                               report);
  const bool ran_beside = checker.joinable();
  if (ran_beside) checker.join();
  if (!s.ok()) return s;
  if (ran_beside && report->from_checkpoint && report->checkpoint_tick == beside_tick) {
    report->replay_check = CompareReplay(std::move(beside), *report);
    report->replay_check.beside_recovery = true;
  } else if (options.make_check_world) {
    report->replay_check = CheckReplay(options, *report);
  }
  const ReplayCheck& check = report->replay_check;
  if (options.refuse_differing_replay && check.outcome == ReplayCheck::Outcome::kDiffers) {
    return core::Status::Corruption(
        "replay check: the log does not replay the backup of tick " +
        std::to_string(check.from_tick) + " to the recovered one of tick " +
        std::to_string(check.to_tick) + " (" + check.detail +
        "): this binary does not reproduce the game the writing server played; refusing to "
        "start (--recovery-check refuse)");
  }
  d->recovered_tick_ = report->recovered_tick;
  s = d->OpenWriters();
  if (!s.ok()) return s;
  report->total_ms = core::MsSince(t0);
  *out = std::move(d);
  return core::Status::OK();
}

core::Status Durability::RecoverReadOnly(const DurabilityOptions& options, game::World* world,
                                         WorldRecoveryReport* report) {
  const Clock::time_point t0 = Clock::now();
  *report = WorldRecoveryReport{};
  core::Status s = CheckRecoveryOptions(options);
  if (!s.ok()) return s;
  s = CheckIdentity(options.env, options.data_dir, IdentityOf(world->globals()));
  if (!s.ok()) return s;
  s = RecoverWithReplayThreads(options, /*repair_tail=*/false, /*hash_checkpoint=*/false, world,
                               report);
  if (!s.ok()) return s;
  report->total_ms = core::MsSince(t0);
  return core::Status::OK();
}

core::Status RecoverWorld(const RecoverWorldOptions& options, game::World* world,
                          const LoggedTickFn& apply, WorldRecoveryReport* report) {
  const game::Globals fresh = world->globals();
  std::span<uint8_t> bytes = world->MutableStateBytes();
  recovery::RecoverOptions ro;
  ro.env = options.env;
  ro.dir = options.data_dir;
  ro.object_count = static_cast<uint64_t>(world->object_count());
  ro.object_size = static_cast<uint32_t>(game::kObjectSize);
  ro.repair_tail = options.repair_tail;
  ro.max_checkpoint_tick = options.max_checkpoint_tick;
  ro.last_tick = options.last_tick;
  recovery::RecoveryReport rr;
  bool restored = false;  // the image (if any) was checked and relinked
  double relink_ms = 0, replay_ms = 0;
  uint64_t commands = 0;
  TickRecord record;
  auto restore = [&]() -> core::Status {
    restored = true;
    if (!rr.from_checkpoint) return core::Status::OK();
    const Clock::time_point t = Clock::now();
    core::Status s = CheckRestoredGlobals(world->globals(), fresh);
    if (s.ok()) world->RelinkAll();
    relink_ms = core::MsSince(t);
    if (s.ok() && options.hash_checkpoint) report->checkpoint_state_hash = world->StateHash();
    return s;
  };
  core::Status s = recovery::Recover(
      ro, bytes.data(),
      [&](uint64_t tick, std::string_view payload) -> core::Status {
        core::Status st = restored ? core::Status::OK() : restore();
        if (!st.ok()) return st;
        const Clock::time_point t = Clock::now();
        st = DecodeTickRecord(payload, &record);
        if (st.ok()) st = apply(tick, record);
        replay_ms += core::MsSince(t);
        commands += record.commands.size();
        if (!st.ok()) {
          return core::Status::Corruption("log tick " + std::to_string(tick) + ": " +
                                          st.message());
        }
        return st;
      },
      &rr);
  if (s.ok() && !restored) s = restore();
  report->notes = rr.notes;
  report->from_checkpoint = rr.from_checkpoint;  // which backup, even if the log then failed
  report->backup_index = rr.backup_index;
  report->checkpoint_tick = rr.checkpoint_tick;
  if (!s.ok()) return s;
  report->found_state = rr.from_checkpoint || rr.records_replayed > 0;
  report->ticks_replayed = rr.records_replayed;
  report->recovered_tick = rr.last_tick;
  report->world_tick = world->globals().tick;
  report->restore_ms = rr.restore_ms + relink_ms;
  report->replay_ms = replay_ms;
  report->commands_replayed = commands;
  if (replay_ms > 0) {
    report->speed_x_realtime =
        static_cast<double>(rr.records_replayed) * world->tick_ms() / replay_ms;
  }
  report->state_hash = world->StateHash();
  report->torn_tail_cut = rr.truncated_tail;  // where: in report->notes
  return core::Status::OK();
}

core::Status RestoreBackupOfTick(recovery::Env* env, const std::string& data_dir, uint64_t tick,
                                 uint64_t last_tick, game::World* world, const LoggedTickFn& apply,
                                 WorldRecoveryReport* report) {
  RecoverWorldOptions ro;
  ro.env = env;
  ro.data_dir = data_dir;
  ro.repair_tail = false;
  ro.max_checkpoint_tick = tick;
  ro.last_tick = last_tick;
  ro.hash_checkpoint = true;
  bool older_came = false;  // a tick at or before `tick`: its backup was not the one restored
  core::Status s = RecoverWorld(
      ro, world,
      [&](uint64_t t, const TickRecord& record) {
        if (t <= tick) {
          older_came = true;
          return core::Status::NotFound("stop");  // replaced below: nothing more is read
        }
        return apply(t, record);
      },
      report);
  if (older_came || !report->from_checkpoint || report->checkpoint_tick != tick) {
    // Why: Recover's note on the file it skipped ("skipped backup-N.ckpt: ..."), or its error.
    std::string why = "no backup of tick " + std::to_string(tick) + " verifies";
    for (const std::string& note : report->notes) {
      if (note.rfind("skipped ", 0) == 0) why += "; " + note;
    }
    if (!s.ok() && !older_came) why += "; " + s.ToString();
    return core::Status::NotFound(why);
  }
  return s;
}

core::Status Durability::OpenWriters() {
  recovery::LogOptions lo;
  lo.env = options_.env;
  lo.dir = options_.data_dir;
  lo.sync_mode = options_.sync_mode;
  lo.async_flush_ms = options_.async_flush_ms;
  lo.segment_bytes = options_.segment_bytes;
  lo.next_tick = recovered_tick_ + 1;
  core::Status s = recovery::LogWriter::Open(lo, &log_);
  if (!s.ok()) return s;

  recovery::CheckpointOptions co;
  co.env = options_.env;
  co.dir = options_.data_dir;
  co.algorithm = options_.algorithm;
  co.object_count = static_cast<uint64_t>(world_->object_count());
  co.object_size = static_cast<uint32_t>(game::kObjectSize);
  co.interval_ms = options_.checkpoint_interval_ms;
  recovery::LogWriter* log = log_.get();
  co.on_commit = [log](uint64_t, uint64_t oldest_backup_tick) {
    return log->RemoveObsoleteSegments(oldest_backup_tick);
  };
  s = recovery::Checkpointer::Open(co, world_->MutableStateBytes().data(), recovered_tick_,
                                   &checkpointer_);
  if (!s.ok()) return s;

  if (!options_.hash_log_path.empty()) {
    int fd;
    s = core::OpenRegularFile(options_.hash_log_path, O_WRONLY | O_APPEND | O_CREAT, &fd, "hash log");
    if (!s.ok()) return s;
    hash_log_ = ::fdopen(fd, "a");
    if (hash_log_ == nullptr) {
      const int err = errno;
      ::close(fd);
      return core::Status::IoError("open hash log " + options_.hash_log_path + ": " + std::strerror(err));
    }
  }
  // Only the algorithms that track writes need to hear of them, each at its moment: cou before
  // a write (the old value), pingpong once the World call that wrote the object returns (the new
  // value, whole object: Mut hands out whole objects). For naive and none a hook would be an
  // indirect call per write that does nothing.
  recovery::Checkpointer* ckpt = checkpointer_.get();
  if (options_.algorithm == recovery::Algorithm::kCou) {
    world_->set_write_hook(
        [ckpt](int object_id) { ckpt->OnUpdate(static_cast<uint32_t>(object_id)); });
  } else if (options_.algorithm == recovery::Algorithm::kPingPong) {
    world_->set_written_hook([ckpt](int object_id) {
      ckpt->AfterUpdate(static_cast<uint32_t>(object_id), 0, static_cast<uint32_t>(game::kObjectSize));
    });
  }
  return core::Status::OK();
}

core::Status Durability::AppendTickRecord(uint64_t tick, const TickRecord& record) {
  const Clock::time_point t0 = Clock::now();
  if (hash_log_ != nullptr) {
    std::fprintf(hash_log_, "%" PRIu64 " %016" PRIx64 "\n", tick, world_->StateHash());
    std::fflush(hash_log_);
  }
  EncodeTickRecord(record, &payload_);
  core::Status s = log_->Append(tick, payload_);
  const double ms = core::MsSince(t0);
  core::MutexLock lock(&stats_mu_);
  log_append_ms_total_ += ms;
  if (s.ok()) ++ticks_logged_;
  return s;
}

core::Status Durability::WaitDurable(uint64_t tick) {
  if (options_.sync_mode != recovery::SyncMode::kSync) return log_->status();
  const Clock::time_point t0 = Clock::now();
  core::Status s = log_->WaitDurable(tick);
  const double ms = core::MsSince(t0);
  core::MutexLock lock(&stats_mu_);
  wait_durable_ms_total_ += ms;
  wait_durable_ms_max_ = std::max(wait_durable_ms_max_, ms);
  return s;
}

bool Durability::IsDurable(uint64_t tick) const {
  if (options_.sync_mode != recovery::SyncMode::kSync) return log_->status().ok();
  return log_->IsDurable(tick);
}

core::Status Durability::TickBoundary(uint64_t tick) {
  return checkpointer_->TickBoundary(tick);  // which times its own pause (CheckpointStats)
}

core::Status Durability::WaitCheckpointIdle() { return checkpointer_->WaitIdle(); }

core::Status Durability::status() const {
  core::Status s = log_->status();
  if (!s.ok()) return s;
  return checkpointer_->status();
}

DurabilityStats Durability::stats() const {
  DurabilityStats st;
  st.checkpoint = checkpointer_->stats();
  st.log = log_->stats();
  st.durable_tick = log_->durable_tick();
  core::MutexLock lock(&stats_mu_);
  st.ticks_logged = ticks_logged_;
  st.log_append_ms_total = log_append_ms_total_;
  st.wait_durable_ms_total = wait_durable_ms_total_;
  st.wait_durable_ms_max = wait_durable_ms_max_;
  return st;
}

core::Status Durability::Close() {
  if (closed_) return core::Status::OK();
  closed_ = true;
  world_->set_write_hook(nullptr);
  world_->set_written_hook(nullptr);
  core::Status s = checkpointer_ ? checkpointer_->Close() : core::Status::OK();
  core::Status ls = log_ ? log_->Close() : core::Status::OK();
  if (s.ok()) s = ls;
  if (hash_log_ != nullptr) {
    std::fclose(hash_log_);
    hash_log_ = nullptr;
  }
  return s;
}

}  // namespace durability
