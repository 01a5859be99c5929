// ParallelReplay: re-executes the commands of one logged tick on a pool of threads, commands of
// disjoint regions at once and conflicting ones in log (exec_seq) order, with a result
// bit-identical to ApplyLoggedCommand called on each command in log order (recovery's serial
// replay). Every command still runs through ApplyLoggedCommand (World::ExecuteCommand).
//
// Why it is exact. A command reads and writes only its player, its rocket slots (no other command
// touches those) and entities whose box lies inside World::RegionOf(player, cmd)'s declared boxes
// (Region::Covers), which the areanode leaves of RegionLeaves(region, optimized) cover (the game's
// region check enforces it). RegionOf reads only the player's edict and the map. So, walking the
// commands in log order (the dispatch), command j gets its leaf set once (a) its player's previous
// command is done and (b) every command already dispatched, not done, and holding a leaf under
// the player's box has a declared region that misses the box (Region::Meets false: only a command
// whose region meets the box may write the player's edict, and so move it; LeavesTouching is
// inclusive, so such a command holds a leaf under the box); the region is then the one serial
// replay computes.
// Command j waits for the latest earlier command holding each of its leaves (and so, transitively,
// for every earlier one). Two commands that run at once therefore share no leaf: they commute, as
// they did live under the region locks. The world's globals are not written by commands
// (World's contract), each player draws from its own generator in its edict, and tree queries are
// sorted by id, so neither the order nor the thread changes a single byte.
//
// Following the live lock order. A record written by a server with several workers carries, for
// each command, the commands of the tick that held one of its locks last before it
// (TickRecord::lock_order, tick_recorder.h): the dependencies the walk would find, known before the
// tick starts; they hold on a tree whose leaves each lie inside one of the live tree's leaves, so
// only on a tree at least as deep as the live one (TickRecord::lock_depth; on a coarser tree two
// commands that shared no live lock may still link and unlink in one leaf's entity list, and such
// ticks go to the walk). Where it is followed, no walk runs and no command goes through the ready
// queue. The map is cut into one stream per thread (runs of areanode leaves, by where each
// command's player stood after its last replayed command, with about as many commands each) and
// each command goes to its stream; helper 1 makes the cut while the owner runs the tick's world
// part. A stream is run by one thread at a time: from its first command not yet run it looks a few
// commands ahead for one whose dependencies have all run (an acquire load of each one's flag),
// claims it (a compare-and-swap on its flag), runs it and marks it run. A thread that finds nothing
// to run in its stream follows the command it waits for down to the one holding the chain up and,
// if that can run and nobody has claimed it, runs it itself (RunBlocker), whichever stream it is
// in. Neighbours in space mostly depend on each other, so most dependencies stay inside a stream.
// Exact for the walk's reason: two commands that shared a lock live run in their live order, which
// is their log order, and two that did not commute. Every dependency points to an earlier command
// (the decoder checks it), so the earliest command not yet run can always start: a thread that
// finds nothing to run in its stream takes another that nobody holds, and a lone thread runs them
// all.
//
// Scheduling (parallel_replay.cc): no lock per hand-off. Each command has an atomic count of the
// dependencies it still waits for and a lock-free list of the commands waiting for it; a command
// that becomes ready goes into a bounded array queue of the tick's command indices (each is pushed
// once per tick); the log-order dispatch is claimed by whichever thread is free, through a
// try-lock flag (DispatchFlag) that guards the dispatch's own state. Idle threads spin briefly,
// then park on an atomic wait; only parking and waking a parked thread make a system call.
//
// Threading: one owner thread constructs it, calls ApplyTick or ApplyCommands and destroys it; the
// pool's threads()-1 helper threads live from construction to destruction and idle between
// ticks (no thread is started per tick). ApplyTick and ApplyCommands need what the World's serial
// phases need (nothing else uses the World meanwhile); they turn the tree's parent locking on
// while commands run on the pool.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "server/core/mutex.h"
#include "server/core/status.h"
#include "server/core/thread_annotations.h"
#include "server/durability/tick_record.h"
#include "server/game/region.h"
#include "server/game/world.h"

namespace durability {

inline constexpr int kMaxReplayThreads = 64;
// Ticks with fewer commands replay serially on the owner thread: a hand-off costs more than such a
// tick's work. Not tuned: on a server busy enough for replay time to matter nearly every tick has
// more, and the adaptive choice (Options) decides for those.
inline constexpr int kMinParallelCommands = 8;

// The adaptive choice (ParallelReplay::Options::adaptive): which way to replay each tick, from
// ticks timed as the replay goes. Every kProbeInterval ticks start with a probe: kProbeTicks
// serial ticks, one pool tick that is not timed, then kProbeTicks - 1 timed pool ticks; the rest
// of the interval goes the way whose probe replayed a command faster (serial on a tie).
// - The probes are neighbours in the log, so both time the same kind of play. (Estimates kept
//   per mode over all its ticks compared different play: a tick full of shooting costs more per
//   command than a quiet one.)
// - The untimed tick: a serial tick keeps the helpers waiting long enough to park, so the first
//   pool tick after serial ones pays their wake-up and cold caches, which a run of pool ticks
//   pays once.
// Timing every tick and comparing per-mode averages, the replay picked the pool on 33 of 2,221
// ticks on two idle cores where the pool alone is 1.2x faster (docs/recovery-measurements.md,
// "The adaptive choice, measured 2026-11-28").
// Single-threaded (the pool's owner).
class AdaptiveChoice {
 public:
  static constexpr uint64_t kProbeInterval = 256;
  static constexpr uint64_t kProbeTicks = 8;
  struct Tick {
    bool serial;
    bool timed;  // pass its time to Record
  };
  // The way to replay the next tick.
  Tick Next();
  // The time of the tick Next() just chose, if it said `timed`.
  void Record(uint64_t ns, uint64_t commands);

 private:
  uint64_t tick_ = 0;
  bool last_serial_ = true;
  uint64_t serial_ns_ = 0, serial_commands_ = 0, pool_ns_ = 0, pool_commands_ = 0;
  bool serial_wins_ = true;
};

class ParallelReplay {
 public:
  struct Stats {
    uint64_t parallel_ticks = 0;   // ticks replayed by the pool
    uint64_t serial_ticks = 0;     // ticks replayed by the owner alone (small, or adaptive choice)
    uint64_t adaptive_serial_ticks = 0;  // of those, the ones the adaptive choice sent there
    uint64_t commands = 0;         // commands replayed, both ways
    uint64_t pool_commands = 0;    // of those, on the pool
    // Commands that the log-order dispatch reached before their inputs were settled (each counted
    // once, however long it waited).
    uint64_t dispatch_stalls = 0;
    // Sum over the pool's ticks of the longest chain of commands each waiting for the one before
    // (through shared leaves): pool_commands / critical_path bounds what any number of threads
    // gains on those ticks.
    uint64_t critical_path = 0;
    uint64_t lock_order_ticks = 0;  // of the pool's ticks, those run as streams by the live lock order
    // Of the pool's ticks, those whose record carried a lock order over leaves finer than this
    // replay's tree (TickRecord::lock_depth), which the walk replayed instead.
    uint64_t coarse_tree_ticks = 0;
    uint64_t cross_waits = 0;       // there: commands that depend on another stream's
    uint64_t unmet_waits = 0;       // there: times a thread found a command's dependencies not done
    // there: commands a thread whose stream waited ran for the stream holding them (RunBlocker)
    uint64_t blocker_runs = 0;
  };

  struct Options {
    int threads = 2;  // 2..kMaxReplayThreads, the owner thread included
    int min_parallel_commands = kMinParallelCommands;  // >= 1
    // 0: threads take ready commands in the order they became ready. Otherwise they take a random one (seeded):
    // for tests, which must get the serial state from any order the dependencies allow.
    uint64_t shuffle_seed = 0;
    // Replay each tick the faster way, measured as it goes: the owner times both modes per
    // command (AdaptiveChoice) and takes the cheaper. On a machine whose cores are busy
    // elsewhere, handing fine-grained work to threads that are not running costs more than it
    // saves; the state is the same either way. false: the pool always.
    bool adaptive = true;
  };

  // `world` must outlive the pool. Aborts on options out of range (Durability::Open validates
  // its replay_threads first).
  ParallelReplay(game::World* world, const Options& options);
  ~ParallelReplay();  // stops and joins the helpers
  ParallelReplay(const ParallelReplay&) = delete;
  ParallelReplay& operator=(const ParallelReplay&) = delete;

  // Replays `commands` (one tick's, in log order; the tick's world part already applied) and
  // returns when all have run: on the owner thread alone if they are fewer than
  // min_parallel_commands or the adaptive choice says so, else on the pool. A refused command is Corruption (ApplyLoggedCommand's message);
  // then no further command is started and the World's state is unspecified.
  core::Status ApplyCommands(const std::vector<TickCommand>& commands);
  // Replays a whole logged tick, as ApplyTick (tick_apply.h) does serially: its world part
  // (ApplyLoggedWorldPart, on the owner; its error is returned before any command runs), then its
  // commands as above: on the pool as streams by the live lock order if the record has one
  // (record.lock_order), else by the walk. With the lock order, helper 1 cuts the streams while
  // the owner runs the world part (or the owner does, after it, if the helper has not started):
  // the cut reads only the record and where each player stood after its last replayed command
  // (kept by the threads that ran it, never the World), so it may run beside the world part.
  core::Status ApplyTick(const TickRecord& record);

  int threads() const { return options_.threads; }
  Stats stats() const;

 private:
  // A try-lock over one atomic flag, declared a capability so that clang checks what it guards:
  // whoever holds it runs the log-order dispatch or prepares a tick. Never blocks in TryLock;
  // Lock (between ticks: the owner, or helper 1 cutting the streams, each when the other cannot
  // hold it) spins.
  class CAPABILITY("dispatch flag") DispatchFlag {
   public:
    bool TryLock() TRY_ACQUIRE(true) {
      return !held_.load(std::memory_order_relaxed) && !held_.exchange(true, std::memory_order_acquire);
    }
    void Lock() ACQUIRE() {
      while (!TryLock()) std::this_thread::yield();
    }
    void Unlock() RELEASE() { held_.store(false); }  // seq_cst: a parker may be looking
    bool held() const { return held_.load(); }

   private:
    std::atomic<bool> held_{false};
  };

  // "Command `target` waits for the command whose list this is in." Written by the dispatcher
  // before it publishes the edge, read by the completer after it closes the list.
  struct Edge {
    int target = -1;
    Edge* next = nullptr;
  };
  // One per command of the tick, on its own cache line (threads finish neighbours at once).
  struct alignas(64) CommandState {
    std::atomic<int> waiting{0};  // dependencies not done (+ kLinking while being dispatched)
    // The commands waiting for this one, newest first; &closed_ once it is done.
    std::atomic<Edge*> dependents{nullptr};
  };
  static constexpr int kLinking = 1 << 30;
  static constexpr int kClosedTick = 1 << 30;  // members_: the owner has closed the tick

  // A stream: the commands of one run of leaves, in log order (a record with the lock order).
  // Run by one thread at a time (busy).
  struct alignas(64) Stream {
    // One command of the stream, laid out for the holder's scan: its flag's slot in ran_, its
    // dependencies' slots (dep_slots_[first_dep, first_dep + dep_count): the record's
    // first_after/after_count, copied so that the scan does not read the record's command) and
    // how many of the first ones were seen run (`met`: a dependency once run stays run, so a command that waits is
    // looked at again for one flag, not all of them). Written by the cut between ticks; `met`
    // then only by the thread holding the stream.
    struct Entry {
      int command;
      uint32_t slot;
      uint32_t first_dep;
      uint32_t dep_count;
      uint32_t met;
    };
    std::atomic<bool> busy{false};
    std::atomic<uint32_t> done{0};  // its first `done` commands have all run (release)
    uint32_t next = 0;  // its first command not run; read and written only by the thread holding busy
    std::vector<Entry> entries;  // in log order; written by the cut between ticks
  };
  // record: the tick whose world part runs first and whose lock order (if any) orders the
  // commands (ApplyTick), or null (ApplyCommands: the walk, no world part).
  core::Status Apply(const std::vector<TickCommand>& commands, const TickRecord* record);
  core::Status ApplySerially(const std::vector<TickCommand>& commands);
  // A tick on the pool by the walk (no lock order).
  core::Status ApplyOnPool(const std::vector<TickCommand>& commands);
  // A prepared tick (BeginTick and PrepareStreams or PrepareTick done, dispatch_ free): opens the
  // tick, runs it, closes it and counts it. lock_order: the record it was cut from, or null (the
  // walk); cross: PrepareStreams' result.
  core::Status RunPreparedTick(const TickRecord* lock_order, uint64_t cross);
  // The streams' cut of a record with the lock order, beside the world part (ApplyTick): the owner
  // posts it for helper 1 before the world part (returns the job's number) and, after the world
  // part, makes it itself unless the helper claimed it, or waits for the helper's. Finish returns
  // PrepareStreams' result; it must follow every Post, also when the world part failed.
  uint64_t PostStreamsCut(const TickRecord& record);
  uint64_t FinishStreamsCut(const TickRecord& record, uint64_t job);
  // Helper 1, when it wakes: cuts the streams of the posted record unless someone claimed it.
  void PrepareStreamsIfPosted();
  // Records where player `player` stands (its leaf) for the next tick's cut (player_leaf_); called
  // by the thread that just ran one of its commands.
  void NotePlayerLeaf(game::EntityId player);
  // The owner, before a pool tick, either way: the tick's commands, failure flag and chains.
  void BeginTick(const std::vector<TickCommand>& commands) REQUIRES(dispatch_);
  // The owner, after BeginTick, before a tick the walk runs: sizes and resets its state.
  void PrepareTick(const std::vector<TickCommand>& commands) REQUIRES(dispatch_);
  // After BeginTick, before a tick with the live lock order (the owner, or helper 1 while the
  // owner runs the world part: it reads the record, player_leaf_, the pool's own state and of
  // the World only its fixed shape, the leaf count and the player id range): cuts the leaves into
  // streams, fills them, clears the run flags and counts the critical path. Returns how many
  // commands depend on another stream's.
  uint64_t PrepareStreams(const TickRecord& record) REQUIRES(dispatch_);
  // Runs streams until every one is done (or a command failed); returns how many this thread ran.
  uint64_t RunStreams();
  // Runs the stream's next commands whose dependencies are done (the caller holds it); true if it
  // ran any. Adds to *ran the commands run, to *unmet those it found not ready; *blocked: a
  // dependency one of those waits for, or kNone.
  bool RunStream(Stream* stream, uint64_t* ran, uint64_t* unmet, int* blocked);
  // Runs command j and counts it; on a refusal records the failure (first one wins), sets
  // failed_ and returns false.
  bool RunCommand(int j, uint64_t* ran);
  // j's first dependency (a command of the tick) not yet run, or kNone.
  int FirstDependencyNotRun(int j) const;
  // Of the dependencies dep_slots_[first_dep, first_dep + count), the index of the first one
  // from `from` on not yet run (an acquire load of each flag read), or count. The one way
  // either reads a command's dependencies: RunStream starts past the ones it saw run before.
  uint32_t FirstDependencyNotRunFrom(uint32_t first_dep, uint32_t count, uint32_t from) const;
  static constexpr int kNone = -1;
  // A command's flag in ran_: not run; claimed by the thread that runs it; run (release: its
  // writes are visible to whoever acquires kRun).
  static constexpr uint8_t kNotRun = 0, kClaimed = 1, kRun = 2;
  // Takes a command not yet run for the calling thread; false if another thread took it first.
  static bool Claim(std::atomic<uint8_t>* flag) {
    uint8_t expected = kNotRun;
    return flag->compare_exchange_strong(expected, kClaimed, std::memory_order_acquire);
  }
  // Runs command j, whose `flag` this thread claimed, and marks it run (release): the one place
  // a stream's command is published, for RunStream and RunBlocker alike. On a refusal
  // (RunCommand sets failed_) the flag stays claimed and it returns false.
  bool RunClaimed(int j, std::atomic<uint8_t>* flag, uint64_t* ran);
  // For a thread whose stream waits on command j: from that command down its first
  // dependencies not yet run (at most kBlockerDepth steps), finds the one the chain waits on; if
  // it can run now and no thread has claimed it, claims it, runs it and returns true. Exact for
  // the streams' reason: a command whose dependencies have all run commutes with every command
  // running at the time, whichever thread runs it.
  bool RunBlocker(int j, uint64_t* ran, uint64_t* blocker_runs);
  static constexpr int kBlockerDepth = 16;
  // shuffle_seed != 0 (tests): a fair coin; else false.
  bool ShuffleCoin();
  // How far past its first command not run a stream looks for one it can run.
  static constexpr uint32_t kStreamLookahead = 16;
  void HelperMain(int index);  // helper `index` (1..threads-1)
  // Runs, and takes turns at dispatching, the current tick's commands until all are done;
  // returns how many this thread ran.
  uint64_t RunTick();
  // Runs j (unless the tick failed) and completes it; returns what Complete returns.
  int RunOne(int j, uint64_t* ran);
  // Marks j done and makes ready the commands that waited only for it. One of them (the first
  // found) is returned for the calling thread to run next, without the ready queue: its inputs
  // are in this thread's cache, and the queue's two shared counters are spared. The rest are
  // queued. -1: none (and always -1 with shuffle_seed, whose tests want every choice random).
  int Complete(int j);
  bool Done(int j) const {
    return state_[static_cast<size_t>(j)].dependents.load(std::memory_order_acquire) == &closed_;
  }
  // Claims the dispatch if it is free and extends it as far as the inputs are settled; true if
  // it dispatched any command.
  bool TryDispatch();
  bool TryDispatchOne(int j) REQUIRES(dispatch_);
  int InFlightMeeting(int leaf, const core::Bounds& box) REQUIRES(dispatch_);
  // Adds j to `holder`'s dependents unless holder is already done; true if it did.
  bool Link(int holder, int j) REQUIRES(dispatch_);
  void PushReady(int j);
  int TakeReady();  // -1: none now
  // Whether a thread looking for work would find some (a ready command, the end of the tick, or a
  // dispatch that may move on).
  bool WorkVisible() const;
  // Nothing to do: spins a little, then parks until Wake.
  void Idle();
  // Called after any change that can give an idle thread work; wakes the parked ones.
  void Wake();

  game::World* const world_;
  const Options options_;
  std::vector<std::thread> helpers_;
  AdaptiveChoice adaptive_;  // owner thread only

  // Written by the owner between ticks only (before it opens a tick: members_), read during it.
  const std::vector<TickCommand>* commands_ = nullptr;
  // The tick's record when it runs as streams by its lock order (for the dependencies), else null.
  const TickRecord* lock_order_ = nullptr;
  // One per thread: two or four per thread, for a finer balance at the end of a tick, measured
  // slower (more dependencies across streams, threads moving between regions).
  std::unique_ptr<Stream[]> streams_;
  std::vector<int> leaf_of_;                // per command: the leaf its player is in (PrepareStreams)
  std::vector<uint32_t> slot_;              // per command: its flag in ran_
  std::vector<uint32_t> dep_slots_;         // per entry of the record's `after`: that command's slot
  // By slot: kNotRun, kClaimed, kRun (release, by the thread that ran it; dependents acquire it).
  std::unique_ptr<std::atomic<uint8_t>[]> ran_;
  size_t ran_capacity_ = 0;
  std::vector<int> leaf_stream_;            // per leaf: its stream (PrepareStreams)
  // Per player id: the leaf it stood in after its last replayed command, or -1 (none yet). Written
  // by the thread that ran the command (inside the pool tick, or by the owner serially), read by
  // PrepareStreams for the next tick; the tick's close and the posting of the cut order the two.
  std::vector<int> player_leaf_;
  // A cut posted for helper 1 (PostStreamsCut): the record, and whether someone has claimed it.
  // The owner writes posted_ before it releases prepare_claimed_ = false; whoever exchanges it to
  // true runs PrepareStreams; the helper then publishes prepare_done_ = the job.
  const TickRecord* posted_ = nullptr;
  uint64_t posted_job_ = 0;
  std::atomic<bool> prepare_claimed_{true};
  alignas(64) std::atomic<uint64_t> prepare_done_{0};
  uint64_t prepare_cross_ GUARDED_BY(dispatch_) = 0;  // helper 1's last cut: PrepareStreams' result
  std::atomic<uint32_t> stream_ticket_{0};  // spreads the threads' first streams
  std::atomic<uint64_t> unmet_waits_{0};    // this tick's: added once per thread, taken by the owner
  std::atomic<uint64_t> blocker_runs_{0};   // likewise

  int count_ = 0;
  std::unique_ptr<CommandState[]> state_;
  std::unique_ptr<std::atomic<int>[]> ready_slots_;  // the ready queue: indices in push order
  size_t capacity_ = 0;                              // of state_ and ready_slots_
  Edge closed_;                                      // its address marks a done command

  // Helpers between ticks. members_: helpers inside the current tick, + kClosedTick once the
  // owner closed it (a late helper then backs out).
  std::atomic<uint32_t> generation_{0};
  std::atomic<int> parked_helpers_{0};
  std::atomic<bool> stop_{false};
  std::atomic<int> members_{kClosedTick};
  std::atomic<uint64_t> helper_ran_{0};  // commands the helpers ran this tick

  // The tick. Ready queue: slots [head, tail) are ready (shuffle_seed: the count of shuffled_).
  alignas(64) std::atomic<int> ready_head_{0};
  alignas(64) std::atomic<int> ready_tail_{0};
  alignas(64) std::atomic<int> done_count_{0};
  // Off done_count_'s line: every command reads failed_, every loop dispatch_left_, and
  // done_count_ changes with every completion.
  alignas(64) std::atomic<bool> failed_{false};
  std::atomic<bool> dispatch_left_{false};  // some command is not dispatched yet
  std::atomic<int> dispatch_blocker_{-1};   // the command the dispatch waits for, or -1
  alignas(64) std::atomic<uint32_t> work_seq_{0};  // bumped by Wake when someone is parked
  std::atomic<int> sleepers_{0};

  DispatchFlag dispatch_;
  int next_dispatch_ GUARDED_BY(dispatch_) = 0;
  int blocker_ GUARDED_BY(dispatch_) = -1;     // the command the next one waits for, or -1
  int stalled_at_ GUARDED_BY(dispatch_) = -1;  // the last command counted in dispatch_stalls_
  uint64_t dispatch_stalls_ GUARDED_BY(dispatch_) = 0;
  std::vector<int> previous_of_player_ GUARDED_BY(dispatch_);  // per command: its player's previous, or -1
  std::vector<int> last_of_player_ GUARDED_BY(dispatch_);      // per player id: scratch for the above
  std::vector<int> linked_by_ GUARDED_BY(dispatch_);  // per command: the last command linked to it
  std::vector<int> chain_ GUARDED_BY(dispatch_);  // per command: longest dependency chain ending at it
  int tick_chain_ GUARDED_BY(dispatch_) = 0;      // the tick's longest chain so far
  std::vector<int> leaf_holder_ GUARDED_BY(dispatch_);  // per leaf: latest command dispatched on it
  // Per leaf: the commands dispatched on it that were not yet seen done (pruned as it is read).
  std::vector<std::vector<int>> in_flight_ GUARDED_BY(dispatch_);
  // Per command: its declared region once dispatched (whole-map for an id that is not a player).
  std::vector<game::Region> declared_ GUARDED_BY(dispatch_);
  // Edges live in fixed blocks (never moved while a tick runs); reused from tick to tick.
  std::vector<std::unique_ptr<Edge[]>> edge_blocks_ GUARDED_BY(dispatch_);
  size_t edges_used_ GUARDED_BY(dispatch_) = 0;
  std::vector<int> box_leaves_ GUARDED_BY(dispatch_), leaves_ GUARDED_BY(dispatch_),
      scratch_a_ GUARDED_BY(dispatch_), scratch_b_ GUARDED_BY(dispatch_), merged_ GUARDED_BY(dispatch_);

  // shuffle_seed != 0 only (tests): the ready commands, taken at random.
  core::Mutex shuffle_mu_;
  std::vector<int> shuffled_ GUARDED_BY(shuffle_mu_);
  uint64_t shuffle_state_ GUARDED_BY(shuffle_mu_) = 0;

  mutable core::Mutex mu_;  // the rare paths: a refused command, the statistics
  core::Status failure_ GUARDED_BY(mu_);
  Stats stats_ GUARDED_BY(mu_);
};

}  // namespace durability
