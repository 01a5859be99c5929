// The server's measurements: the paper's per-thread time breakdown (PhaseClock, ThreadStats) and
// the per-frame figures (ServerStats: frame-time histogram, requests per thread per frame, leaf
// locking). Writers are the frame threads; the stats reporter reads everything at any time.
// Every field has one writer (relaxed load + store) unless marked "any thread" (fetch_add).
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "server/core/log_histogram.h"
#include "server/core/mutex.h"
#include "server/core/steady_clock.h"
#include "server/core/thread_annotations.h"

namespace sv {

// Where a frame thread's time goes (paper, section 4). Every nanosecond of a frame thread's life
// is in exactly one of these while instrumentation is on.
enum class Phase : uint8_t {
  kWorld,       // master: joins/leaves, world phase, per-frame bookkeeping
  kReceive,     // draining the thread's ENet host, decoding and validating packets
  kExec,        // executing commands (region computation and game code)
  kLockLeaf,    // waiting for areanode leaf locks (or the global lock)
  kLockParent,  // waiting for areanode parent-node locks (inside exec)
  kReply,       // building and sending snapshots and events
  kCheckpoint,  // master: the checkpointer's tick-boundary pause (durability)
  kLogSync,     // one thread per frame: logging the frame's record, and in sync mode waiting
                // until it is on disk before any reply leaves (durability)
  kIntraWait,   // at the barrier between the request and reply phases
  kInterWait,   // waiting for the world phase or for the previous frame to end
  kIdle,        // waiting for requests (request mode) or for the next tick (fixed mode)
  kCount
};
inline constexpr int kPhaseCount = static_cast<int>(Phase::kCount);
inline constexpr const char* kPhaseNames[kPhaseCount] = {
    "world", "receive", "exec", "lock_leaf", "lock_parent", "reply", "checkpoint", "log_sync",
    "intra_wait", "inter_wait", "idle"};



// Single-writer counter helpers.
inline void AddRelaxed(std::atomic<uint64_t>& a, uint64_t v) {
  a.store(a.load(std::memory_order_relaxed) + v, std::memory_order_relaxed);
}
inline uint64_t Load(const std::atomic<uint64_t>& a) { return a.load(std::memory_order_relaxed); }

// One per frame thread; written by that thread only.
struct alignas(64) ThreadStats {
  std::array<std::atomic<uint64_t>, kPhaseCount> phase_ns{};
  std::atomic<uint64_t> frames{0};     // frames this thread took part in
  std::atomic<uint64_t> requests{0};   // command packets accepted
  std::atomic<uint64_t> commands{0};   // commands executed
  std::atomic<uint64_t> replies{0};    // snapshots sent
  // Kill events queued for clients (one per client reached), and the oldest dropped from the
  // queue of a client that acknowledged no snapshot for 256 of them (docs/protocol.md, 6.4).
  std::atomic<uint64_t> kill_events{0}, kill_events_dropped{0};
};

// Attributes a thread's wall time to its current phase. Owned by one thread. With instrumentation
// off every call is a no-op (no clock reads).
class PhaseClock {
 public:
  PhaseClock(ThreadStats* stats, bool enabled) : stats_(stats), enabled_(enabled) {}
  bool enabled() const { return enabled_; }

  // Starts timing in phase p.
  void Start(Phase p) {
    if (!enabled_) return;
    current_ = p;
    since_ns_ = core::SteadyNs();
  }
  // Closes the current phase at now and enters p.
  void Switch(Phase p) {
    if (!enabled_) return;
    const uint64_t now = core::SteadyNs();
    Close(now);
    current_ = p;
    since_ns_ = now;
  }
  // Closes the current phase at `split_ns` (clamped into [since, now]), gives the rest up to now
  // to `rest`, and enters `next`. Used at the frame-start barrier: the time before the master
  // began the world phase is idle, the time after it is inter-frame wait.
  void SwitchSplit(uint64_t split_ns, Phase rest, Phase next) {
    if (!enabled_) return;
    const uint64_t now = core::SteadyNs();
    const uint64_t split = split_ns < since_ns_ ? since_ns_ : (split_ns > now ? now : split_ns);
    Close(split);
    AddRelaxed(stats_->phase_ns[static_cast<int>(rest)], now - split);
    current_ = next;
    since_ns_ = now;
  }
  // Moves `ns` measured inside the current phase to phase p (lock waits inside exec).
  void Carve(Phase p, uint64_t ns) {
    if (!enabled_ || ns == 0) return;
    AddRelaxed(stats_->phase_ns[static_cast<int>(p)], ns);
    carved_ns_ += ns;
  }
  // Closes the current phase at now (the thread is leaving the frame loop).
  void Finish() {
    if (!enabled_) return;
    Close(core::SteadyNs());
    since_ns_ = core::SteadyNs();
  }

 private:
  void Close(uint64_t end_ns) {
    uint64_t elapsed = end_ns > since_ns_ ? end_ns - since_ns_ : 0;
    elapsed = elapsed > carved_ns_ ? elapsed - carved_ns_ : 0;
    carved_ns_ = 0;
    AddRelaxed(stats_->phase_ns[static_cast<int>(current_)], elapsed);
  }

  ThreadStats* stats_;
  bool enabled_;
  Phase current_ = Phase::kIdle;
  uint64_t since_ns_ = 0;
  uint64_t carved_ns_ = 0;
};

// Junk datagrams the hosts' junk filter (junk_filter.h) dropped before ENet or game code saw
// them, by reason, and the half-open peers it watched. Any thread (fetch_add; half_open_max by
// compare-exchange). docs/stats.md, `junk`.
struct JunkCounters {
  std::atomic<uint64_t> short_datagrams{0};         // shorter than an ENet header + command
  std::atomic<uint64_t> oversize{0};                // longer than the hosts' MTU (1400)
  std::atomic<uint64_t> unreadable{0};              // over ENet's 4096-byte buffer: failed reads
  std::atomic<uint64_t> bad_header{0};              // compressed flag, or no valid command
  std::atomic<uint64_t> bad_connect{0};             // to peer id 0xFFF but no well-formed CONNECT
  std::atomic<uint64_t> unknown_peer{0};            // for a free slot or another address's slot
  std::atomic<uint64_t> connectionless_bad{0};      // unparseable, or at a worker port
  std::atomic<uint64_t> connectionless_limited{0};  // the source's reply budget was spent
  std::atomic<uint64_t> connect_capped{0};          // a CONNECT over the half-open caps
  std::atomic<uint64_t> half_open_expired{0};       // half-open peers reset after the timeout
  std::atomic<uint64_t> half_open_evicted{0};       // reset to admit a retransmitted CONNECT
  std::atomic<uint64_t> half_open_max{0};           // most half-open peers seen on one host

  uint64_t Dropped() const {
    uint64_t sum = 0;
    for (const std::atomic<uint64_t>* c : {&short_datagrams, &oversize, &unreadable, &bad_header,
                                           &bad_connect, &unknown_peer, &connectionless_bad,
                                           &connectionless_limited, &connect_capped}) {
      sum += c->load(std::memory_order_relaxed);
    }
    return sum;
  }
  void NoteHalfOpen(uint64_t n) {
    uint64_t seen = half_open_max.load(std::memory_order_relaxed);
    while (n > seen && !half_open_max.compare_exchange_weak(seen, n, std::memory_order_relaxed)) {
    }
  }
};

// Whole-server figures. Frame-level fields are written by the thread that closes the frame's
// bookkeeping (the master of the next world phase); the reporter reads them at any time.
class ServerStats {
 public:
  explicit ServerStats(int threads) : threads_(threads), per_thread_(threads) {}

  int threads() const { return threads_; }
  ThreadStats& thread(int i) { return per_thread_[i]; }
  const ThreadStats& thread(int i) const { return per_thread_[i]; }

  // Busy time of a frame, world phase start to the end of replies, in microseconds. Written by
  // the frame's master once per frame, read by the stats reporter.
  void RecordFrame(uint64_t ns) EXCLUDES(frame_hist_mu_) {
    core::MutexLock lock(&frame_hist_mu_);
    frame_hist_.Add(static_cast<double>(ns) / 1000.0);
  }
  core::LogHistogram FrameHistogram() const EXCLUDES(frame_hist_mu_) {
    core::MutexLock lock(&frame_hist_mu_);
    return frame_hist_;
  }
  std::atomic<uint64_t> frames{0};
  std::atomic<uint64_t> world_ticks{0};

  // Requests per thread per frame, over (frame, thread) samples with the thread in the frame.
  std::atomic<uint64_t> rptf_samples{0}, rptf_sum{0}, rptf_sum_sq{0};
  // Sum over multi-thread frames of (max - min) requests among the threads, and their count.
  std::atomic<uint64_t> rptf_spread_sum{0}, rptf_spread_frames{0};

  // Per-thread load, summed over multi-thread frames: (most - fewest) commands executed among
  // the threads, and 1000 x their mean.
  std::atomic<uint64_t> exec_spread_sum{0}, exec_mean_milli_sum{0};
  // The same over the multi-thread frames of a steady population (PopulationWatch), and their
  // count.
  std::atomic<uint64_t> steady_frames{0}, steady_exec_spread_sum{0}, steady_exec_mean_milli_sum{0};
  // --assign locality: commands run on another thread than the port's that read them; the
  // master's LocalityAssignment counters, copied after each update.
  std::atomic<uint64_t> routed_commands{0};
  std::atomic<uint64_t> migrations{0}, rebalances{0}, leaves_moved{0};

  // Leaf locking (areanode schemes).
  std::atomic<uint64_t> locked_commands{0};   // commands executed under leaf locks
  std::atomic<uint64_t> distinct_leaves{0};   // sum over those commands of distinct leaves locked
  std::atomic<uint64_t> leaf_acquisitions{0};
  std::atomic<uint64_t> relocks{0};           // acquisitions of a leaf already locked this frame
  std::atomic<uint64_t> lock_retries{0};      // region grew after locking: released, relocked
  std::atomic<uint64_t> waited_commands{0};   // commands that blocked on a lock another thread held
  std::atomic<uint64_t> refused_commands{0};  // commands the game refused (bad sequence, ...)
  std::atomic<uint64_t> shared_frames{0};     // frames where >= 2 threads executed commands
  std::atomic<uint64_t> shared_leaves_milli_pct{0};  // sum of per-frame % * 1000

  // Any thread.
  std::atomic<uint64_t> invalid_packets{0};
  std::atomic<uint64_t> chat_dropped{0};  // chat lines of silenced (flooding) players
  std::atomic<uint64_t> kicked{0};
  std::atomic<uint64_t> joins{0};
  std::atomic<uint64_t> join_refusals{0};
  std::atomic<uint64_t> new_identity_refusals{0};  // joins refused by the new-identity rate limit
  // The record store, as of the last world phase (written by the master).
  std::atomic<uint64_t> records_offline{0};
  std::atomic<uint64_t> records_evicted{0};  // since the world was created (it is in the state)
  std::atomic<uint64_t> leaves{0};
  std::atomic<uint64_t> players_online{0};
  std::atomic<uint64_t> max_players_online{0};
  JunkCounters junk;

 private:
  int threads_;
  std::vector<ThreadStats> per_thread_;
  mutable core::Mutex frame_hist_mu_;
  core::LogHistogram frame_hist_ GUARDED_BY(frame_hist_mu_);
};

}  // namespace sv
