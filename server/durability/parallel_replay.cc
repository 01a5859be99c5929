// ParallelReplay: a per-tick dependency graph over areanode leaves, built in log order while the
// pool runs the commands whose predecessors are done (why it is exact: parallel_replay.h).
#include "server/durability/parallel_replay.h"

#include <algorithm>
#include <iterator>

#include "server/core/check.h"
#include "server/core/spin_wait.h"
#include "server/core/steady_clock.h"
#include "server/core/thread_name.h"
#include "server/durability/tick_apply.h"
#include "server/game/region.h"
#include "server/game/rng.h"

namespace durability {
namespace {

// How long an idle thread polls before it parks: inside a tick (work comes back within a
// command's time or two), and between ticks (the owner's world part and decoding).
constexpr uint64_t kWorkSpinNs = 50'000;
constexpr uint64_t kTickSpinNs = 200'000;

}  // namespace

ParallelReplay::ParallelReplay(game::World* world, const Options& options)
    : world_(world), options_(options) {
  AS_CHECK(options.threads >= 2 && options.threads <= kMaxReplayThreads,
           "ParallelReplay: threads out of range");
  AS_CHECK(options.min_parallel_commands >= 1, "ParallelReplay: min_parallel_commands < 1");
  {
    core::MutexLock lock(&shuffle_mu_);
    shuffle_state_ = options.shuffle_seed;
  }
  dispatch_.Lock();
  leaf_holder_.assign(static_cast<size_t>(world_->tree().leaf_count()), -1);
  in_flight_.resize(static_cast<size_t>(world_->tree().leaf_count()));
  last_of_player_.assign(static_cast<size_t>(world_->max_players()) + 1, -1);
  player_leaf_.assign(static_cast<size_t>(world_->max_players()) + 1, -1);
  dispatch_.Unlock();
  helpers_.reserve(static_cast<size_t>(options.threads - 1));
  for (int i = 1; i < options.threads; ++i) {
    helpers_.emplace_back([this, i] {
      core::NameThisThread("as-replay-" + std::to_string(i));
      HelperMain(i);
    });
  }
}

ParallelReplay::~ParallelReplay() {
  stop_.store(true, std::memory_order_release);
  generation_.fetch_add(1, std::memory_order_release);
  generation_.notify_all();
  for (std::thread& t : helpers_) t.join();
}

ParallelReplay::Stats ParallelReplay::stats() const {
  core::MutexLock lock(&mu_);
  return stats_;
}

core::Status ParallelReplay::ApplyCommands(const std::vector<TickCommand>& commands) {
  return Apply(commands, nullptr);
}

core::Status ParallelReplay::ApplyTick(const TickRecord& record) { return Apply(record.commands, &record); }

core::Status ParallelReplay::Apply(const std::vector<TickCommand>& commands, const TickRecord* record) {
  // The lock order holds on this tree only if each of its leaves lies inside one of the leaves
  // that were locked (or one lock ordered every command); else the walk works the tick out.
  const bool carried = record != nullptr && record->lock_order;
  const bool fits = carried && (record->lock_depth == 0 || record->lock_depth <= world_->tree().depth());
  const TickRecord* lock_order = fits ? record : nullptr;
  const int n = static_cast<int>(commands.size());
  const bool small = n < options_.min_parallel_commands;
  AdaptiveChoice::Tick choice{small, false};
  if (!small && options_.adaptive) choice = adaptive_.Next();
  const bool serial = choice.serial;
  // With the lock order on the pool, helper 1 cuts the streams while the owner runs the world
  // part; otherwise the world part runs first, alone.
  const bool beside = !serial && lock_order != nullptr;
  if (carried && !fits && !serial) {
    core::MutexLock lock(&mu_);
    ++stats_.coarse_tree_ticks;
  }
  uint64_t job = 0;
  if (beside) job = PostStreamsCut(*lock_order);
  core::Status s = record != nullptr ? ApplyLoggedWorldPart(world_, *record) : core::Status::OK();
  // Timed from here: the commands, as serial replay's are, and for the pool everything it adds
  // (the owner's cut, or its wait for the helper's).
  const uint64_t t0 = core::SteadyNs();
  const uint64_t cross = beside ? FinishStreamsCut(*lock_order, job) : 0;  // also after a failure
  if (!s.ok()) return s;
  if (serial) {
    s = ApplySerially(commands);
  } else if (beside) {
    s = RunPreparedTick(lock_order, cross);
  } else {
    s = ApplyOnPool(commands);
  }
  if (choice.timed) adaptive_.Record(core::SteadyNs() - t0, static_cast<uint64_t>(n));
  if (serial) {
    core::MutexLock lock(&mu_);
    ++stats_.serial_ticks;
    if (!small) ++stats_.adaptive_serial_ticks;
    stats_.commands += static_cast<uint64_t>(n);
  }
  return s;
}

AdaptiveChoice::Tick AdaptiveChoice::Next() {
  const uint64_t phase = tick_++ % kProbeInterval;
  if (phase == 0) serial_ns_ = serial_commands_ = pool_ns_ = pool_commands_ = 0;
  Tick t{serial_wins_, false};
  if (phase < kProbeTicks) {
    t = {true, true};
  } else if (phase == kProbeTicks) {
    t = {false, false};  // wakes the helpers
  } else if (phase < 2 * kProbeTicks) {
    t = {false, true};
  } else if (phase == 2 * kProbeTicks) {
    // Per command, cross-multiplied: serial_ns / serial_commands <= pool_ns / pool_commands.
    serial_wins_ = static_cast<double>(serial_ns_) * static_cast<double>(pool_commands_) <=
                   static_cast<double>(pool_ns_) * static_cast<double>(serial_commands_);
    t.serial = serial_wins_;
  }
  last_serial_ = t.serial;
  return t;
}

void AdaptiveChoice::Record(uint64_t ns, uint64_t commands) {
  (last_serial_ ? serial_ns_ : pool_ns_) += ns;
  (last_serial_ ? serial_commands_ : pool_commands_) += commands;
}

core::Status ParallelReplay::ApplySerially(const std::vector<TickCommand>& commands) {
  for (const TickCommand& c : commands) {
    const core::Status s = ApplyLoggedCommand(world_, c);
    if (!s.ok()) return s;
    NotePlayerLeaf(c.player);
  }
  return core::Status::OK();
}

void ParallelReplay::NotePlayerLeaf(game::EntityId player) {
  if (!world_->IsPlayerId(player)) return;
  int& noted = player_leaf_[static_cast<size_t>(player)];
  // Most players stay in the leaf they were in (one box test then, as sv::Locality's frames do).
  const int leaf = world_->tree().LeafAt(world_->Get(player).origin, noted);
  if (noted != leaf) noted = leaf;  // both threads note players whose entries share cache lines
}

// The owner posts the cut for helper 1 (waking it if it sleeps) before it runs the world part.
uint64_t ParallelReplay::PostStreamsCut(const TickRecord& record) {
  dispatch_.Lock();
  BeginTick(record.commands);
  dispatch_.Unlock();
  posted_ = &record;
  const uint64_t job = ++posted_job_;
  prepare_claimed_.store(false, std::memory_order_release);
  generation_.fetch_add(1);  // seq_cst, as in RunPreparedTick
  if (parked_helpers_.load() > 0) generation_.notify_all();
  return job;
}

// After the world part: the owner makes the cut itself if the helper has not claimed it, else
// waits for the helper to finish it.
uint64_t ParallelReplay::FinishStreamsCut(const TickRecord& record, uint64_t job) {
  if (!prepare_claimed_.exchange(true, std::memory_order_acq_rel)) {
    dispatch_.Lock();
    const uint64_t cross = PrepareStreams(record);
    dispatch_.Unlock();
    return cross;
  }
  for (uint32_t i = 0; prepare_done_.load(std::memory_order_acquire) != job; ++i) {
    if ((i & 63) == 63) std::this_thread::yield();
    else core::CpuRelax();
  }
  dispatch_.Lock();
  const uint64_t cross = prepare_cross_;
  dispatch_.Unlock();
  return cross;
}

void ParallelReplay::PrepareStreamsIfPosted() {
  if (prepare_claimed_.load(std::memory_order_relaxed) ||
      prepare_claimed_.exchange(true, std::memory_order_acq_rel)) {
    return;
  }
  // The claim read the owner's release of the flag: posted_ and posted_job_ are this job's.
  const uint64_t job = posted_job_;
  dispatch_.Lock();
  prepare_cross_ = PrepareStreams(*posted_);
  dispatch_.Unlock();
  prepare_done_.store(job, std::memory_order_release);
}

core::Status ParallelReplay::ApplyOnPool(const std::vector<TickCommand>& commands) {
  dispatch_.Lock();
  BeginTick(commands);
  PrepareTick(commands);
  dispatch_.Unlock();
  return RunPreparedTick(nullptr, 0);
}

core::Status ParallelReplay::RunPreparedTick(const TickRecord* lock_order, uint64_t cross) {
  // No helper touches the World between ticks, so the owner may switch the tree's mode here.
  areanode::AreanodeTree& tree = world_->tree();
  const bool parent_locking = tree.parent_locking();
  tree.set_parent_locking(true);
  lock_order_ = lock_order;
  dispatch_.Lock();
  const uint64_t stalls_before = dispatch_stalls_;
  dispatch_.Unlock();
  {
    core::MutexLock lock(&mu_);
    failure_ = core::Status::OK();
  }
  // Open the tick (a helper that joins from now on sees the state above), then wake the helpers.
  members_.fetch_and(~kClosedTick, std::memory_order_acq_rel);
  generation_.fetch_add(1);  // seq_cst, as every step of the parking protocols (Idle)
  if (parked_helpers_.load() > 0) generation_.notify_all();

  const uint64_t owner_ran = RunTick();

  // Close the tick and wait for the helpers still inside it: they only have to notice its end.
  members_.fetch_or(kClosedTick, std::memory_order_acq_rel);
  while (members_.load(std::memory_order_acquire) != kClosedTick) std::this_thread::yield();
  const uint64_t ran = owner_ran + helper_ran_.exchange(0, std::memory_order_relaxed);

  dispatch_.Lock();
  const int tick_chain = tick_chain_;
  const uint64_t stalls = dispatch_stalls_ - stalls_before;
  dispatch_.Unlock();
  core::Status result;
  {
    core::MutexLock lock(&mu_);
    result = failure_;
    ++stats_.parallel_ticks;
    stats_.commands += ran;
    stats_.pool_commands += ran;
    stats_.critical_path += static_cast<uint64_t>(tick_chain);
    stats_.dispatch_stalls += stalls;
    if (lock_order != nullptr) {
      ++stats_.lock_order_ticks;
      stats_.cross_waits += cross;
      stats_.unmet_waits += unmet_waits_.exchange(0, std::memory_order_relaxed);
      stats_.blocker_runs += blocker_runs_.exchange(0, std::memory_order_relaxed);
    }
  }
  lock_order_ = nullptr;
  commands_ = nullptr;
  tree.set_parent_locking(parent_locking);
  return result;
}

void ParallelReplay::PrepareTick(const std::vector<TickCommand>& commands) {
  const int n = static_cast<int>(commands.size());
  const size_t un = static_cast<size_t>(n);
  if (capacity_ < un) {
    capacity_ = std::max(un, 2 * capacity_);
    state_ = std::make_unique<CommandState[]>(capacity_);
    ready_slots_ = std::make_unique<std::atomic<int>[]>(capacity_);
  }
  for (size_t j = 0; j < un; ++j) {
    state_[j].waiting.store(0, std::memory_order_relaxed);
    state_[j].dependents.store(nullptr, std::memory_order_relaxed);
    ready_slots_[j].store(-1, std::memory_order_relaxed);
  }
  ready_head_.store(0, std::memory_order_relaxed);
  ready_tail_.store(0, std::memory_order_relaxed);
  done_count_.store(0, std::memory_order_relaxed);
  dispatch_left_.store(n > 0, std::memory_order_relaxed);
  dispatch_blocker_.store(-1, std::memory_order_relaxed);
  if (options_.shuffle_seed != 0) {
    core::MutexLock lock(&shuffle_mu_);
    shuffled_.clear();
  }

  next_dispatch_ = 0;
  blocker_ = -1;
  stalled_at_ = -1;
  edges_used_ = 0;
  std::fill(leaf_holder_.begin(), leaf_holder_.end(), -1);
  previous_of_player_.resize(un);
  for (int j = 0; j < n; ++j) {
    const game::EntityId p = commands[j].player;
    int* last = world_->IsPlayerId(p) ? &last_of_player_[static_cast<size_t>(p)] : nullptr;
    previous_of_player_[j] = last != nullptr ? *last : -1;
    if (last != nullptr) *last = j;
  }
  for (const TickCommand& c : commands) {
    if (world_->IsPlayerId(c.player)) last_of_player_[static_cast<size_t>(c.player)] = -1;
  }
  linked_by_.assign(un, -1);
  if (declared_.size() < un) declared_.resize(un);
  for (std::vector<int>& list : in_flight_) list.clear();
}

void ParallelReplay::BeginTick(const std::vector<TickCommand>& commands) {
  commands_ = &commands;
  count_ = static_cast<int>(commands.size());
  failed_.store(false, std::memory_order_relaxed);
  chain_.assign(commands.size(), 1);
  tick_chain_ = 0;
}

// Waits for a tick (spinning a little first: the owner's world part between two ticks is short),
// runs it, and leaves it; a helper that arrives after the owner closed the tick backs out. Helper
// 1, each time it wakes, first makes the streams' cut if one is posted and unclaimed.
void ParallelReplay::HelperMain(int index) {
  uint32_t seen = 0;
  for (;;) {
    const uint64_t spin_until = core::SteadyNs() + kTickSpinNs;
    for (int i = 0; generation_.load(std::memory_order_acquire) == seen; ++i) {
      if (stop_.load(std::memory_order_acquire)) return;
      if ((i & 63) != 0 || core::SteadyNs() < spin_until) {
        core::CpuRelax();
        continue;
      }
      parked_helpers_.fetch_add(1);
      generation_.wait(seen);
      parked_helpers_.fetch_sub(1, std::memory_order_relaxed);
    }
    if (stop_.load(std::memory_order_acquire)) return;
    seen = generation_.load(std::memory_order_acquire);
    if (index == 1) PrepareStreamsIfPosted();
    if ((members_.fetch_add(1, std::memory_order_acq_rel) & kClosedTick) == 0) {
      helper_ran_.fetch_add(RunTick(), std::memory_order_relaxed);
    }
    members_.fetch_sub(1, std::memory_order_release);
  }
}

// Each thread extends the dispatch when it can (so that ready work appears early), runs a ready
// command, and idles only when neither is possible.
uint64_t ParallelReplay::RunTick() {
  if (lock_order_ != nullptr) return RunStreams();
  uint64_t ran = 0;
  int next = -1;  // a command the last completion made ready for this thread
  while (done_count_.load(std::memory_order_acquire) != count_) {
    const bool dispatched = dispatch_left_.load(std::memory_order_relaxed) && TryDispatch();
    const int j = next >= 0 ? next : TakeReady();
    if (j >= 0) {
      next = RunOne(j, &ran);
    } else if (!dispatched) {
      Idle();
    }
  }
  AS_CHECK(next < 0, "ParallelReplay: a command was made ready after the tick's last one");
  return ran;
}

// Streams: leaves in index order (a subtree's leaves are consecutive, so each run is a region),
// cut where the commands counted so far reach the next share. A command goes to the stream of
// the leaf its player stood in after its last replayed command (player_leaf_); a player with none
// yet, and an id that is not a player, to stream 0 (ApplyLoggedCommand refuses the latter). The
// critical path is the walk's statistic, from the record.
uint64_t ParallelReplay::PrepareStreams(const TickRecord& record) {
  const areanode::AreanodeTree& tree = world_->tree();
  const int n = count_;
  const int threads = options_.threads;
  if (streams_ == nullptr) streams_ = std::make_unique<Stream[]>(static_cast<size_t>(threads));
  leaf_of_.resize(static_cast<size_t>(n));
  slot_.resize(static_cast<size_t>(n));
  leaf_stream_.assign(static_cast<size_t>(tree.leaf_count()), 0);
  for (int j = 0; j < n; ++j) {
    // Where the player stood after its last command (leaf 0 if none yet, or not a player): it
    // reads no World state, so that it may run beside the world part. A player the world part
    // moved (a respawn) counts where it was: the cut only places work, any cut is exact.
    const game::EntityId p = record.commands[static_cast<size_t>(j)].player;
    const int leaf = world_->IsPlayerId(p) ? std::max(player_leaf_[static_cast<size_t>(p)], 0) : 0;
    leaf_of_[j] = leaf;
    ++leaf_stream_[static_cast<size_t>(leaf)];  // its commands, until the loop below
  }
  uint64_t before = 0;
  for (int& stream : leaf_stream_) {  // a leaf's command count becomes the stream its middle falls in
    const uint64_t middle = before + static_cast<uint64_t>(stream) / 2;
    before += static_cast<uint64_t>(stream);
    stream = static_cast<int>(std::min<uint64_t>(threads - 1, middle * threads / std::max(n, 1)));
  }
  for (int s = 0; s < threads; ++s) {
    streams_[s].entries.clear();
    streams_[s].next = 0;
    streams_[s].done.store(0, std::memory_order_relaxed);
    streams_[s].busy.store(false, std::memory_order_relaxed);
  }
  auto stream_of = [&](int j) { return leaf_stream_[static_cast<size_t>(leaf_of_[j])]; };
  uint64_t cross = 0;
  for (int j = 0; j < n; ++j) {
    const int s = stream_of(j);
    const TickCommand& c = record.commands[static_cast<size_t>(j)];
    streams_[s].entries.push_back({j, 0, c.first_after, c.after_count, 0});
    bool crosses = false;
    for (uint32_t k = 0; k < c.after_count; ++k) {
      const int holder = static_cast<int>(record.after[c.first_after + k]);
      chain_[j] = std::max(chain_[j], chain_[holder] + 1);
      crosses |= stream_of(holder) != s;
    }
    if (crosses) ++cross;
    tick_chain_ = std::max(tick_chain_, chain_[j]);
  }
  // Each stream's flags on cache lines of their own, in its order: a thread marks its commands
  // run without taking the line from the thread that is scanning the other stream.
  size_t slots = 0;
  for (int st = 0; st < threads; ++st) {
    std::vector<Stream::Entry>& list = streams_[st].entries;
    for (size_t i = 0; i < list.size(); ++i) {
      list[i].slot = static_cast<uint32_t>(slots + i);
      slot_[static_cast<size_t>(list[i].command)] = list[i].slot;
    }
    slots += (list.size() + 63) / 64 * 64;
  }
  dep_slots_.resize(record.after.size());
  for (size_t e = 0; e < record.after.size(); ++e) dep_slots_[e] = slot_[record.after[e]];
  if (ran_capacity_ < slots) {
    ran_capacity_ = std::max(slots, 2 * ran_capacity_);
    ran_ = std::make_unique<std::atomic<uint8_t>[]>(ran_capacity_);
  }
  for (size_t i = 0; i < slots; ++i) ran_[i].store(kNotRun, std::memory_order_relaxed);
  return cross;
}

// Each pass offers every unfinished stream that nobody holds, and the thread keeps one while it
// finds commands to run there (so threads do not swap regions); a thread that found nothing to
// run tries the command its stream waits on (RunBlocker), then spins a little, then yields (a
// dependency is usually met within a command's time).
uint64_t ParallelReplay::RunStreams() {
  uint64_t ran = 0, unmet = 0, blocker_runs = 0;
  const int n = options_.threads;
  // Thread k of the tick starts at stream k; it stays on a stream while it runs something there.
  const int first = static_cast<int>(stream_ticket_.fetch_add(1, std::memory_order_relaxed) %
                                     static_cast<uint32_t>(n));
  uint64_t spin_until = 0;
  int wait_for = kNone;  // after a pass that ran nothing: a command the thread waits for
  for (uint32_t idle = 0;; ) {
    // Idle: watch the one flag it waits for (a load of a line its writer keeps) rather than
    // scanning the windows again; a full pass every 64 turns sees streams let go meanwhile.
    if (idle != 0 && wait_for != kNone && (idle & 63) != 0 &&
        ran_[slot_[static_cast<size_t>(wait_for)]].load(std::memory_order_acquire) != kRun) {
      ++idle;
      core::CpuRelax();
      continue;
    }
    wait_for = kNone;
    bool all_done = true, progressed = false;
    for (int k = 0; k < n; ++k) {
      Stream& st = streams_[(first + k) % n];
      if (st.done.load(std::memory_order_acquire) == st.entries.size()) continue;
      all_done = false;
      if (st.busy.load(std::memory_order_relaxed) || st.busy.exchange(true, std::memory_order_acquire)) continue;
      int blocked = kNone;
      while (RunStream(&st, &ran, &unmet, &blocked) && !failed_.load(std::memory_order_relaxed)) {
        progressed = true;  // stay while it runs
      }
      if (wait_for == kNone) wait_for = blocked;
      st.busy.store(false, std::memory_order_release);
    }
    // Its stream waits: rather than spin, run what the wait is for, if that can run now. Tests
    // (shuffle_seed) also try it at random after passes that ran something, so that it runs often.
    if (!all_done && wait_for != kNone && (!progressed || ShuffleCoin())) {
      progressed |= RunBlocker(wait_for, &ran, &blocker_runs);
    }
    if (all_done || failed_.load(std::memory_order_acquire)) {
      unmet_waits_.fetch_add(unmet, std::memory_order_relaxed);
      blocker_runs_.fetch_add(blocker_runs, std::memory_order_relaxed);
      return ran;
    }
    if (progressed) {
      idle = 0;
    } else if (idle++ == 0) {
      spin_until = core::SteadyNs() + kWorkSpinNs;
    } else if (core::SteadyNs() < spin_until) {
      core::CpuRelax();
    } else {
      std::this_thread::yield();
    }
  }
}

// From the stream's first command not yet run, up to kStreamLookahead further: runs each whose
// dependencies are all done (the ones before it in the stream it does not depend on may wait),
// then moves the stream's head past the run ones. *blocked: the first dependency not yet run of
// the first command it had to pass over, or kNone.
bool ParallelReplay::RunStream(Stream* stream, uint64_t* ran, uint64_t* unmet, int* blocked) {
  bool any = false;
  *blocked = kNone;
  const uint32_t size = static_cast<uint32_t>(stream->entries.size());
  const uint32_t end = std::min(size, stream->next + kStreamLookahead);
  for (uint32_t i = stream->next; i < end; ++i) {
    Stream::Entry& entry = stream->entries[i];
    std::atomic<uint8_t>& flag = ran_[entry.slot];
    if (flag.load(std::memory_order_relaxed) != kNotRun) continue;  // run, or being run by a helper
    entry.met = FirstDependencyNotRunFrom(entry.first_dep, entry.dep_count, entry.met);
    if (entry.met < entry.dep_count) {
      ++*unmet;
      if (*blocked == kNone) *blocked = static_cast<int>(lock_order_->after[entry.first_dep + entry.met]);
      continue;
    }
    if (!Claim(&flag)) continue;  // a waiting thread took it (RunBlocker)
    if (!RunClaimed(entry.command, &flag, ran)) return true;
    any = true;
    // Tests: let the stream go at random, so another thread may take it and the commands run
    // in any order their dependencies allow.
    if (ShuffleCoin()) break;
  }
  const uint32_t before = stream->next;
  while (stream->next < size &&
         ran_[stream->entries[stream->next].slot].load(std::memory_order_acquire) == kRun) {
    ++stream->next;
  }
  // Stored only when it moved: the other threads read it on every pass.
  if (stream->next != before) stream->done.store(stream->next, std::memory_order_release);
  return any;
}

bool ParallelReplay::ShuffleCoin() {
  if (options_.shuffle_seed == 0) return false;
  core::MutexLock lock(&shuffle_mu_);
  return game::NextRandom(&shuffle_state_) % 2 == 0;
}

uint32_t ParallelReplay::FirstDependencyNotRunFrom(uint32_t first_dep, uint32_t count,
                                                   uint32_t from) const {
  uint32_t k = from;
  while (k < count && ran_[dep_slots_[first_dep + k]].load(std::memory_order_acquire) == kRun) ++k;
  return k;
}

int ParallelReplay::FirstDependencyNotRun(int j) const {
  const TickCommand& c = (*commands_)[static_cast<size_t>(j)];
  const uint32_t k = FirstDependencyNotRunFrom(c.first_after, c.after_count, 0);
  return k < c.after_count ? static_cast<int>(lock_order_->after[c.first_after + k]) : kNone;
}

// Command j is what a stream waits for. Following first dependencies not yet run finds the
// command that holds the chain up: if it can run and nobody has claimed it, this thread runs it
// rather than wait for its stream's holder to reach it.
bool ParallelReplay::RunBlocker(int j, uint64_t* ran, uint64_t* blocker_runs) {
  for (int step = 0; step < kBlockerDepth; ++step) {
    std::atomic<uint8_t>& flag = ran_[slot_[static_cast<size_t>(j)]];
    if (flag.load(std::memory_order_relaxed) != kNotRun) return false;  // run, or running
    const int missing = FirstDependencyNotRun(j);
    if (missing != kNone) {
      j = missing;
      continue;
    }
    if (!Claim(&flag)) return false;
    RunClaimed(j, &flag, ran);
    ++*blocker_runs;
    return true;
  }
  return false;
}

bool ParallelReplay::RunClaimed(int j, std::atomic<uint8_t>* flag, uint64_t* ran) {
  if (!RunCommand(j, ran)) return false;
  flag->store(kRun, std::memory_order_release);
  return true;
}

bool ParallelReplay::RunCommand(int j, uint64_t* ran) {
  const TickCommand& c = (*commands_)[static_cast<size_t>(j)];
  const core::Status s = ApplyLoggedCommand(world_, c);
  ++*ran;
  if (s.ok()) {
    // Before the command is marked run: no later command that may move the player has started.
    NotePlayerLeaf(c.player);
    return true;
  }
  core::MutexLock lock(&mu_);
  if (failure_.ok()) failure_ = s;
  failed_.store(true, std::memory_order_release);
  return false;
}

// After a refusal no command starts: the rest of the tick is only marked done.
int ParallelReplay::RunOne(int j, uint64_t* ran) {
  if (!failed_.load(std::memory_order_acquire)) RunCommand(j, ran);
  return Complete(j);
}

// Closing the list (release) publishes the command's writes to every later reader of Done(j)
// and to the dependents it makes ready.
int ParallelReplay::Complete(int j) {
  int keep = -1;
  Edge* e = state_[static_cast<size_t>(j)].dependents.exchange(&closed_);  // seq_cst: Idle
  for (; e != nullptr; e = e->next) {
    if (state_[static_cast<size_t>(e->target)].waiting.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      if (keep < 0 && options_.shuffle_seed == 0) keep = e->target;
      else PushReady(e->target);
    }
  }
  done_count_.fetch_add(1);
  Wake();
  return keep;
}

void ParallelReplay::PushReady(int j) {
  if (options_.shuffle_seed != 0) {
    core::MutexLock lock(&shuffle_mu_);
    shuffled_.push_back(j);
    ready_tail_.fetch_add(1);
  } else {
    // Each command is pushed once per tick, so the tick's slots never wrap.
    const int slot = ready_tail_.fetch_add(1);
    ready_slots_[static_cast<size_t>(slot)].store(j, std::memory_order_release);
  }
  Wake();
}

int ParallelReplay::TakeReady() {
  if (options_.shuffle_seed != 0) {
    core::MutexLock lock(&shuffle_mu_);
    if (shuffled_.empty()) return -1;
    const size_t k = static_cast<size_t>(game::NextRandom(&shuffle_state_) % shuffled_.size());
    std::swap(shuffled_[k], shuffled_.back());
    const int j = shuffled_.back();
    shuffled_.pop_back();
    ready_head_.fetch_add(1, std::memory_order_relaxed);
    return j;
  }
  int head = ready_head_.load(std::memory_order_acquire);
  for (;;) {
    if (head >= ready_tail_.load(std::memory_order_acquire)) return -1;
    // A slot is written once per tick; -1: its push is under way (the pusher wakes us after).
    const int j = ready_slots_[static_cast<size_t>(head)].load(std::memory_order_acquire);
    if (j < 0) return -1;
    if (ready_head_.compare_exchange_weak(head, head + 1, std::memory_order_acq_rel,
                                          std::memory_order_acquire)) {
      return j;
    }
  }
}

bool ParallelReplay::WorkVisible() const {
  if (done_count_.load() == count_) return true;
  if (ready_head_.load() < ready_tail_.load()) return true;
  if (!dispatch_left_.load() || dispatch_.held()) return false;
  const int blocker = dispatch_blocker_.load();
  return blocker < 0 || state_[static_cast<size_t>(blocker)].dependents.load() == &closed_;
}

// The parking protocol: a parker announces itself (sleepers_), then looks for work once more; a
// waker changes the state, then looks for parkers. All these steps are seq_cst (one total
// order), so either the parker sees the change or the waker sees the parker and bumps
// work_seq_, which the parker's wait compares against. (No fences: TSan does not model them.)
void ParallelReplay::Idle() {
  const uint64_t spin_until = core::SteadyNs() + kWorkSpinNs;
  for (int i = 1;; ++i) {
    if (WorkVisible()) return;
    if ((i & 63) != 0 || core::SteadyNs() < spin_until) {
      core::CpuRelax();
      continue;
    }
    break;
  }
  sleepers_.fetch_add(1);
  const uint32_t seq = work_seq_.load();
  if (!WorkVisible()) work_seq_.wait(seq);
  sleepers_.fetch_sub(1, std::memory_order_relaxed);
}

void ParallelReplay::Wake() {
  if (sleepers_.load() == 0) return;
  work_seq_.fetch_add(1);
  work_seq_.notify_all();
}

bool ParallelReplay::TryDispatch() {
  if (!dispatch_.TryLock()) return false;
  bool any = false;
  while (next_dispatch_ < count_) {
    if (failed_.load(std::memory_order_acquire)) {
      PushReady(next_dispatch_++);  // to be marked done, not run
    } else if (TryDispatchOne(next_dispatch_)) {
      ++next_dispatch_;
    } else {
      break;
    }
    any = true;
  }
  const bool left = next_dispatch_ < count_;
  dispatch_blocker_.store(left ? blocker_ : -1);
  if (!left) dispatch_left_.store(false);
  dispatch_.Unlock();
  // A thread that found the flag held may have parked meanwhile, and the dispatch may be able to
  // move on now (its blocker may have finished before the flag was free).
  if (left) Wake();
  return any;
}

// Dispatches command j (the next in log order) if its leaf set can be computed now: see the
// header for conditions (a) and (b). (b) used to wait for every holder of a leaf under the box;
// a leaf is 1/16 of the map, so that stalled the dispatch at 40% of the commands on dm_arena, and
// checking the declared boxes of the commands in flight there stalls it at 16%. A command of an id that is not a player slot claims every
// leaf; ApplyLoggedCommand then reports it. A stall remembers the command it waits for, so that
// retries cost one load until that one is done.
bool ParallelReplay::TryDispatchOne(int j) {
  if (blocker_ >= 0 && !Done(blocker_)) return false;
  blocker_ = -1;
  const TickCommand& c = (*commands_)[static_cast<size_t>(j)];
  const areanode::AreanodeTree& tree = world_->tree();
  const int prev = previous_of_player_[j];
  if (prev >= 0 && !Done(prev)) blocker_ = prev;
  const bool player = world_->IsPlayerId(c.player);
  if (blocker_ < 0 && player) {
    const core::Bounds box = world_->BoxOf(c.player);
    tree.LeavesTouching(box, &box_leaves_);
    for (size_t i = 0; i < box_leaves_.size() && blocker_ < 0; ++i) blocker_ = InFlightMeeting(box_leaves_[i], box);
  }
  if (blocker_ >= 0) {
    if (stalled_at_ != j) ++dispatch_stalls_;
    stalled_at_ = j;
    return false;
  }
  game::Region& declared = declared_[static_cast<size_t>(j)];
  if (player) {
    declared = world_->RegionOf(c.player, c.cmd);
    game::RegionLeaves(declared, tree, /*optimized=*/true, &leaves_, &scratch_a_, &scratch_b_);
    merged_.clear();
    std::set_union(leaves_.begin(), leaves_.end(), box_leaves_.begin(), box_leaves_.end(),
                   std::back_inserter(merged_));
  } else {
    merged_.resize(static_cast<size_t>(tree.leaf_count()));
    for (int leaf = 0; leaf < tree.leaf_count(); ++leaf) merged_[leaf] = leaf;
    declared = game::Region{};
    declared.whole_map = true;
  }
  for (int leaf : merged_) in_flight_[static_cast<size_t>(leaf)].push_back(j);
  // While linking, kLinking keeps j from becoming ready through a dependency that finishes
  // meanwhile; it is taken off once every edge is in place.
  CommandState& state = state_[static_cast<size_t>(j)];
  state.waiting.store(kLinking, std::memory_order_relaxed);
  int linked = 0;
  for (int leaf : merged_) {
    const int holder = leaf_holder_[leaf];
    leaf_holder_[leaf] = j;
    if (holder < 0) continue;
    chain_[j] = std::max(chain_[j], chain_[holder] + 1);
    if (linked_by_[holder] == j) continue;  // already waits for this holder
    linked_by_[holder] = j;
    if (Link(holder, j)) ++linked;
  }
  tick_chain_ = std::max(tick_chain_, chain_[j]);
  const int take = kLinking - linked;
  if (state.waiting.fetch_sub(take, std::memory_order_acq_rel) == take) PushReady(j);
  return true;
}

// The first command on `leaf` still in flight whose declared region meets `box`, or -1; drops the
// done ones from the leaf's list on the way.
int ParallelReplay::InFlightMeeting(int leaf, const core::Bounds& box) {
  std::vector<int>& list = in_flight_[static_cast<size_t>(leaf)];
  for (size_t i = 0; i < list.size();) {
    const int k = list[i];
    if (Done(k)) {
      list[i] = list.back();
      list.pop_back();
      continue;
    }
    if (declared_[static_cast<size_t>(k)].Meets(box)) return k;
    ++i;
  }
  return -1;
}

bool ParallelReplay::Link(int holder, int j) {
  constexpr size_t kBlock = 1024;
  if (edges_used_ == edge_blocks_.size() * kBlock) edge_blocks_.push_back(std::make_unique<Edge[]>(kBlock));
  Edge* e = &edge_blocks_[edges_used_ / kBlock][edges_used_ % kBlock];
  e->target = j;
  std::atomic<Edge*>& head = state_[static_cast<size_t>(holder)].dependents;
  Edge* next = head.load(std::memory_order_acquire);
  do {
    if (next == &closed_) return false;  // done already
    e->next = next;
  } while (!head.compare_exchange_weak(next, e, std::memory_order_release, std::memory_order_acquire));
  ++edges_used_;
  return true;
}

}  // namespace durability
