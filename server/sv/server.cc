// Server: construction, the frame threads (fixed and request modes), and the master's serial
// world phase (joins, leaves, world tick, events, per-frame statistics).
#include "server/sv/server.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>

#include <spdlog/spdlog.h>

#include "maps/map_loader.h"
#include "server/durability/tick_apply.h"
#include "server/core/check.h"
#include "server/core/steady_clock.h"
#include "server/core/thread_name.h"
#include "server/protocol/messages.h"
#include "server/sv/event_scope.h"
#include "server/sv/snapshot_builder.h"
#include "server/sv/transport.h"

namespace sv {

namespace {

constexpr uint32_t kNewIdentitySlots = 4096;  // new-identity buckets, hashed by source address

// The server's fallback without a home: the data dir (docs/maps.md, "Visibility").
std::string VisCacheDir(const ServerOptions& o) {
  return ResolveVisCacheDir(o.vis_cache_dir, o.data_dir.empty() ? "" : o.data_dir + "/vis");
}

}  // namespace

Server::Server(const ServerOptions& options)
    : options_(options),
      stats_(options.threads),
      ticket_rng_(std::random_device{}()),
      new_identities_(options.new_identity_burst, options.new_identity_per_min / 60.0,
                      kNewIdentitySlots, ticket_rng_()),
      population_(options.tick_hz) {}

game::WorldConfig Server::WorldConfigOf(const ServerOptions& options) {
  game::WorldConfig config;
  config.max_players = options.max_players;
  config.max_records = options.max_records;
  config.tick_ms = options.tick_ms();
  config.areanode_depth = options.areanode_depth;
  config.seed = options.seed;
  return config;
}

core::Status Server::Create(const ServerOptions& options, std::unique_ptr<Server>* out) {
  core::Status s = ValidateOptions(options);
  if (!s.ok()) return s;
  std::unique_ptr<Server> sv(new Server(options));
  // Each slow step of the start-up says when it begins or ends: on a large map (thousands of
  // many-sided brushes) they take minutes together. The PVS build also logs how far it has come
  // (LoadVisibility).
  auto started = std::chrono::steady_clock::now();
  spdlog::info("loading map {}", options.map_path);
  s = maps::LoadMap(options.map_path, &sv->map_);
  if (!s.ok()) return s;
  spdlog::info("map loaded in {:.2f} s: {} brushes, {} spawn points, {} pickups, {} teleporters, "
               "{} jump pads",
               core::MsSince(started) / 1000, sv->map_.brushes.size(), sv->map_.spawns.size(),
               sv->map_.pickups.size(), sv->map_.teleporters.size(), sv->map_.jump_pads.size());
  s = game::World::CheckMap(sv->map_);  // before the PVS build, which may take a while
  if (!s.ok()) return s;
  s = collision::CollisionWorld::CheckMap(sv->map_);
  if (!s.ok()) return s;
  started = std::chrono::steady_clock::now();
  sv->collision_ = collision::CollisionWorld::Build(sv->map_, game::CollisionOptions());
  spdlog::info("collision built in {:.2f} s: {} solid brushes; visibility next (the cached PVS, "
               "or a new one built)",
               core::MsSince(started) / 1000, sv->collision_->NumSolidBrushes());
  s = sv->LoadVisibility();
  if (!s.ok()) return s;
  s = game::World::Create(sv->map_, *sv->collision_, WorldConfigOf(options), &sv->world_);
  if (!s.ok()) return s;
  if (sv->world_->first_record() > proto::kMaxEntityId + 1) {
    return core::Status::InvalidArgument(
        "--max-players " + std::to_string(options.max_players) + " on map " + sv->map_.path +
        " (" + std::to_string(sv->map_.pickups.size()) + " pickups) gives " +
        std::to_string(sv->world_->first_record()) + " entities; the wire format allows " +
        std::to_string(proto::kMaxEntityId + 1));
  }
  const bool areanode = options.locking == LockingScheme::kAreanode ||
                        options.locking == LockingScheme::kAreanodeOpt;
  sv->world_->tree().set_parent_locking(areanode);
  sv->world_->set_region_check(options.region_check);
  // Recover before any port is opened: nobody can see the world until it is the durable one.
  if (!options.data_dir.empty()) {
    s = sv->OpenDurability();
    if (!s.ok()) return s;
  }

  // The record store as recovered: in the first stats file, before the first frame.
  sv->stats_.records_offline.store(static_cast<uint64_t>(sv->world_->offline_records()));
  sv->stats_.records_evicted.store(sv->world_->globals().records_evicted);

  FrameShared& sh = sv->shared_;
  sh.world = sv->world_.get();
  sh.options = &sv->options_;
  sh.pvs = &sv->pvs_;
  sh.stats = &sv->stats_;
  sh.ping_ms.reset(new std::atomic<uint32_t>[options.max_players + 1]);
  for (int i = 0; i <= options.max_players; ++i) sh.ping_ms[i].store(0);
  if (options.assign == Assignment::kLocality) {
    sv->locality_ = std::make_unique<LocalityAssignment>(
        sv->world_->tree(), options.threads, options.max_players, LocalityOptionsOf(options));
    sh.locality = sv->locality_.get();
    sh.routed.resize(static_cast<size_t>(options.threads) * static_cast<size_t>(options.threads));
  }
  sv->slot_used_.assign(options.max_players, false);
  sv->last_frags_.assign(options.max_players + 1, 0);
  sv->last_deaths_.assign(options.max_players + 1, 0);

  s = Lobby::Create(options.bind_address, options.port,
                    static_cast<size_t>(std::min(options.max_players + 64, 4095)), &sv->stats_,
                    &sv->status_board_, &sv->join_requests_, &sv->join_decisions_, &sv->lobby_);
  if (!s.ok()) return s;
  for (int i = 0; i < options.threads; ++i) {
    std::unique_ptr<Worker> w;
    s = Worker::Create(i, &sv->shared_, &w);
    if (!s.ok()) return s;
    sv->executors_.push_back(&w->executor());
    sv->workers_.push_back(std::move(w));
  }
  sv->PublishStatus();
  if (const std::string shown = ShownHostname(options.hostname); shown != options.hostname) {
    spdlog::warn("--hostname is shown as '{}' in the status reply (at most {} characters; backslashes, "
                 "control bytes and bytes outside printable ASCII become '_')",
                 shown, proto::kMaxHostnameChars);
  }
  *out = std::move(sv);
  return core::Status::OK();
}

core::Status Server::LoadVisibility() {
  const std::string dir = VisCacheDir(options_);
  vis::PvsParams params;
  params.range_units = std::max(options_.interest_radius, 64.0f);
  core::Status s = vis::LoadOrBuildPvs(map_, *collision_, params, dir, &pvs_, &pvs_report_,
                                       LogVisibilityProgress());
  if (!s.ok()) return s;
  if (!pvs_report_.rejected.empty()) {
    spdlog::warn("visibility cache rejected, rebuilt: {}", pvs_report_.rejected);
  }
  if (!pvs_report_.save_error.empty()) {
    spdlog::warn("visibility cache not saved: {}", pvs_report_.save_error);
  }
  const vis::PvsGrid& g = pvs_.grid();
  spdlog::info("visibility: {} in {:.2f} s ({} cells of {} units, {} open, visible share {:.2f}){}{}",
               pvs_report_.loaded ? "loaded" : "built", pvs_report_.load_s, g.cell_count(),
               g.cell_units, pvs_report_.stats.open_cells, pvs_report_.stats.visible_fraction,
               pvs_report_.path.empty() ? "" : ", cache ", pvs_report_.path);
  return core::Status::OK();
}

Server::~Server() {
  RequestStop();
  Wait();
}

void Server::Start() {
  AS_CHECK(!started_, "Start called twice");
  started_ = true;
  start_ms_ = core::SteadyMs();
  if (options_.frame_mode == FrameMode::kFixed) {
    barrier_ = std::make_unique<std::barrier<>>(options_.threads);
  }
  lobby_thread_ = std::thread([this] {
    core::NameThisThread("as-lobby");
    lobby_->Run(lobby_stop_);
  });
  for (int i = 0; i < options_.threads; ++i) {
    threads_.emplace_back([this, i] {
      core::NameThisThread("as-frame-" + std::to_string(i));
      FrameThread(i);
    });
  }
  spdlog::info("serving {} on UDP {} (workers {}..{}), {} thread(s), locking {}, {} frames",
               options_.map_path, lobby_port(), worker_port(0), worker_port(options_.threads - 1),
               options_.threads, LockingName(options_.locking), FrameModeName(options_.frame_mode));
}

void Server::Wait() {
  for (std::thread& t : threads_) {
    if (t.joinable()) t.join();
  }
  lobby_stop_.store(true, std::memory_order_release);
  if (lobby_thread_.joinable()) lobby_thread_.join();
  if (durability_ != nullptr) {
    const core::Status s = durability_->Close();  // flushes and syncs the log
    if (!s.ok() && !durability_failed_.load()) Fail(s);
  }
}

core::Status Server::fatal_status() const {
  core::MutexLock lock(&fatal_mu_);
  return fatal_;
}

StatsReport Server::Report() const {
  ReportInfo info;
  info.threads = options_.threads;
  info.locking = LockingName(options_.locking);
  info.frame_mode = FrameModeName(options_.frame_mode);
  info.assign = AssignmentName(options_.assign);
  info.map = options_.map_path;
  info.tick_hz = options_.tick_hz;
  info.areanode_depth = options_.areanode_depth;
  info.leaf_count = world_->tree().leaf_count();
  info.max_players = options_.max_players;
  info.max_records = options_.max_records;
  info.instrument = options_.instrument;
  info.lobby_port = lobby_port();
  info.metrics_port = metrics_port_;
  for (const auto& w : workers_) info.worker_ports.push_back(w->port());
  info.uptime_s = started_ ? static_cast<double>(core::SteadyMs() - start_ms_) / 1000.0 : 0.0;
  StatsReport r = TakeReport(stats_, info);
  if (durability_ != nullptr) {
    r.durability.enabled = true;
    r.durability.data_dir = options_.data_dir;
    r.durability.algorithm = recovery::AlgorithmName(options_.checkpoint);
    r.durability.mode = recovery::SyncModeName(options_.sync_mode);
    r.durability.interval_ms = options_.checkpoint_interval_ms;
    r.durability.recovery = recovery_report_;
    r.durability.stats = durability_->stats();
  }
  return r;
}

// ---- Frame threads ---------------------------------------------------------------------------

void Server::FrameThread(int index) {
  PhaseClock clock(&stats_.thread(index), options_.instrument);
  clock.Start(Phase::kIdle);
  if (options_.frame_mode == FrameMode::kFixed) {
    RunFixed(index, &clock);
  } else {
    RunRequest(index, &clock);
  }
  clock.Finish();
  workers_[index]->Shutdown();
}

// Fixed frames (the paper's Figure 3): the master paces the ticks and runs the serial phases;
// every thread runs its requests and replies between the barriers (server_gate.cc).
void Server::RunFixed(int index, PhaseClock* clock) {
  Worker& w = *workers_[index];
  const bool master = index == 0;
  TickPacer pacer(options_.tick_hz);
  for (;;) {
    if (master) {
      WaitForTick(&pacer, clock);
      CheckpointPhase(clock);
      stop_frame_ = stop_requested();
      if (!stop_frame_) WorldPhase(/*run_world=*/true, clock);
    }
    AwaitWorldPhase(master, clock);                  // barrier A
    if (stop_frame_) break;
    w.ReceiveRequests(clock);
    if (locality_) {
      AwaitRoutedCommands(clock);                    // barrier R
      w.ExecuteRoutedRequests(clock);
    }
    AwaitRequests(clock);                            // barrier B
    if (!AwaitTickRecord(master, clock)) break;      // B': durability failed, no replies
    ReplyWhenDurable(w, clock);
    if (!AwaitReplies(index, clock)) break;          // barrier C
  }
}

// Request frames (QuakeWorld's select loop, shared by the threads): a thread with requests
// joins the open frame, or opens one as its master; the frame gate is in server_gate.cc.
void Server::RunRequest(int index, PhaseClock* clock) {
  Worker& w = *workers_[index];
  for (;;) {
    const bool want = WaitForRequests(index, clock);
    if (stop_requested()) break;
    if (!want) continue;
    const JoinOutcome outcome = JoinFrame(clock);
    if (outcome == JoinOutcome::kStop) break;
    if (outcome == JoinOutcome::kMaster) {
      CheckpointPhase(clock);
      WorldPhase(WorldTickDue(), clock);
      OpenRequests();
    }
    w.ReceiveRequests(clock);
    if (IntraBarrier(clock)) ReplyWhenDurable(w, clock);
    EndFrame(index);
  }
}

// ---- World phase (master) --------------------------------------------------------------------

void Server::AssignByLocality() {
  if (!locality_) return;
  locality_->Update(*world_, log_tick_);
  stats_.migrations.store(locality_->migrations(), std::memory_order_relaxed);
  stats_.rebalances.store(locality_->rebalances(), std::memory_order_relaxed);
  stats_.leaves_moved.store(locality_->leaves_moved(), std::memory_order_relaxed);
}

bool Server::WorldTickDue() {
  const uint64_t now = core::SteadyNs();
  if (now < last_world_ns_ + static_cast<uint64_t>(options_.tick_ms()) * 1'000'000) return false;
  last_world_ns_ = now;
  return true;
}

void Server::WorldPhase(bool run_world, PhaseClock* clock) {
  clock->Switch(Phase::kWorld);
  SumFrameStats();
  ++log_tick_;
  shared_.frame_no = static_cast<uint32_t>(log_tick_);
  // The tick's world part, in the order replay follows: leaves, joins, the game's world phase.
  record_.Clear();
  LeaveRecovered();
  ApplyNotices();
  ApplyJoins();
  shared_.tick = durability::ApplyWorldPhase(world_.get(), run_world, &record_);
  AssignByLocality();
  stats_.records_offline.store(static_cast<uint64_t>(world_->offline_records()), std::memory_order_relaxed);
  stats_.records_evicted.store(world_->globals().records_evicted, std::memory_order_relaxed);
  if (run_world) AddRelaxed(stats_.world_ticks, 1);
  DetectKills();
  const uint64_t now_ms = core::SteadyMs();
  if (now_ms >= last_status_ms_ + 1000) {
    last_status_ms_ = now_ms;
    PublishStatus();
  }
  if (options_.metrics && now_ms >= last_metrics_ms_ + kMetricsPublishMs) {
    last_metrics_ms_ = now_ms;
    PublishMetrics();
  }
}

}  // namespace sv
