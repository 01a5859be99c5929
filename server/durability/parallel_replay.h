// ParallelReplay: re-executes the commands of one logged tick on a pool of threads, commands of
// disjoint regions at once and conflicting ones in log (exec_seq) order, with a result
// bit-identical to ApplyLoggedCommand called on each command in log order (recovery's serial
// replay). Every command still runs through ApplyLoggedCommand (World::ExecuteCommand).
//
// Why it is exact. A command reads and writes only its player, its rocket slots (no other command
// touches those) and entities inside World::RegionOf(player, cmd), which the areanode leaves of
// RegionLeaves(region, optimized) cover (the game's region check enforces it). RegionOf reads only
// the player's edict and the map. So, walking the commands in log order (the dispatch), command j
// gets its leaf set once (a) its player's previous command is done (nothing else moves the player's
// box) and (b) every command already dispatched that holds a leaf under that box is done (only
// such a command may write the player's edict); the region is then the one serial replay computes.
// Command j waits for the latest earlier command holding each of its leaves (and so, transitively,
// for every earlier one). Two commands that run at once therefore share no leaf: they commute, as
// they did live under the region locks. The world's globals are not written by commands
// (World's contract), each player draws from its own generator in its edict, and tree queries are
// sorted by id, so neither the order nor the thread changes a single byte.
//
// Threading: one owner thread constructs it, calls ApplyCommands and destroys it; the pool's
// threads()-1 helper threads live from construction to destruction and idle between ticks (no
// thread is started per tick). ApplyCommands needs what the World's serial phases need (nothing
// else uses the World meanwhile); it turns the tree's parent locking on for its duration.
#pragma once

#include <cstdint>
#include <deque>
#include <thread>
#include <vector>

#include "server/core/mutex.h"
#include "server/core/status.h"
#include "server/core/thread_annotations.h"
#include "server/durability/tick_record.h"
#include "server/game/world.h"

namespace durability {

inline constexpr int kMaxReplayThreads = 64;
// Ticks with fewer commands replay serially on the owner thread: a hand-off costs more than such a
// tick's work. Not tuned: on a server busy enough for replay time to matter nearly every tick has
// more, and the adaptive choice (Options) decides for those.
inline constexpr int kMinParallelCommands = 8;

class ParallelReplay {
 public:
  struct Stats {
    uint64_t parallel_ticks = 0;   // ticks replayed by the pool
    uint64_t serial_ticks = 0;     // ticks replayed by the owner alone (small, or adaptive choice)
    uint64_t adaptive_serial_ticks = 0;  // of those, the ones the adaptive choice sent there
    uint64_t commands = 0;         // commands replayed, both ways
    uint64_t pool_commands = 0;    // of those, on the pool
    uint64_t dispatch_stalls = 0;  // times the next command in log order could not get its leaves yet
    // Sum over the pool's ticks of the longest chain of commands each waiting for the one before
    // (through shared leaves): pool_commands / critical_path bounds what any number of threads
    // gains on those ticks.
    uint64_t critical_path = 0;
  };

  struct Options {
    int threads = 2;  // 2..kMaxReplayThreads, the owner thread included
    int min_parallel_commands = kMinParallelCommands;  // >= 1
    // 0: threads take ready commands oldest first. Otherwise they take a random one (seeded):
    // for tests, which must get the serial state from any order the dependencies allow.
    uint64_t shuffle_seed = 0;
    // Replay each tick the faster way, measured as it goes: the owner times both modes per
    // command (one tick in kProbeInterval of each is a probe) and takes the cheaper. On a machine
    // whose cores are busy elsewhere, handing fine-grained work to threads that are not running
    // costs more than it saves; the state is the same either way. false: the pool always.
    bool adaptive = true;
  };
  static constexpr uint64_t kProbeInterval = 64;

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

  int threads() const { return options_.threads; }
  Stats stats() const;

 private:
  bool ChooseSerial();
  core::Status ApplySerially(const std::vector<TickCommand>& commands);
  core::Status ApplyOnPool(const std::vector<TickCommand>& commands);
  void HelperMain();
  // Runs and dispatches the current tick's commands until the tick is finished.
  void RunTick() REQUIRES(mu_);
  bool TickFinished() const REQUIRES(mu_);
  // Gives the next commands in log order their leaves and dependencies while their inputs are
  // settled; returns true if it dispatched any.
  bool DispatchReady() REQUIRES(mu_);
  bool TryDispatchOne(int j) REQUIRES(mu_);
  void Complete(int j, const core::Status& s) REQUIRES(mu_);

  // The next ready command to run (shuffle_seed: a random one), removed from ready_.
  int TakeReady() REQUIRES(mu_);

  game::World* const world_;
  const Options options_;
  std::vector<std::thread> helpers_;
  // The adaptive choice (owner thread only): replay ns per command of each mode, -1: not measured.
  uint64_t adaptive_ticks_ = 0;
  double serial_ns_per_command_ = -1;
  double pool_ns_per_command_ = -1;

  mutable core::Mutex mu_;
  core::CondVar tick_cv_;  // helpers between ticks: a tick began, or stop
  core::CondVar work_cv_;  // threads inside RunTick: work was left behind, or the tick ended
  int sleepers_ GUARDED_BY(mu_) = 0;        // threads waiting on work_cv_ inside RunTick
  bool stop_ GUARDED_BY(mu_) = false;
  uint64_t generation_ GUARDED_BY(mu_) = 0;  // one per parallel tick
  // The current tick (commands_ is the caller's vector, valid during ApplyCommands).
  const std::vector<TickCommand>* commands_ GUARDED_BY(mu_) = nullptr;
  int count_ GUARDED_BY(mu_) = 0;
  int next_dispatch_ GUARDED_BY(mu_) = 0;
  int done_count_ GUARDED_BY(mu_) = 0;
  int running_ GUARDED_BY(mu_) = 0;
  core::Status failure_ GUARDED_BY(mu_);
  std::vector<int> previous_of_player_ GUARDED_BY(mu_);  // per command: its player's previous, or -1
  std::vector<int> last_of_player_ GUARDED_BY(mu_);      // per player id: scratch for the above
  std::vector<uint8_t> done_ GUARDED_BY(mu_);
  std::vector<int> waiting_on_ GUARDED_BY(mu_);          // per command: dependencies not done
  std::vector<int> chain_ GUARDED_BY(mu_);  // per command: longest dependency chain ending at it
  int tick_chain_ GUARDED_BY(mu_) = 0;      // the tick's longest chain so far
  std::vector<std::vector<int>> dependents_ GUARDED_BY(mu_);
  std::vector<int> leaf_holder_ GUARDED_BY(mu_);         // per leaf: latest command dispatched on it
  std::deque<int> ready_ GUARDED_BY(mu_);
  uint64_t shuffle_state_ GUARDED_BY(mu_) = 0;
  std::vector<int> box_leaves_ GUARDED_BY(mu_), leaves_ GUARDED_BY(mu_),
      scratch_a_ GUARDED_BY(mu_), scratch_b_ GUARDED_BY(mu_), merged_ GUARDED_BY(mu_);
  Stats stats_ GUARDED_BY(mu_);
};

}  // namespace durability
