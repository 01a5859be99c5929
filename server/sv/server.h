// Server: the frame orchestrator of the parallel Quake server (the paper's Figure 3). Owns the
// map, the collision world, the game World, the lobby thread and one frame thread per worker,
// and runs every frame as three phases separated by global barriers:
//   1. world    (the master alone): leaves, joins, the game's world phase, kill events;
//   2. requests (every worker in the frame): drain its own port, validate, execute commands
//      under the locking scheme (--locking);
//   3. replies  (every worker in the frame): snapshots to the players that sent a request,
//      reliable events; read-only on the world.
// With a data directory (durability), each frame is one tick of the recovery log: the world part
// and the commands are recorded (durability::ApplyLeave/ApplyJoin/ApplyWorldPhase, TickRecorder)
// and logged when the request phase closes; in sync mode no reply leaves before the record is
// on disk; the checkpointer's tick boundary runs at the start of the next world phase. Start-up
// recovers the world before any port is opened.
// Fixed mode: thread 0 is master, all threads run every frame at --tick-hz. Request mode: the
// first thread that sees a request becomes master; threads arriving after the world phase wait
// for the next frame.
//
// Files by concept: server.cc (creation, the two frame loops, the world phase), server_gate.cc
// (barriers, tick pacing, the request-frame gate), server_admission.cc (joins and leaves),
// server_events.cc (kill events), server_durability.cc (recovery, logging, durable replies),
// server_frame_stats.cc (per-frame statistics), server_status.cc (status and metrics boards).
//
// Threading: Create/Start/Wait on one controlling thread; RequestStop, Report and fatal_status
// from any thread; world() only after Wait().
#pragma once

#include <atomic>
#include <barrier>
#include <chrono>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "maps/map.h"
#include "server/collision/collision_world.h"
#include "server/core/mutex.h"
#include "server/core/status.h"
#include "server/core/thread_annotations.h"
#include "server/durability/durability.h"
#include "server/durability/tick_record.h"
#include "server/durability/tick_recorder.h"
#include "server/game/world.h"
#include "server/protocol/source_limiter.h"
#include "server/sv/frame_shared.h"
#include "server/sv/lobby.h"
#include "server/sv/locality.h"
#include "server/sv/metrics.h"
#include "server/sv/server_options.h"
#include "server/sv/server_stats.h"
#include "server/sv/stats_report.h"
#include "server/sv/worker.h"
#include "server/vis/pvs.h"
#include "server/vis/pvs_cache.h"

namespace sv {

// --hostname as the status reply shows it: cut to proto::kMaxHostnameChars, and every backslash
// (the reply's separator), control byte and byte outside printable ASCII made '_'.
std::string ShownHostname(const std::string& hostname);

class Server {
 public:
  // Loads the map, loads or builds its PVS, builds the world, binds the lobby and worker ports.
  // Does not start threads.
  static core::Status Create(const ServerOptions& options, std::unique_ptr<Server>* out);
  ~Server();  // RequestStop + Wait

  void Start();
  void RequestStop() { stop_.store(true, std::memory_order_release); }
  bool stop_requested() const { return stop_.load(std::memory_order_acquire); }
  void Wait();

  StatsReport Report() const;
  // The ports as bound (ServerOptions::port 0: the system's picks). Any thread, after Create.
  uint16_t lobby_port() const { return lobby_->port(); }
  uint16_t worker_port(int worker) const { return workers_[worker]->port(); }
  const collision::CollisionWorld& collision() const { return *collision_; }
  const game::World& world() const { return *world_; }  // after Wait()
  const vis::Pvs& pvs() const { return pvs_; }
  const vis::PvsCacheReport& pvs_report() const { return pvs_report_; }

  // Durability: on when ServerOptions::data_dir is set. The report of start-up recovery.
  bool durability_enabled() const { return durability_ != nullptr; }
  const durability::WorldRecoveryReport& recovery_report() const { return recovery_report_; }
  // OK, or the durability error (failed fsync, ENOSPC, ...) that made the server stop itself.
  core::Status fatal_status() const;

  // Prometheus metrics, published by the frame master every kMetricsPublishMs while
  // ServerOptions::metrics is set (server_status.cc). Any thread may read the board.
  const MetricsBoard& metrics_board() const { return metrics_board_; }
  // The TCP port the metrics endpoint bound (main.cc starts it), for Report's `ports`. Call on
  // the controlling thread before Start().
  void set_metrics_port(uint16_t port) { metrics_port_ = port; }

 private:
  enum class FrameState : uint8_t { kIdle, kWorld, kRequests, kReplies };
  enum class JoinOutcome : uint8_t { kMaster, kParticipant, kStop };
  struct Online {
    int slot = 0;
    int worker = 0;
    uint64_t joined_ms = 0;  // steady clock: the status reply's minutes connected
  };

  // The fixed-frame master's pacing: one frame per period, no burst after falling behind.
  struct TickPacer {
    explicit TickPacer(int tick_hz);
    std::chrono::nanoseconds period;
    std::chrono::steady_clock::time_point next_tick;
  };

  explicit Server(const ServerOptions& options);
  // The frame loops (server.cc): a frame thread runs one of them until the server stops.
  void FrameThread(int index);
  void RunFixed(int index, PhaseClock* clock);
  void RunRequest(int index, PhaseClock* clock);

  // Fixed frames' synchronisation (server_gate.cc). Each switches `clock` to the wait it is in.
  void WaitForTick(TickPacer* pacer, PhaseClock* clock);  // master: sleep to the next tick
  void AwaitWorldPhase(bool master, PhaseClock* clock);   // barrier A
  void AwaitRoutedCommands(PhaseClock* clock);            // barrier R (--assign locality)
  void AwaitRequests(PhaseClock* clock);                  // barrier B
  // Barrier B' with durability (the master appends the tick record first); false: durability
  // failed, the frame sends no reply.
  bool AwaitTickRecord(bool master, PhaseClock* clock);
  // Barrier C, then the master records the frame; false: durability failed, stop.
  bool AwaitReplies(int index, PhaseClock* clock);
  // Request frames' gate (server_gate.cc).
  // Polls the thread's port; true if it has requests, or (thread 0) the frame is otherwise due.
  bool WaitForRequests(int index, PhaseClock* clock);
  JoinOutcome JoinFrame(PhaseClock* clock) EXCLUDES(gate_mu_);
  void OpenRequests() EXCLUDES(gate_mu_);  // master, after the world phase: workers may run
  bool IntraBarrier(PhaseClock* clock) EXCLUDES(gate_mu_);  // false: durability failed, send no reply
  // Counts the thread's frame; the last thread out closes the frame.
  void EndFrame(int index) EXCLUDES(gate_mu_);

  // The PVS of the map, from the cache (ServerOptions::vis_cache_dir) or built now.
  core::Status LoadVisibility();

  // Durability (serial points of the frame; server_durability.cc).
  core::Status OpenDurability();
  // The game world's configuration from the options: the live world's, and the replay check's.
  static game::WorldConfig WorldConfigOf(const ServerOptions& options);
  // Logs the replay check's outcome (recovery_report_.replay_check).
  void LogReplayCheck() const;
  void CheckpointPhase(PhaseClock* clock);  // master: CheckpointBoundary, timed as kCheckpoint
  void CheckpointBoundary();  // master, before the world phase: the previous frame's boundary
  void AppendTickRecord() EXCLUDES(gate_mu_);  // after every request of the frame: merge, log (no wait)
  // Each worker: encode its replies, wait until the frame's tick is durable (sync mode; the
  // sync runs meanwhile), then send them; if it never becomes durable, drop them and stop.
  void ReplyWhenDurable(Worker& w, PhaseClock* clock);
  void LeaveRecovered();      // first world phase: players the recovered world had online
  void Fail(const core::Status& s);

  // Master only, world phase.
  bool WorldTickDue();  // request frames: a world tick is due (and is taken now)
  void WorldPhase(bool run_world, PhaseClock* clock);
  // --assign locality: the players' threads for the frame's commands (LocalityAssignment).
  void AssignByLocality();
  void SumFrameStats();  // server_frame_stats.cc: the closed frame's worker counters into stats_
  // Admission (server_admission.cc).
  void ApplyNotices();
  void ApplyJoins();
  proto::JoinRefuse DecideJoin(const JoinTicketRequest& req, JoinDecision* decision);
  // Duplicate login: if req's identity is online and the token matches, its session leaves.
  void ReplaceOnlineSession(const JoinTicketRequest& req);
  int WorkerForSlot(int slot) const;
  // Kill events (server_events.cc).
  void DetectKills();
  void Broadcast(const std::vector<uint8_t>& bytes);  // to every client
  void Send(const FrameEvent& event);              // to the clients it reaches
  // Publication for other threads (server_status.cc).
  void PublishStatus();
  void PublishMetrics();

  ServerOptions options_;
  maps::Map map_;
  std::unique_ptr<collision::CollisionWorld> collision_;
  vis::Pvs pvs_;
  vis::PvsCacheReport pvs_report_;
  std::unique_ptr<game::World> world_;
  ServerStats stats_;
  FrameShared shared_;
  StatusBoard status_board_;
  ThreadQueue<JoinTicketRequest> join_requests_;
  ThreadQueue<JoinDecision> join_decisions_;
  std::unique_ptr<Lobby> lobby_;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::vector<FrameExecutor*> executors_;  // workers_[i]->executor(), for the frame statistics
  std::thread lobby_thread_;
  std::vector<std::thread> threads_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> lobby_stop_{false};
  bool started_ = false;
  uint64_t start_ms_ = 0;

  // Fixed mode.
  std::unique_ptr<std::barrier<>> barrier_;
  // --assign locality: who runs which player's commands (master: world phase; shared_.locality).
  std::unique_ptr<LocalityAssignment> locality_;
  uint64_t frame_start_ns_ = 0;  // master writes before barrier A; workers read after it
  bool stop_frame_ = false;      // likewise

  // Request mode: the frame gate (the paper's wait/signal synchronization).
  core::Mutex gate_mu_;
  core::CondVar gate_cv_;
  FrameState state_ GUARDED_BY(gate_mu_) = FrameState::kIdle;
  uint64_t gate_frame_ GUARDED_BY(gate_mu_) = 0;
  int participants_ GUARDED_BY(gate_mu_) = 0;
  int arrived_ GUARDED_BY(gate_mu_) = 0;
  int done_ GUARDED_BY(gate_mu_) = 0;
  uint64_t gate_frame_start_ns_ GUARDED_BY(gate_mu_) = 0;
  uint64_t last_world_ns_ = 0;            // master of the frame only
  std::atomic<uint64_t> last_frame_end_ns_{0};

  // Master-only state (serial phases).
  std::unordered_map<game::EntityId, Online> online_;
  std::vector<bool> slot_used_;
  std::vector<int32_t> last_frags_, last_deaths_;
  std::mt19937_64 ticket_rng_;
  proto::SourceLimiter new_identities_;  // session state: never logged, reset by a restart
  uint64_t last_status_ms_ = 0;
  uint64_t last_metrics_ms_ = 0;
  MetricsBoard metrics_board_;
  uint16_t metrics_port_ = 0;  // set before Start()

  // Durability. Declared after world_: destroyed first (it holds the world's write hook).
  std::unique_ptr<durability::Durability> durability_;
  durability::WorldRecoveryReport recovery_report_;
  std::unique_ptr<durability::TickRecorder> recorder_;
  durability::TickRecord record_;  // the frame in progress (its serial points only)
  uint64_t log_tick_ = 0;          // the frame in progress is this tick of the log
  PopulationWatch population_;  // the last second's joins and leaves (master)
  uint64_t boundary_tick_ = 0;     // logged frame whose tick boundary is still due (0: none)
  std::vector<game::EntityId> recovered_online_;
  std::atomic<bool> durability_failed_{false};
  mutable core::Mutex fatal_mu_;
  core::Status fatal_ GUARDED_BY(fatal_mu_);
  std::vector<JoinTicketRequest> join_scratch_;
  std::vector<WorkerNotice> notice_scratch_;
};

}  // namespace sv
