// Replay: the trace read-only into memory, then the server's frame phases over it, timed.
#include "server/sv/replay.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <thread>

#include "maps/map_loader.h"
#include "recovery/backup_format.h"
#include "recovery/env.h"
#include "server/core/file_kind.h"
#include "server/core/steady_clock.h"
#include "server/durability/durability.h"
#include "server/durability/tick_apply.h"
#include "server/durability/world_identity.h"
#include "server/vis/pvs_cache.h"

namespace sv {

namespace {

constexpr char kHashLogName[] = "hash.log";  // Durability's hash_log_path in the server
constexpr int kMaxRecords = 1000000;          // the server's --max-records bound

}  // namespace

Replay::Replay(const ReplayOptions& options) : options_(options), stats_(options.threads) {}

Replay::~Replay() = default;

core::Status Replay::Create(const ReplayOptions& options, std::unique_ptr<Replay>* out) {
  core::Status s = ValidateReplayOptions(options);
  if (!s.ok()) return s;
  std::error_code ec;
  if (!std::filesystem::is_directory(options.data_dir, ec)) {
    return core::Status::InvalidArgument("data dir " + options.data_dir +
                                         " does not exist or is not a directory");
  }
  std::unique_ptr<Replay> r(new Replay(options));
  s = r->BuildWorld();
  if (!s.ok()) return s;
  s = r->LoadTrace();
  if (!s.ok()) return s;
  r->ReadRecordedHashes();
  if (r->recorded_hash_source_.empty()) r->HashBackupOfLastTick();
  *out = std::move(r);
  return core::Status::OK();
}

// The world of the directory's configuration: world.id gives the players, tick and seed; the
// record store is what is left of its object count on this map. Then world.id must match it.
core::Status Replay::BuildWorld() {
  recovery::Env* env = recovery::Env::Posix();
  durability::WorldIdentity id;
  core::Status s = durability::ReadIdentity(env, options_.data_dir, &id);
  if (!s.ok()) return s;
  s = maps::LoadMap(options_.map_path, &map_);
  if (!s.ok()) return s;
  s = collision::CollisionWorld::CheckMap(map_);
  if (!s.ok()) return s;
  collision_ = collision::CollisionWorld::Build(map_, game::CollisionOptions());
  game::WorldConfig config;
  config.max_players = static_cast<int>(id.max_players);
  config.max_records = 1;
  config.tick_ms = static_cast<int>(id.tick_ms);
  config.areanode_depth = options_.areanode_depth;
  config.seed = id.seed;
  std::unique_ptr<game::World> probe;
  s = game::World::Create(map_, *collision_, config, &probe);
  if (!s.ok()) return core::Status::InvalidArgument("data dir " + options_.data_dir + ": " + s.message());
  const int64_t records = static_cast<int64_t>(id.object_count) - probe->first_record();
  if (records < 1 || records > kMaxRecords) {
    // Another map: the layout cannot hold a record store. Say what differs.
    s = durability::CheckIdentity(env, options_.data_dir, durability::IdentityOf(probe->globals()));
    return s.ok() ? core::Status::InvalidArgument("data dir " + options_.data_dir +
                                                  ": bad object count in world.id")
                  : s;
  }
  probe.reset();
  config.max_records = static_cast<int>(records);
  config_ = config;
  s = game::World::Create(map_, *collision_, config, &world_);
  if (!s.ok()) return s;
  s = durability::CheckIdentity(env, options_.data_dir, durability::IdentityOf(world_->globals()));
  if (!s.ok()) return s;
  const bool areanode = options_.locking == LockingScheme::kAreanode ||
                        options_.locking == LockingScheme::kAreanodeOpt;
  world_->tree().set_parent_locking(areanode);

  vis::PvsParams params;
  params.range_units = std::max(options_.interest_radius, 64.0f);
  vis::PvsCacheReport pvs_report;
  s = vis::LoadOrBuildPvs(map_, *collision_, params,
                          ResolveVisCacheDir(options_.vis_cache_dir, /*fallback=*/""), &pvs_,
                          &pvs_report, LogVisibilityProgress());
  if (!s.ok()) return s;
  spdlog::info("visibility: {} in {:.2f} s", pvs_report.loaded ? "loaded" : "built",
               pvs_report.load_s);

  server_options_.map_path = options_.map_path;
  server_options_.threads = options_.threads;
  server_options_.max_players = config.max_players;
  server_options_.max_records = config.max_records;
  server_options_.locking = options_.locking;
  server_options_.assign = options_.assign;
  server_options_.rebalance_s = options_.rebalance_s;
  server_options_.rebalance_threshold = options_.rebalance_threshold;
  server_options_.migrate_margin = options_.migrate_margin;
  server_options_.areanode_depth = options_.areanode_depth;
  server_options_.interest_radius = options_.interest_radius;
  server_options_.tick_hz = 1000 / config.tick_ms;
  population_ = PopulationWatch(server_options_.tick_hz);
  server_options_.seed = config.seed;
  shared_.world = world_.get();
  shared_.options = &server_options_;
  shared_.pvs = &pvs_;
  shared_.stats = &stats_;
  for (int i = 0; i < options_.threads; ++i) {
    executors_.push_back(std::make_unique<FrameExecutor>(i, &shared_));
    executor_ptrs_.push_back(executors_.back().get());
  }
  if (options_.assign == Assignment::kLocality) {
    locality_ = std::make_unique<LocalityAssignment>(world_->tree(), options_.threads,
                                                     config.max_players,
                                                     LocalityOptionsOf(server_options_));
  }
  const size_t players = static_cast<size_t>(config.max_players) + 1;
  encoders_ = std::vector<proto::SnapshotEncoder>(players);
  last_snapshot_.assign(players, 0);
  requested_tick_.assign(players, 0);
  scratch_ = std::vector<ThreadScratch>(static_cast<size_t>(options_.threads));
  return core::Status::OK();
}

// Through the server's recovery path, read only: the newest backup at or before from_tick, the
// ticks up to from_tick applied serially, the rest of the range kept in memory.
core::Status Replay::LoadTrace() {
  durability::RecoverWorldOptions ro;
  ro.data_dir = options_.data_dir;
  ro.repair_tail = false;
  ro.max_checkpoint_tick = options_.from_tick;
  durability::WorldRecoveryReport& report = start_report_;
  game::World* world = world_.get();
  const core::Status s = durability::RecoverWorld(
      ro, world,
      [this, world](uint64_t tick, const durability::TickRecord& record) -> core::Status {
        if (tick <= options_.from_tick) return durability::ApplyTick(world, record);
        if (tick > options_.to_tick) return core::Status::OK();
        // The request phase routes and counts each command by its player before the world sees
        // it (ApplyLoggedCommand, which refuses an id that is no player's, comes later): a
        // checksum-valid record naming entity 2147483647 crashed or hung the replay.
        for (const durability::TickCommand& c : record.commands) {
          if (!world->IsPlayerId(c.player)) {
            return core::Status::Corruption("log tick " + std::to_string(tick) + ": a command of entity " +
                                            std::to_string(c.player) + ", which is no player (ids 1.." +
                                            std::to_string(world->max_players()) + ")");
          }
        }
        ticks_.push_back(LoggedTick{tick, record});
        return core::Status::OK();
      },
      &report);
  for (const std::string& note : report.notes) spdlog::info("data dir: {}", note);
  if (!s.ok()) {
    // The log reader's errors already point at aftershock-inspect; the others get the pointer here.
    const bool points = s.message().find("aftershock-inspect") != std::string::npos;
    const std::string what = "data dir " + options_.data_dir + ": " + s.message() +
                             (points ? "" : " (inspect it with aftershock-inspect " + options_.data_dir + ")");
    return s.code() == core::Status::Code::kCorruption ? core::Status::Corruption(what)
           : s.code() == core::Status::Code::kIoError  ? core::Status::IoError(what)
                                                        : core::Status::InvalidArgument(what);
  }
  const uint64_t log_end = report.recovered_tick;
  if (log_end <= options_.from_tick) {
    return core::Status::InvalidArgument("data dir " + options_.data_dir + ": the log ends at tick " +
                                         std::to_string(log_end) + ", nothing after --from-tick " +
                                         std::to_string(options_.from_tick));
  }
  if (options_.to_tick != UINT64_MAX && options_.to_tick > log_end) {
    return core::Status::InvalidArgument("--to-tick " + std::to_string(options_.to_tick) +
                                         " is after the log's last tick " +
                                         std::to_string(log_end));
  }
  if (ticks_.empty() || ticks_.front().tick != options_.from_tick + 1) {
    return core::Status::InvalidArgument(
        "data dir " + options_.data_dir + ": no state at tick " +
        std::to_string(options_.from_tick) + " (the log before tick " +
        std::to_string(report.checkpoint_tick + 1) +
        " was removed after a checkpoint): choose --from-tick at or after " +
        std::to_string(report.checkpoint_tick));
  }
  spdlog::info("trace {}: {} at tick {}, ticks {}..{} to replay", options_.data_dir,
               report.from_checkpoint ? "backup " + std::to_string(report.backup_index)
                                      : std::string("initial world"),
               report.checkpoint_tick, ticks_.front().tick, ticks_.back().tick);
  return core::Status::OK();
}

// hash.log lines are "log-tick state-hash" (Durability::AppendTickRecord): the live server's
// hash after each tick's commands. The last line for a tick wins (a restart appends again).
// Read as a stream: the file grows by a line a tick for as long as the server keeps it.
void Replay::ReadRecordedHashes() {
  const std::string path = recovery::JoinPath(options_.data_dir, kHashLogName);
  int fd;
  if (core::Status s = core::OpenRegularFile(path, O_RDONLY, &fd); !s.ok()) {
    if (s.code() != core::Status::Code::kNotFound) spdlog::warn("{} not read: {}", kHashLogName, s.ToString());
    return;
  }
  std::FILE* in = ::fdopen(fd, "r");
  if (in == nullptr) {
    ::close(fd);
    return;
  }
  const uint64_t want = last_tick();
  char line[128];
  bool line_start = true;  // a line longer than the buffer is read in pieces; only its first counts
  while (std::fgets(line, sizeof line, in) != nullptr) {
    unsigned long long tick = 0, hash = 0;
    if (line_start && std::sscanf(line, "%llu %llx", &tick, &hash) == 2 && tick == want) {
      recorded_hash_ = hash;
      recorded_hash_source_ = kHashLogName;
    }
    line_start = std::strchr(line, '\n') != nullptr;
  }
  std::fclose(in);
}

// A backup of tick T holds the live state after T, so its hash is the recorded one for
// --to-tick T: restored into a world of its own through the server's recovery path (header,
// size, image checksum, this map's configuration, relink), the log after it read but not
// applied. Nothing is written. A backup that does not verify gives no hash, with a note.
void Replay::HashBackupOfLastTick() {
  const uint64_t want = last_tick();
  namespace bf = recovery::backup_format;
  std::vector<std::pair<std::string, uint64_t>> backups;  // the headers that decode: name, tick
  for (const bf::HeaderRead& r : bf::ReadHeaders(recovery::Env::Posix(), options_.data_dir)) {
    if (r.status.ok()) backups.emplace_back(bf::BackupFileName(r.index), r.header.tick);
  }
  const auto at = std::find_if(backups.begin(), backups.end(),
                               [want](const auto& b) { return b.second == want; });
  if (at == backups.end()) {
    std::string ticks;
    for (const auto& [name, tick] : backups) {
      ticks += (ticks.empty() ? "" : ", ") + std::to_string(tick) + " (" + name + ")";
    }
    spdlog::info("no recorded hash of tick {}: no hash.log line for it{}", want,
                 ticks.empty() ? std::string(" and no backup")
                               : "; the backups hold ticks " + ticks +
                                     ", and --to-tick at one of them compares against it");
    return;
  }
  std::unique_ptr<game::World> backup_world;
  core::Status s = game::World::Create(map_, *collision_, config_, &backup_world);
  durability::WorldRecoveryReport report;
  if (s.ok()) {
    s = durability::RestoreBackupOfTick(
        recovery::Env::Posix(), options_.data_dir, want, /*last_tick=*/want, backup_world.get(),
        [](uint64_t, const durability::TickRecord&) { return core::Status::OK(); }, &report);
  }
  if (!s.ok()) {
    spdlog::warn("no recorded hash of tick {}: {}", want, s.ToString());
    return;
  }
  recorded_hash_ = report.checkpoint_state_hash;
  recorded_hash_source_ = recovery::backup_format::BackupFileName(report.backup_index);
}

int Replay::ThreadFor(game::EntityId player) const {
  if (locality_) {
    const int t = locality_->ThreadOf(player);
    return t >= 0 ? t : 0;  // not connected at the update: cannot have commands; thread 0 anyway
  }
  return WorkerForSlot(options_.assign, player - 1, options_.threads, world_->max_players());
}

// ---- Frames ------------------------------------------------------------------------------------

core::Status Replay::Run() {
  if (ran_) return core::Status::InvalidArgument("Replay::Run called twice");
  ran_ = true;
  std::barrier<> barrier(options_.threads);
  const uint64_t t0 = core::SteadyNs();
  std::vector<std::thread> threads;
  for (int i = 1; i < options_.threads; ++i) {
    threads.emplace_back([this, i, &barrier] { FrameThread(i, &barrier); });
  }
  FrameThread(0, &barrier);
  for (std::thread& t : threads) t.join();
  wall_s_ = static_cast<double>(core::SteadyNs() - t0) / 1e9;
  for (const ThreadScratch& sc : scratch_) snapshot_bytes_ += sc.snapshot_bytes;
  SumFrameCounters(executor_ptrs_, NoteClosedTick(ticks_.size()), &stats_);  // the last frame's
  state_hash_ = world_->StateHash();
  uint64_t online = 0;
  for (game::EntityId id = 1; id <= world_->max_players(); ++id) {
    online += (world_->Get(id).flags & game::kFlagConnected) ? 1 : 0;
  }
  stats_.players_online.store(online);
  return run_status_;
}

// The server's fixed-frame loop (server.cc, RunFixed) without its clock: world part (master),
// barrier A, requests, barrier B, replies, barrier C.
void Replay::FrameThread(int index, std::barrier<>* barrier) {
  PhaseClock clock(&stats_.thread(index), /*enabled=*/true);
  clock.Start(Phase::kInterWait);
  ThreadScratch& scratch = scratch_[static_cast<size_t>(index)];
  for (size_t k = 0; k < ticks_.size(); ++k) {
    if (index == 0) WorldPart(k, &clock);
    clock.Switch(Phase::kInterWait);
    barrier->arrive_and_wait();  // A: the world part is done
    if (failed_.load(std::memory_order_acquire)) break;
    RequestPhase(index, ticks_[k].record, &scratch, &clock);
    clock.Switch(Phase::kIntraWait);
    barrier->arrive_and_wait();  // B: every command executed
    ReplyPhase(index, &scratch, &clock);
    clock.Switch(Phase::kInterWait);
    AddRelaxed(stats_.thread(index).frames, 1);
    barrier->arrive_and_wait();  // C: every reply built
    if (index == 0) {
      stats_.RecordFrame(core::SteadyNs() - frame_start_ns_);
      AddRelaxed(stats_.frames, 1);
    }
  }
  clock.Finish();
}

bool Replay::NoteClosedTick(size_t k) {
  if (k == 0) return false;  // no frame has run yet
  const durability::TickRecord& closed = ticks_[k - 1].record;
  return population_.NoteTick(!closed.joins.empty() || !closed.leaves.empty());
}

void Replay::WorldPart(size_t k, PhaseClock* clock) {
  clock->Switch(Phase::kWorld);
  frame_start_ns_ = core::SteadyNs();
  turn_.store(0, std::memory_order_relaxed);  // the barrier after the world part publishes it
  SumFrameCounters(executor_ptrs_, NoteClosedTick(k), &stats_);
  const LoggedTick& t = ticks_[k];
  shared_.frame_no = static_cast<uint32_t>(t.tick);
  const core::Status s = durability::ApplyLoggedWorldPart(world_.get(), t.record);
  if (!s.ok()) {
    run_status_ = core::Status::Corruption("log tick " + std::to_string(t.tick) + ": " +
                                           s.message() + " (the replayed state diverged)");
    failed_.store(true, std::memory_order_release);
    return;
  }
  for (const durability::TickJoin& j : t.record.joins) {  // a new client: no baseline yet
    encoders_[j.player].Reset();
    last_snapshot_[j.player] = 0;
  }
  shared_.tick = t.record.world_tick;
  if (locality_) {
    locality_->Update(*world_, t.tick);
    stats_.migrations.store(locality_->migrations(), std::memory_order_relaxed);
    stats_.rebalances.store(locality_->rebalances(), std::memory_order_relaxed);
    stats_.leaves_moved.store(locality_->leaves_moved(), std::memory_order_relaxed);
  }
  if (t.record.world_phase_ran) AddRelaxed(stats_.world_ticks, 1);
  AddRelaxed(stats_.joins, t.record.joins.size());
  AddRelaxed(stats_.leaves, t.record.leaves.size());
}

void Replay::RequestPhase(int index, const durability::TickRecord& record, ThreadScratch* scratch,
                          PhaseClock* clock) {
  // The request source: this thread's players' logged commands, in exec_seq order.
  clock->Switch(Phase::kReceive);
  FrameExecutor& ex = *executors_[index];
  ex.BeginRequests();
  scratch->commands.clear();
  scratch->log_index.clear();
  scratch->requesters.clear();
  const uint64_t tick = shared_.frame_no;
  for (size_t k = 0; k < record.commands.size(); ++k) {
    const durability::TickCommand& c = record.commands[k];
    if (ThreadFor(c.player) != index) continue;
    scratch->commands.push_back(PlayerCommand{c.player, c.cmd});
    scratch->log_index.push_back(k);
    if (requested_tick_[c.player] != tick) {
      requested_tick_[c.player] = tick;
      scratch->requesters.push_back(c.player);
      ex.CountRequest();
    }
  }
  if (!options_.log_order) {
    ex.ExecuteCommands(scratch->commands, clock);
    return;
  }
  // --order log: each command once every command logged before it has run (on any thread). The
  // turn waits are counted as intra-frame wait; they are the order's, not the locks'.
  for (size_t i = 0; i < scratch->commands.size(); ++i) {
    const size_t k = scratch->log_index[i];
    if (turn_.load(std::memory_order_acquire) != k) {
      clock->Switch(Phase::kIntraWait);
      while (turn_.load(std::memory_order_acquire) != k) std::this_thread::yield();
    }
    ex.ExecuteCommands(std::span<const PlayerCommand>(&scratch->commands[i], 1), clock);
    turn_.store(k + 1, std::memory_order_release);
  }
}

void Replay::ReplyPhase(int index, ThreadScratch* scratch, PhaseClock* clock) {
  // The reply sink: memory. Each encoded snapshot is counted and dropped.
  clock->Switch(Phase::kReply);
  FrameExecutor& ex = *executors_[index];
  ex.PrepareReplies();
  uint64_t built = 0;
  for (game::EntityId player : scratch->requesters) {
    const core::Status s =
        ex.EncodeSnapshot(player, last_snapshot_[player], &encoders_[player], &scratch->encoded);
    if (!s.ok()) {
      spdlog::warn("thread {}: snapshot for player {} not encoded: {}", index, player,
                   s.ToString());
      continue;
    }
    last_snapshot_[player] = shared_.frame_no;
    scratch->snapshot_bytes += scratch->encoded.bytes.size();
    ++built;
  }
  ex.CountReplies(built);
}

StatsReport Replay::Report() const {
  ReportInfo info;
  info.threads = options_.threads;
  info.locking = LockingName(options_.locking);
  info.frame_mode = "replay";
  info.assign = AssignmentName(options_.assign);
  info.map = options_.map_path;
  info.tick_hz = server_options_.tick_hz;
  info.areanode_depth = options_.areanode_depth;
  info.leaf_count = world_->tree().leaf_count();
  info.max_players = world_->max_players();
  info.max_records = world_->record_capacity();
  info.instrument = true;
  info.uptime_s = wall_s_;
  StatsReport r = TakeReport(stats_, info);
  ReplayFigures& p = r.replay;
  p.enabled = true;
  p.data_dir = options_.data_dir;
  p.from_tick = options_.from_tick;
  p.to_tick = last_tick();
  p.ticks = r.frames;
  p.wall_s = wall_s_;
  const double recorded_s = static_cast<double>(p.ticks) * world_->tick_ms() / 1000.0;
  p.speed_x_realtime = wall_s_ > 0 ? recorded_s / wall_s_ : 0;
  p.state_hash = state_hash_;
  p.has_recorded_hash = !recorded_hash_source_.empty();
  p.recorded_state_hash = recorded_hash_;
  p.recorded_hash_source = p.has_recorded_hash ? recorded_hash_source_ : "none";
  p.order_as_recorded = options_.threads == 1 || options_.log_order;
  p.snapshot_bytes = snapshot_bytes_;
  return r;
}

}  // namespace sv
