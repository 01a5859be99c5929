// What one bot thread measured (BotStats), merged across threads at the end of a run, and the
// small live view (LiveStats) the main thread samples every second for the console and the CSV.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>

#include "client_bots/bot_state.h"
#include "server/protocol/protocol_format.h"
#include "server/core/log_histogram.h"
#include "server/core/mutex.h"
#include "server/core/thread_annotations.h"

namespace bots {

// Why a join attempt failed. The first nine are proto::RefuseReason's (same values, taken from
// it); the bots' own failures follow.
enum class JoinFailure : uint8_t {
  kServerFull = static_cast<uint8_t>(proto::RefuseReason::kServerFull),
  kWrongProtocolVersion = static_cast<uint8_t>(proto::RefuseReason::kWrongProtocolVersion),
  kWrongToken = static_cast<uint8_t>(proto::RefuseReason::kWrongToken),
  kBadChallenge = static_cast<uint8_t>(proto::RefuseReason::kBadChallenge),
  kBadName = static_cast<uint8_t>(proto::RefuseReason::kBadName),
  kBanned = static_cast<uint8_t>(proto::RefuseReason::kBanned),
  kShuttingDown = static_cast<uint8_t>(proto::RefuseReason::kShuttingDown),
  kBadTicket = static_cast<uint8_t>(proto::RefuseReason::kBadTicket),
  kAlreadyConnected = static_cast<uint8_t>(proto::RefuseReason::kAlreadyConnected),
  kNoChallenge = proto::kMaxRefuseReason + 1,  // no "challenge" reply in time
  kLobbyTimeout = 11,        // ENet connect to the lobby, or its answer, timed out
  kLobbyDisconnected = 12,   // the lobby dropped us without an answer
  kWorkerTimeout = 13,       // ENet connect to the worker, or Welcome, timed out
  kWorkerDisconnected = 14,  // the worker dropped us before Welcome
  kBadReply = 15,            // an answer that did not decode
};
inline constexpr int kNumJoinFailures = 16;  // index 0 unused
static_assert(static_cast<int>(JoinFailure::kAlreadyConnected) == proto::kMaxRefuseReason,
              "JoinFailure must name every RefuseReason: add the new reason above");
static_assert(static_cast<int>(JoinFailure::kBadReply) + 1 == kNumJoinFailures);

// The failure a refusal from the server is counted as (same value).
inline JoinFailure FailureOf(proto::RefuseReason r) {
  return static_cast<JoinFailure>(static_cast<uint8_t>(r));
}
const char* JoinFailureName(JoinFailure f);

// Totals of one thread (then of the run). Plain data: owned by one thread, merged on one.
struct BotStats {
  uint64_t requests_sent = 0;      // commands sent (one per CommandPacket, redundant copies not counted)
  uint64_t replies_received = 0;   // snapshots received and decoded
  uint64_t commands_answered = 0;  // commands that some snapshot reported applied
  uint64_t unanswered = 0;         // commands sent but never reported applied
  // How the end-of-run drain ended, in threads: with answers still in flight when --drain-ms ran
  // out, or when a second signal ended it. Neither: every answer came in.
  uint64_t drains_timed_out = 0;
  uint64_t drains_cut_short = 0;
  uint64_t snapshot_errors = 0;    // undecodable snapshots (missing baseline included)
  // Kill events out of the decoded snapshots (each once, however often it was carried); those
  // whose victim was the bot itself; and the bot's deaths as its own PlayerState counted them
  // while it played (each rise of `deaths` between two snapshots of one connection).
  uint64_t kill_events = 0, own_death_events = 0, deaths_seen = 0;
  uint64_t joins = 0;              // successful joins (Welcome received)
  uint64_t reconnects = 0;         // successful joins of a bot that had played before
  uint64_t resumed = 0;            // bots whose first join found commands of theirs (sequence > 0)
  uint64_t connections_lost = 0;   // playing bots that lost the server (silence, disconnect)
  uint64_t kicks = 0;
  uint64_t durability_violations = 0;
  uint64_t rejoin_checks = 0;      // rejoins where --verify compared sequences
  // UDP datagrams and bytes through the thread's ENet hosts, everything included (joins, ENet
  // acknowledgements and pings), from ENet's host counters.
  uint64_t datagrams_sent = 0, datagrams_received = 0, bytes_sent = 0, bytes_received = 0;
  std::array<uint64_t, kNumJoinFailures> join_failures{};
  // Response times in microseconds, from a command's send to the kernel's arrival stamp of the
  // snapshot that answered it (proto::StampArrivals; the read time where the kernel gave none),
  // and the same to the moment this thread read that snapshot. The difference is the bot
  // process's own delay, which a real player on a machine of their own does not have.
  core::LogHistogram response;
  core::LogHistogram response_read;
  core::LogHistogram read_lag;       // microseconds per snapshot, kernel arrival to read
  bool arrival_stamps = true;        // every host socket took SO_TIMESTAMPNS
  core::LogHistogram join;           // microseconds, first attempt start to Welcome
  double outage_ms = 0;            // longest gap between consecutive replies, own stalls excluded
  // The thread's own stalls: wake-ups (or reads of the hosts) at least BotThread::kSelfStallMs
  // late, because the process was paused or starved of CPU. Silence from the server during them
  // is not counted.
  uint64_t self_stalls = 0;
  double self_stall_ms_total = 0;
  double self_stall_ms_max = 0;
  int connected_at_stop = 0;
  std::array<int, kNumBotStates> states_at_stop{};  // bots per BotState when the run stopped

  uint64_t join_failures_total() const;
  void Merge(const BotStats& o);
};

// Numbers the main thread reads while the run goes on. Counters are written by the owning bot
// thread only (relaxed atomics); the interval histogram is handed over under the mutex.
struct LiveStats {
  std::atomic<uint64_t> requests{0};
  std::atomic<uint64_t> replies{0};
  std::atomic<uint64_t> join_failures{0};
  std::atomic<uint64_t> reconnects{0};
  std::atomic<int> connected{0};

  core::Mutex mu;
  core::LogHistogram interval GUARDED_BY(mu);  // response times since the main thread last took it
};

}  // namespace bots
