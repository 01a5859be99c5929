// ParallelReplay: a per-tick dependency graph over areanode leaves, built in log order while the
// pool runs the commands whose predecessors are done (why it is exact: parallel_replay.h).
#include "server/durability/parallel_replay.h"

#include <algorithm>
#include <iterator>

#include "server/core/check.h"
#include "server/core/steady_clock.h"
#include "server/durability/tick_apply.h"
#include "server/game/region.h"
#include "server/game/rng.h"

namespace durability {

ParallelReplay::ParallelReplay(game::World* world, const Options& options)
    : world_(world), options_(options) {
  AS_CHECK(options.threads >= 2 && options.threads <= kMaxReplayThreads,
           "ParallelReplay: threads out of range");
  AS_CHECK(options.min_parallel_commands >= 1, "ParallelReplay: min_parallel_commands < 1");
  {
    core::MutexLock lock(&mu_);
    shuffle_state_ = options.shuffle_seed;
    leaf_holder_.assign(static_cast<size_t>(world_->tree().leaf_count()), -1);
    last_of_player_.assign(static_cast<size_t>(world_->max_players()) + 1, -1);
  }
  helpers_.reserve(static_cast<size_t>(options.threads - 1));
  for (int i = 1; i < options.threads; ++i) helpers_.emplace_back([this] { HelperMain(); });
}

ParallelReplay::~ParallelReplay() {
  {
    core::MutexLock lock(&mu_);
    stop_ = true;
  }
  tick_cv_.SignalAll();
  for (std::thread& t : helpers_) t.join();
}

ParallelReplay::Stats ParallelReplay::stats() const {
  core::MutexLock lock(&mu_);
  return stats_;
}

core::Status ParallelReplay::ApplyCommands(const std::vector<TickCommand>& commands) {
  const int n = static_cast<int>(commands.size());
  const bool small = n < options_.min_parallel_commands;
  if (!small && !options_.adaptive) return ApplyOnPool(commands);
  const bool serial = small || ChooseSerial();
  const uint64_t t0 = core::SteadyNs();
  const core::Status s = serial ? ApplySerially(commands) : ApplyOnPool(commands);
  if (!small) {
    // An exponential average per command (ticks differ in size), 1/4 weight to the newest tick.
    const double ns = static_cast<double>(core::SteadyNs() - t0) / n;
    double& estimate = serial ? serial_ns_per_command_ : pool_ns_per_command_;
    estimate = estimate < 0 ? ns : 0.75 * estimate + 0.25 * ns;
  }
  if (serial) {
    core::MutexLock lock(&mu_);
    ++stats_.serial_ticks;
    if (!small) ++stats_.adaptive_serial_ticks;
    stats_.commands += static_cast<uint64_t>(n);
  }
  return s;
}

// Probes the mode whose estimate is missing or due (one tick in kProbeInterval each), else picks
// the cheaper estimate.
bool ParallelReplay::ChooseSerial() {
  const uint64_t tick = adaptive_ticks_++;
  if (serial_ns_per_command_ < 0 || tick % kProbeInterval == 0) return true;
  if (pool_ns_per_command_ < 0 || tick % kProbeInterval == 1) return false;
  return serial_ns_per_command_ < pool_ns_per_command_;
}

core::Status ParallelReplay::ApplySerially(const std::vector<TickCommand>& commands) {
  for (const TickCommand& c : commands) {
    const core::Status s = ApplyLoggedCommand(world_, c);
    if (!s.ok()) return s;
  }
  return core::Status::OK();
}

core::Status ParallelReplay::ApplyOnPool(const std::vector<TickCommand>& commands) {
  const int n = static_cast<int>(commands.size());
  // No helper touches the World between ticks, so the owner may switch the tree's mode here.
  areanode::AreanodeTree& tree = world_->tree();
  const bool parent_locking = tree.parent_locking();
  tree.set_parent_locking(true);

  mu_.Lock();
  commands_ = &commands;
  count_ = n;
  next_dispatch_ = 0;
  done_count_ = 0;
  running_ = 0;
  failure_ = core::Status::OK();
  std::fill(leaf_holder_.begin(), leaf_holder_.end(), -1);
  previous_of_player_.resize(static_cast<size_t>(n));
  for (int j = 0; j < n; ++j) {
    const game::EntityId p = commands[j].player;
    int* last = world_->IsPlayerId(p) ? &last_of_player_[static_cast<size_t>(p)] : nullptr;
    previous_of_player_[j] = last != nullptr ? *last : -1;
    if (last != nullptr) *last = j;
  }
  for (const TickCommand& c : commands) {
    if (world_->IsPlayerId(c.player)) last_of_player_[static_cast<size_t>(c.player)] = -1;
  }
  done_.assign(static_cast<size_t>(n), 0);
  waiting_on_.assign(static_cast<size_t>(n), 0);
  chain_.assign(static_cast<size_t>(n), 1);
  tick_chain_ = 0;
  if (dependents_.size() < static_cast<size_t>(n)) dependents_.resize(static_cast<size_t>(n));
  for (int j = 0; j < n; ++j) dependents_[j].clear();
  ready_.clear();
  ++generation_;
  tick_cv_.SignalAll();
  RunTick();
  const core::Status result = failure_;
  commands_ = nullptr;
  ++stats_.parallel_ticks;
  stats_.commands += static_cast<uint64_t>(done_count_);
  stats_.pool_commands += static_cast<uint64_t>(done_count_);
  stats_.critical_path += static_cast<uint64_t>(tick_chain_);
  mu_.Unlock();

  tree.set_parent_locking(parent_locking);
  return result;
}

void ParallelReplay::HelperMain() {
  mu_.Lock();
  uint64_t seen = generation_;
  for (;;) {
    while (!stop_ && generation_ == seen) tick_cv_.Wait(&mu_);
    if (stop_) break;
    seen = generation_;
    RunTick();
  }
  mu_.Unlock();
}

bool ParallelReplay::TickFinished() const {
  return commands_ == nullptr || done_count_ == count_ || (!failure_.ok() && running_ == 0);
}

// Each thread alternates between running a ready command (outside the lock) and extending the
// dispatch; it sleeps only when neither is possible. Wake-ups cost more than a short command, so a
// thread wakes one sleeper only when it leaves ready work behind (the woken one does the same),
// and all of them only when the tick ends. No wake-up is lost: every change happens under mu_
// by a thread that then looks for work itself before it sleeps.
void ParallelReplay::RunTick() {
  while (!TickFinished()) {
    if (!ready_.empty() && failure_.ok()) {
      const int j = TakeReady();
      if (!ready_.empty() && sleepers_ > 0) work_cv_.Signal();
      const TickCommand& c = (*commands_)[static_cast<size_t>(j)];
      ++running_;
      mu_.Unlock();
      const core::Status s = ApplyLoggedCommand(world_, c);
      mu_.Lock();
      --running_;
      Complete(j, s);
      continue;
    }
    if (failure_.ok() && DispatchReady()) continue;
    ++sleepers_;
    work_cv_.Wait(&mu_);
    --sleepers_;
  }
}

int ParallelReplay::TakeReady() {
  if (options_.shuffle_seed != 0 && ready_.size() > 1) {
    const size_t k = static_cast<size_t>(game::NextRandom(&shuffle_state_) % ready_.size());
    std::swap(ready_[0], ready_[k]);
  }
  const int j = ready_.front();
  ready_.pop_front();
  return j;
}

void ParallelReplay::Complete(int j, const core::Status& s) {
  done_[j] = 1;
  ++done_count_;
  if (!s.ok() && failure_.ok()) failure_ = s;
  for (int d : dependents_[j]) {
    if (--waiting_on_[d] == 0) ready_.push_back(d);
  }
  if (TickFinished()) work_cv_.SignalAll();  // the owner and the helpers leave RunTick
}

bool ParallelReplay::DispatchReady() {
  bool any = false;
  while (next_dispatch_ < count_ && TryDispatchOne(next_dispatch_)) {
    ++next_dispatch_;
    any = true;
  }
  if (!any && next_dispatch_ < count_) ++stats_.dispatch_stalls;
  return any;
}

// Dispatches command j (the next in log order) if its leaf set can be computed now: see the
// header for conditions (a) and (b). A command of an id that is not a player slot claims every
// leaf; ApplyLoggedCommand then reports it.
bool ParallelReplay::TryDispatchOne(int j) {
  const TickCommand& c = (*commands_)[static_cast<size_t>(j)];
  const areanode::AreanodeTree& tree = world_->tree();
  const int prev = previous_of_player_[j];
  if (prev >= 0 && !done_[prev]) return false;
  if (world_->IsPlayerId(c.player)) {
    tree.LeavesTouching(world_->BoxOf(c.player), &box_leaves_);
    for (int leaf : box_leaves_) {
      const int holder = leaf_holder_[leaf];
      if (holder >= 0 && !done_[holder]) return false;
    }
    const game::Region region = world_->RegionOf(c.player, c.cmd);
    game::RegionLeaves(region, tree, /*optimized=*/true, &leaves_, &scratch_a_, &scratch_b_);
    merged_.clear();
    std::set_union(leaves_.begin(), leaves_.end(), box_leaves_.begin(), box_leaves_.end(),
                   std::back_inserter(merged_));
  } else {
    merged_.resize(static_cast<size_t>(tree.leaf_count()));
    for (int leaf = 0; leaf < tree.leaf_count(); ++leaf) merged_[leaf] = leaf;
  }
  int waiting = 0;
  for (int leaf : merged_) {
    const int holder = leaf_holder_[leaf];
    leaf_holder_[leaf] = j;
    if (holder >= 0) chain_[j] = std::max(chain_[j], chain_[holder] + 1);
    if (holder < 0 || done_[holder]) continue;
    std::vector<int>& deps = dependents_[holder];
    if (!deps.empty() && deps.back() == j) continue;  // already waits for this holder
    deps.push_back(j);
    ++waiting;
  }
  waiting_on_[j] = waiting;
  tick_chain_ = std::max(tick_chain_, chain_[j]);
  if (waiting == 0) ready_.push_back(j);
  return true;
}

}  // namespace durability
