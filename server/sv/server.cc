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
#include "server/protocol/messages.h"
#include "server/sv/event_scope.h"
#include "server/sv/snapshot_builder.h"
#include "server/sv/transport.h"

namespace sv {

namespace {

constexpr uint64_t kHelloDeadlineMs = 10000;     // joined players must reach their worker by then
constexpr uint64_t kRequestMaxTicNs = 100'000'000;  // request mode: a frame at least every 100 ms
constexpr int kRequestPollMs = 1;
constexpr uint32_t kNewIdentitySlots = 4096;  // new-identity buckets, hashed by source address

std::string MapName(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  const size_t dot = name.rfind('.');
  if (dot != std::string::npos && dot > 0) name.resize(dot);
  for (char& c : name) {
    if (c == ' ' || c == '\\' || c < 0x21 || c > 0x7e) c = '_';
  }
  return name.empty() ? "map" : name.substr(0, proto::kMaxMapNameChars);
}

// --vis-cache: "none" is no cache; "" is the user's cache as XDG says (shared by every server and
// data dir of one map), or the data dir on a machine without a home.
std::string VisCacheDir(const ServerOptions& o) {
  if (o.vis_cache_dir == "none") return "";
  if (!o.vis_cache_dir.empty()) return o.vis_cache_dir;
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg != nullptr && *xdg != '\0') return std::string(xdg) + "/aftershock/vis";
  const char* home = std::getenv("HOME");
  if (home != nullptr && *home != '\0') return std::string(home) + "/.cache/aftershock/vis";
  return o.data_dir.empty() ? "" : o.data_dir + "/vis";
}

}  // namespace

Server::Server(const ServerOptions& options)
    : options_(options),
      stats_(options.threads),
      ticket_rng_(std::random_device{}()),
      new_identities_(options.new_identity_burst, options.new_identity_per_min / 60.0,
                      kNewIdentitySlots, ticket_rng_()) {}

core::Status Server::Create(const ServerOptions& options, std::unique_ptr<Server>* out) {
  core::Status s = ValidateOptions(options);
  if (!s.ok()) return s;
  std::unique_ptr<Server> sv(new Server(options));
  s = maps::LoadMap(options.map_path, &sv->map_);
  if (!s.ok()) return s;
  sv->collision_ = collision::CollisionWorld::Build(sv->map_);
  s = sv->LoadVisibility();
  if (!s.ok()) return s;
  game::WorldConfig config;
  config.max_players = options.max_players;
  config.max_records = options.max_records;
  config.tick_ms = options.tick_ms();
  config.areanode_depth = options.areanode_depth;
  config.seed = options.seed;
  s = game::World::Create(sv->map_, *sv->collision_, config, &sv->world_);
  if (!s.ok()) return s;
  if (sv->world_->first_record() > proto::kMaxEntityId + 1) {
    return core::Status::InvalidArgument(
        "--max-players " + std::to_string(options.max_players) + " gives " +
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
    sv->workers_.push_back(std::move(w));
  }
  sv->PublishStatus();
  *out = std::move(sv);
  return core::Status::OK();
}

core::Status Server::LoadVisibility() {
  const std::string dir = VisCacheDir(options_);
  vis::PvsParams params;
  params.range_units = std::max(options_.interest_radius, 64.0f);
  core::Status s = vis::LoadOrBuildPvs(map_, *collision_, params, dir, &pvs_, &pvs_report_);
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
  lobby_thread_ = std::thread([this] { lobby_->Run(lobby_stop_); });
  for (int i = 0; i < options_.threads; ++i) {
    threads_.emplace_back([this, i] { FrameThread(i); });
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

void Server::RunFixed(int index, PhaseClock* clock) {
  Worker& w = *workers_[index];
  const auto period = std::chrono::nanoseconds(1'000'000'000LL / options_.tick_hz);
  auto next_tick = std::chrono::steady_clock::now();
  for (;;) {
    if (index == 0) {
      clock->Switch(Phase::kIdle);
      next_tick += period;
      const auto now = std::chrono::steady_clock::now();
      if (next_tick < now - period) next_tick = now;  // fell behind: do not burst to catch up
      std::this_thread::sleep_until(next_tick);
      frame_start_ns_ = core::SteadyNs();
      clock->Switch(Phase::kCheckpoint);
      CheckpointBoundary();
      stop_frame_ = stop_requested();
      if (!stop_frame_) {
        clock->Switch(Phase::kWorld);
        WorldPhase(/*run_world=*/true);
      }
      clock->Switch(Phase::kInterWait);
      barrier_->arrive_and_wait();  // A: world phase done
    } else {
      clock->Switch(Phase::kIdle);
      barrier_->arrive_and_wait();  // A
      clock->SwitchSplit(frame_start_ns_, Phase::kInterWait, Phase::kInterWait);
    }
    if (stop_frame_) break;
    w.RequestPhase(clock);
    clock->Switch(Phase::kIntraWait);
    barrier_->arrive_and_wait();  // B: every request executed
    if (durability_ != nullptr) {
      if (index == 0) {
        clock->Switch(Phase::kLogSync);
        AppendTickRecord();
        clock->Switch(Phase::kIntraWait);
      }
      barrier_->arrive_and_wait();  // B': the frame's record is appended (its sync under way)
      if (durability_failed_.load(std::memory_order_acquire)) break;  // no reply for this frame
    }
    ReplyWhenDurable(w, clock);
    clock->Switch(Phase::kInterWait);
    AddRelaxed(stats_.thread(index).frames, 1);
    barrier_->arrive_and_wait();  // C: every reply sent
    if (durability_failed_.load(std::memory_order_acquire)) break;
    if (index == 0) {
      stats_.RecordFrame(core::SteadyNs() - frame_start_ns_);
      AddRelaxed(stats_.frames, 1);
    }
  }
}

void Server::RunRequest(int index, PhaseClock* clock) {
  Worker& w = *workers_[index];
  for (;;) {
    clock->Switch(Phase::kIdle);
    bool want = w.Poll(kRequestPollMs);
    if (stop_requested()) break;
    if (!want && index == 0) {
      // The master of last resort: pending joins/leaves, or QuakeWorld's sv_maxtic.
      want = !join_requests_.Empty() || !shared_.notices.Empty() ||
             core::SteadyNs() > last_frame_end_ns_.load(std::memory_order_relaxed) + kRequestMaxTicNs;
    }
    if (!want) continue;
    clock->Switch(Phase::kInterWait);
    const JoinOutcome outcome = JoinFrame(index);
    if (outcome == JoinOutcome::kStop) break;
    if (outcome == JoinOutcome::kMaster) {
      clock->Switch(Phase::kCheckpoint);
      CheckpointBoundary();
      clock->Switch(Phase::kWorld);
      const uint64_t now = core::SteadyNs();
      const bool run_world =
          now >= last_world_ns_ + static_cast<uint64_t>(options_.tick_ms()) * 1'000'000;
      if (run_world) last_world_ns_ = now;
      WorldPhase(run_world);
      core::MutexLock lock(&gate_mu_);
      state_ = FrameState::kRequests;
      gate_cv_.SignalAll();
    }
    w.RequestPhase(clock);
    clock->Switch(Phase::kIntraWait);
    if (IntraBarrier(clock)) ReplyWhenDurable(w, clock);
    AddRelaxed(stats_.thread(index).frames, 1);
    EndFrame(index);
  }
}

Server::JoinOutcome Server::JoinFrame(int /*index*/) {
  core::MutexLock lock(&gate_mu_);
  for (;;) {
    if (state_ == FrameState::kIdle) {
      if (stop_requested()) return JoinOutcome::kStop;
      state_ = FrameState::kWorld;
      ++gate_frame_;
      participants_ = 1;
      arrived_ = done_ = 0;
      gate_frame_start_ns_ = core::SteadyNs();
      return JoinOutcome::kMaster;
    }
    if (state_ == FrameState::kWorld) {
      ++participants_;
      const uint64_t frame = gate_frame_;
      while (gate_frame_ == frame && state_ == FrameState::kWorld) gate_cv_.Wait(&gate_mu_);
      return JoinOutcome::kParticipant;
    }
    // Too late for this frame: wait for its end (the master's frame-end signal).
    const uint64_t frame = gate_frame_;
    while (gate_frame_ == frame && state_ != FrameState::kIdle) gate_cv_.Wait(&gate_mu_);
  }
}

bool Server::IntraBarrier(PhaseClock* clock) {
  gate_mu_.Lock();
  if (++arrived_ == participants_) {
    // The last thread out of the request phase logs the frame. Nobody can join the frame now
    // (state_ is kRequests), and the others wait for kReplies.
    if (durability_ != nullptr) {
      gate_mu_.Unlock();
      clock->Switch(Phase::kLogSync);
      AppendTickRecord();
      clock->Switch(Phase::kIntraWait);
      gate_mu_.Lock();
    }
    state_ = FrameState::kReplies;
    gate_cv_.SignalAll();
  } else {
    const uint64_t frame = gate_frame_;
    while (gate_frame_ == frame && state_ != FrameState::kReplies) gate_cv_.Wait(&gate_mu_);
  }
  gate_mu_.Unlock();
  return !durability_failed_.load(std::memory_order_acquire);
}

void Server::EndFrame(int /*index*/) {
  core::MutexLock lock(&gate_mu_);
  if (++done_ == participants_) {
    const uint64_t now = core::SteadyNs();
    stats_.RecordFrame(now - gate_frame_start_ns_);
    AddRelaxed(stats_.frames, 1);
    last_frame_end_ns_.store(now, std::memory_order_relaxed);
    state_ = FrameState::kIdle;
    gate_cv_.SignalAll();
  }
}

// ---- World phase (master) --------------------------------------------------------------------

void Server::WorldPhase(bool run_world) {
  SumFrameStats();
  ++log_tick_;
  shared_.frame_no = static_cast<uint32_t>(log_tick_);
  // The tick's world part, in the order replay follows: leaves, joins, the game's world phase.
  record_.Clear();
  LeaveRecovered();
  ApplyNotices();
  ApplyJoins();
  shared_.tick = durability::ApplyWorldPhase(world_.get(), run_world, &record_);
  stats_.records_offline.store(static_cast<uint64_t>(world_->offline_records()), std::memory_order_relaxed);
  stats_.records_evicted.store(world_->globals().records_evicted, std::memory_order_relaxed);
  if (run_world) AddRelaxed(stats_.world_ticks, 1);
  DetectKills();
  const uint64_t now_ms = core::SteadyMs();
  if (now_ms >= last_status_ms_ + 1000) {
    last_status_ms_ = now_ms;
    PublishStatus();
  }
  if (options_.metrics_port != 0 && now_ms >= last_metrics_ms_ + kMetricsPublishMs) {
    last_metrics_ms_ = now_ms;
    PublishMetrics();
  }
}

void Server::SumFrameStats() {
  // Requests per thread per frame, over the threads that took part in the closed frame.
  uint32_t lo = UINT32_MAX, hi = 0;
  int in_frame = 0, locking_threads = 0;
  for (auto& w : workers_) {
    Worker::FrameCounters& c = w->frame_counters();
    if (!c.in_frame) continue;
    ++in_frame;
    AddRelaxed(stats_.rptf_samples, 1);
    AddRelaxed(stats_.rptf_sum, c.requests);
    AddRelaxed(stats_.rptf_sum_sq, static_cast<uint64_t>(c.requests) * c.requests);
    lo = std::min(lo, c.requests);
    hi = std::max(hi, c.requests);
    AddRelaxed(stats_.locked_commands, c.locked_commands);
    AddRelaxed(stats_.distinct_leaves, c.distinct_leaves);
    AddRelaxed(stats_.lock_retries, c.retries);
    if (c.locked_commands > 0) ++locking_threads;  // only locking schemes count them
  }
  if (in_frame >= 2) {
    AddRelaxed(stats_.rptf_spread_sum, hi - lo);
    AddRelaxed(stats_.rptf_spread_frames, 1);
  }
  // Leaf statistics: relocks and leaves shared by two or more threads in the frame.
  if (workers_[0]->locker() != nullptr) {
    const int leaves = workers_[0]->locker()->leaf_count();
    uint64_t acquisitions = 0, relocks = 0;
    int shared_leaves = 0;
    for (int l = 0; l < leaves; ++l) {
      uint64_t a = 0;
      int t = 0;
      for (auto& w : workers_) {
        const uint32_t n = w->locker()->frame_counts()[l];
        a += n;
        t += n > 0 ? 1 : 0;
      }
      acquisitions += a;
      relocks += a > 1 ? a - 1 : 0;
      shared_leaves += t >= 2 ? 1 : 0;
    }
    AddRelaxed(stats_.leaf_acquisitions, acquisitions);
    AddRelaxed(stats_.relocks, relocks);
    if (locking_threads >= 2) {
      AddRelaxed(stats_.shared_frames, 1);
      AddRelaxed(stats_.shared_leaves_milli_pct,
                 static_cast<uint64_t>(100000.0 * shared_leaves / leaves));
    }
    for (auto& w : workers_) w->locker()->ResetFrame();
  }
  for (auto& w : workers_) w->frame_counters() = Worker::FrameCounters{};
}

void Server::ApplyNotices() {
  notice_scratch_.clear();
  shared_.notices.DrainInto(&notice_scratch_);
  for (const WorkerNotice& n : notice_scratch_) {
    if (n.kind == WorkerNotice::Kind::kChat) {
      proto::ChatEvent chat;
      chat.from_id = static_cast<uint16_t>(n.player);
      chat.from_name = world_->Get(n.player).name;
      chat.text = n.text;
      std::vector<uint8_t> bytes;
      if (proto::Encode(chat, &bytes).ok()) Broadcast(bytes);
      continue;
    }
    auto it = online_.find(n.player);
    if (it == online_.end()) continue;
    const core::Status s = durability::ApplyLeave(world_.get(), n.player, &record_);
    if (!s.ok()) spdlog::warn("leave of player {} failed: {}", n.player, s.ToString());
    slot_used_[it->second.slot] = false;
    online_.erase(it);
    AddRelaxed(stats_.leaves, 1);
    stats_.players_online.store(online_.size(), std::memory_order_relaxed);
  }
}

int Server::WorkerForSlot(int slot) const {
  if (options_.assign == Assignment::kRoundRobin) return slot % options_.threads;
  return static_cast<int>(static_cast<int64_t>(slot) * options_.threads / options_.max_players);
}

void Server::ApplyJoins() {
  join_scratch_.clear();
  join_requests_.DrainInto(&join_scratch_);
  // A tick record lists leaves before joins, so every leave a duplicate login causes is applied
  // first, then the joins. Of several requests for one name in this batch the newest wins.
  std::vector<bool> superseded(join_scratch_.size(), false);
  for (size_t i = 0; i < join_scratch_.size(); ++i) {
    for (size_t j = i + 1; j < join_scratch_.size() && !superseded[i]; ++j) {
      superseded[i] = join_scratch_[j].name == join_scratch_[i].name;
    }
  }
  for (size_t i = 0; i < join_scratch_.size(); ++i) {
    if (!superseded[i]) ReplaceOnlineSession(join_scratch_[i]);
  }
  for (size_t i = 0; i < join_scratch_.size(); ++i) {
    JoinDecision d;
    d.lobby_conn = join_scratch_[i].lobby_conn;
    if (superseded[i]) {
      d.refuse.reason = proto::RefuseReason::kAlreadyConnected;
      d.refuse.text = "superseded by a newer login of the same identity";
    } else {
      d.refuse = DecideJoin(join_scratch_[i], &d);
    }
    join_decisions_.Push(std::move(d));
  }
}

void Server::ReplaceOnlineSession(const JoinTicketRequest& req) {
  const game::EntityId existing = world_->FindPlayer(req.name);
  auto it = online_.find(existing);
  // Duplicate login (docs/protocol.md section 4): with the right token the new session wins.
  // The old one leaves now, in this serial phase and in the log, and its worker drops the
  // session without a leave notice. A wrong token never kicks the real player.
  if (existing == 0 || it == online_.end() || !world_->TokenMatches(existing, req.token)) return;
  PlayerAssignment drop;
  drop.player = existing;
  drop.drop = true;
  drop.rejoin_ip = req.source_ip;
  drop.rejoin_port = req.source_port;
  workers_[it->second.worker]->assignments().Push(drop);
  const core::Status s = durability::ApplyLeave(world_.get(), existing, &record_);
  if (!s.ok()) spdlog::warn("leave of player {} on duplicate login failed: {}", existing, s.ToString());
  slot_used_[it->second.slot] = false;
  online_.erase(it);
  AddRelaxed(stats_.leaves, 1);
}

proto::JoinRefuse Server::DecideJoin(const JoinTicketRequest& req, JoinDecision* d) {
  proto::JoinRefuse refuse;
  const game::EntityId existing = world_->FindPlayer(req.name);
  const bool known = existing != 0 || world_->FindRecord(req.name) != 0;
  if (existing != 0 && online_.count(existing)) {
    // Still online after ReplaceOnlineSession: the token did not match.
    refuse.reason = proto::RefuseReason::kWrongToken;
    refuse.text = "wrong token for player '" + req.name + "'";
    return refuse;
  }
  if (online_.size() >= static_cast<size_t>(options_.max_players)) {
    refuse.reason = proto::RefuseReason::kServerFull;
    refuse.text = "server full (" + std::to_string(options_.max_players) + " players)";
    return refuse;
  }
  // A new identity costs a record when it leaves: new names per source address are rate-limited
  // so a flood of one-shot names cannot churn returning players' records out of the store.
  if (!known && !new_identities_.Allow(req.source_ip, 0, core::SteadyMs())) {
    refuse.reason = proto::RefuseReason::kServerFull;
    refuse.text = "too many new players from your address: try again later or join with a known name";
    stats_.new_identity_refusals.fetch_add(1, std::memory_order_relaxed);
    return refuse;
  }
  const game::JoinResult r = durability::ApplyJoin(world_.get(), req.name, req.token, &record_);
  if (!r.status.ok()) {
    if (r.status.code() == core::Status::Code::kInvalidArgument) {
      refuse.reason = proto::RefuseReason::kBadName;
    } else {
      refuse.reason = known ? proto::RefuseReason::kWrongToken : proto::RefuseReason::kServerFull;
    }
    refuse.text = r.status.message().substr(0, proto::kMaxReasonChars);
    return refuse;
  }
  int slot = 0;
  while (slot_used_[slot]) ++slot;  // online_.size() < max_players: a free slot exists
  slot_used_[slot] = true;
  const int worker = WorkerForSlot(slot);
  online_[r.player] = Online{slot, worker, core::SteadyMs()};
  uint64_t ticket = 0;
  while (ticket == 0) ticket = ticket_rng_();
  const game::Edict& p = world_->Get(r.player);
  workers_[worker]->assignments().Push(
      PlayerAssignment{r.player, ticket, p.last_cmd_sequence, core::SteadyMs() + kHelloDeadlineMs});
  last_frags_[r.player] = p.frags;
  last_deaths_[r.player] = p.deaths;
  d->accepted = true;
  d->accept.worker_port = workers_[worker]->port();
  d->accept.player_id = static_cast<uint16_t>(r.player);
  d->accept.session_ticket = ticket;
  d->accept.last_applied_sequence = p.last_cmd_sequence;
  d->accept.tick_rate_hz = static_cast<uint16_t>(options_.tick_hz);
  d->accept.server_tick = static_cast<uint32_t>(std::max(0, world_->globals().tick));
  d->accept.server_time_ms = core::SteadyMs() - start_ms_;
  AddRelaxed(stats_.joins, 1);
  stats_.players_online.store(online_.size(), std::memory_order_relaxed);
  if (online_.size() > Load(stats_.max_players_online)) {
    stats_.max_players_online.store(online_.size(), std::memory_order_relaxed);
  }
  return refuse;
}

void Server::Broadcast(const std::vector<uint8_t>& bytes) {
  ReliableEvent e;
  e.bytes = bytes;
  Send(e);
}

void Server::Send(const ReliableEvent& event) {
  for (auto& w : workers_) w->events().Push(ReliableEvent(event));
}

void Server::DetectKills() {
  // The game keeps frag and death counters, not a kill log: a death is a FragEvent when the
  // killer is unambiguous (exactly one player gained frags), else a DeathEvent.
  std::vector<game::EntityId> victims, killers;
  int gained = 0;
  for (const auto& [id, online] : online_) {
    const game::Edict& e = world_->Get(id);
    if (e.deaths > last_deaths_[id]) victims.push_back(id);
    if (e.frags > last_frags_[id]) {
      killers.push_back(id);
      gained += e.frags - last_frags_[id];
    }
  }
  for (game::EntityId v : victims) {
    const game::Edict& e = world_->Get(v);
    std::vector<uint8_t> bytes;
    if (killers.size() == 1 && gained == static_cast<int>(victims.size()) && killers[0] != v) {
      proto::FragEvent f;
      f.killer_id = static_cast<uint16_t>(killers[0]);
      f.victim_id = static_cast<uint16_t>(v);
      f.weapon = WireWeapon(world_->Get(killers[0]).weapon);
      if (proto::Encode(f, &bytes).ok()) Send(ScopedEvent(std::move(bytes), killers[0], v, e.origin));
    } else {
      proto::DeathEvent de;
      de.victim_id = static_cast<uint16_t>(v);
      de.cause = e.frags < last_frags_[v] ? proto::DeathCause::kSuicide : proto::DeathCause::kWorld;
      if (proto::Encode(de, &bytes).ok()) Send(ScopedEvent(std::move(bytes), -1, v, e.origin));
    }
  }
  for (const auto& [id, online] : online_) {
    last_frags_[id] = world_->Get(id).frags;
    last_deaths_[id] = world_->Get(id).deaths;
  }
}

void Server::PublishStatus() {
  proto::ServerStatus st;
  st.hostname = options_.hostname.substr(0, proto::kMaxHostnameChars);
  for (char& c : st.hostname) {
    if (c == '\\' || c < 0x20 || c > 0x7e) c = '_';  // the status format's separator
  }
  st.map = MapName(options_.map_path);
  st.players = static_cast<uint32_t>(online_.size());
  st.max_players = static_cast<uint32_t>(options_.max_players);
  st.protocol_version = proto::kProtocolVersion;
  st.tick_rate_hz = static_cast<uint32_t>(options_.tick_hz);
  for (const auto& [id, online] : online_) {
    const game::Edict& e = world_->Get(id);
    proto::StatusPlayer p;
    p.user_id = static_cast<uint32_t>(id);
    p.minutes = static_cast<uint32_t>(std::min<uint64_t>((core::SteadyMs() - online.joined_ms) / 60000, 99999));
    p.name = e.name;
    p.frags = std::clamp<int32_t>(e.frags, -32768, 32767);
    // Never 0: qstat takes a QuakeWorld player with ping 0 for a bot, leaves it out of the player
    // count and cuts its name.
    p.ping_ms = std::clamp<uint32_t>(shared_.ping_ms[id].load(std::memory_order_relaxed), 1, 9999);
    st.player_list.push_back(std::move(p));
  }
  std::sort(st.player_list.begin(), st.player_list.end(),
            [](const proto::StatusPlayer& a, const proto::StatusPlayer& b) { return a.name < b.name; });
  status_board_.Publish(std::move(st));
}

// ---- Durability ------------------------------------------------------------------------------

core::Status Server::OpenDurability() {
  durability::DurabilityOptions o;
  o.data_dir = options_.data_dir;
  o.algorithm = options_.checkpoint;
  o.sync_mode = options_.sync_mode;
  o.checkpoint_interval_ms = options_.checkpoint_interval_ms;
  o.async_flush_ms = options_.async_flush_ms;
  if (options_.hash_log) o.hash_log_path = recovery::JoinPath(options_.data_dir, "hash.log");
  const durability::WorldRecoveryReport& r = recovery_report_;
  core::Status s = durability::Durability::Open(o, world_.get(), &recovery_report_, &durability_);
  for (const std::string& note : r.notes) spdlog::warn("recovery: {}", note);
  if (!s.ok()) return s;
  if (r.found_state) {
    spdlog::info("recovered {} to log tick {} (world tick {}): checkpoint tick {} (backup {}), "
                 "{} ticks replayed; restore {:.1f} ms, replay {:.1f} ms, total {:.1f} ms; "
                 "state hash {:016x}",
                 options_.data_dir, r.recovered_tick, r.world_tick, r.checkpoint_tick,
                 r.backup_index, r.ticks_replayed, r.restore_ms, r.replay_ms, r.total_ms,
                 r.state_hash);
  } else {
    spdlog::info("data dir {}: no saved state, a new world ({} checkpoints, {} durability)",
                 options_.data_dir, recovery::AlgorithmName(options_.checkpoint),
                 recovery::SyncModeName(options_.sync_mode));
  }
  log_tick_ = durability_->recovered_tick();
  recorder_ = std::make_unique<durability::TickRecorder>(options_.threads);
  shared_.recorder = recorder_.get();
  // Players online at the crash have no session now: the first frame logs their leaves.
  for (game::EntityId id = 1; id <= world_->max_players(); ++id) {
    if (world_->Get(id).flags & game::kFlagConnected) recovered_online_.push_back(id);
  }
  return core::Status::OK();
}

void Server::LeaveRecovered() {
  for (game::EntityId id : recovered_online_) {
    const core::Status s = durability::ApplyLeave(world_.get(), id, &record_);
    if (!s.ok()) spdlog::warn("leave of recovered player {} failed: {}", id, s.ToString());
  }
  recovered_online_.clear();
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
