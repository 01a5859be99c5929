// BotThread: drives a share of the bots from one loop. It owns one ENet client host per
// kBotsPerHost bots (a host holds at most 4095 peers, and a bot uses two while it moves from the
// lobby to its worker), a ChallengeClient, and a TimerWheel with one timer per bot. No thread
// per bot and no allocation per command on our side (ENet allocates its packet and the codec its
// output buffer).
//
// Threading: construct and Init on any thread, then Run on exactly one thread; stats() after Run
// returns. live() may be read from any thread while Run goes on.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include <enet/enet.h>

#include "client_bots/bot.h"
#include "client_bots/bot_options.h"
#include "client_bots/bot_stats.h"
#include "client_bots/challenge_client.h"
#include "client_bots/navigator.h"
#include "client_bots/timer_wheel.h"
#include "server/core/status.h"

namespace bots {

class BotThread {
 public:
  static constexpr int kBotsPerHost = 2000;
  // The thread counts itself stalled when it wakes, or finishes reading its hosts, at least this
  // late: the process was paused or starved of CPU. Silence from the server during a stall of
  // its own is not the server's (see BotStats::self_stalls).
  static constexpr uint64_t kSelfStallMs = 20;

  // bot_indices: the global indices of this thread's bots. `options` and `nav` must outlive the
  // thread. `epoch` is the run's time zero (ramp slots and the end are measured from it).
  // `lobbies` holds one resolved address per options.servers entry.
  BotThread(std::vector<int> bot_indices, const BotOptions& options, const NavMap& nav,
            std::vector<ENetAddress> lobbies, std::chrono::steady_clock::time_point epoch);
  ~BotThread();
  BotThread(const BotThread&) = delete;
  BotThread& operator=(const BotThread&) = delete;

  // Creates the hosts and the challenge socket.
  core::Status Init();

  // Plays until `stop` is set or the run's duration is over, then drains the answers still in
  // flight (up to --drain-ms; `abort` set cuts the drain short; stats() says which ended it) and
  // disconnects every bot.
  void Run(const std::atomic<bool>& stop, const std::atomic<bool>& abort);

  const BotStats& stats() const { return stats_; }
  LiveStats& live() { return live_; }

 private:
  uint64_t NowUs() const;
  // Counts the time from from_us to now_us as a stall of this thread if it is kSelfStallMs or more.
  void CountSelfStall(uint64_t from_us, uint64_t now_us);
  // How long the server has been silent to `bot`: since its last snapshot, minus this thread's
  // own stalls since then.
  uint64_t ServerSilenceMs(const Bot& bot, uint64_t now_us) const;
  // The first send time of `bot`'s phase at or after at_us.
  uint64_t NextSendUs(const Bot& bot, uint64_t at_us) const;
  void Fire(uint32_t id, uint64_t now_us);
  void StartAttempt(Bot& bot, uint32_t id, uint64_t now_us);
  void TryChallenge(Bot& bot, uint32_t id, uint64_t now_us);
  void SendCommand(Bot& bot, uint32_t id, uint64_t now_us);
  void FailJoin(Bot& bot, uint32_t id, JoinFailure why, uint64_t now_us);
  void LoseConnection(Bot& bot, uint32_t id, uint64_t now_us);
  void Backoff(Bot& bot, uint32_t id, uint64_t now_us);
  void DropPeers(Bot& bot);
  void ServiceHosts();
  void HandleEvent(const ENetEvent& ev);
  void OnConnect(Bot& bot, ENetPeer* peer, uint64_t now_us);
  // arrival_us: when the packet's datagram reached the kernel (or later, never earlier).
  void OnPacket(Bot& bot, ENetPeer* peer, const ENetPacket* packet, uint64_t now_us, uint64_t arrival_us);
  void OnJoinAccept(Bot& bot, const proto::JoinAccept& accept, uint64_t now_us);
  void OnWelcome(Bot& bot, const proto::Welcome& welcome, uint64_t now_us);
  void OnSnapshot(Bot& bot, const ENetPacket* packet, uint64_t now_us, uint64_t arrival_us);
  // When the newest datagram for `peer` reached the kernel, on this thread's clock; now_us if
  // its socket has no stamps.
  uint64_t ArrivalUs(const ENetPeer* peer, uint64_t now_us) const;
  void OnDisconnect(Bot& bot, ENetPeer* peer, uint64_t now_us);
  // Folds the gap since the thread's last reply, minus its own stalls, into outage_ms.
  void NoteOutage(uint64_t now_us);
  template <class M>
  bool SendReliable(ENetPeer* peer, const M& message);
  ENetPeer* Connect(Bot& bot, uint16_t port);
  uint32_t IdOf(const Bot& bot) const { return static_cast<uint32_t>(&bot - bots_.data()); }
  void Finish(const std::atomic<bool>& abort);
  void Publish();       // live counters to the main thread; also CountTraffic
  void CountTraffic();  // ENet host counters into stats_
  void WaitForTraffic(int timeout_ms);
  void SleepUntil(uint64_t when_us);

  const BotOptions& options_;
  const NavMap& nav_;
  const std::vector<ENetAddress> lobbies_;
  const std::chrono::steady_clock::time_point epoch_;
  const uint64_t period_us_;   // between two commands of one bot
  const uint64_t end_us_;      // when the run stops sending
  const uint8_t command_ms_;

  std::vector<Bot> bots_;
  std::vector<ENetHost*> hosts_;
  std::vector<std::unique_ptr<ChallengeClient>> challenges_;  // one per lobby
  TimerWheel wheel_;
  bool sending_ = true;        // false while draining at the end

  // Scratch buffers reused for every message (no allocation per command on our side).
  std::vector<uint8_t> packet_bytes_;
  proto::Snapshot snapshot_;

  BotStats stats_;
  core::LogHistogram interval_;  // response times since the last Publish
  uint64_t last_publish_us_ = 0;
  uint64_t last_reply_us_ = 0;
  uint64_t self_stall_us_ = 0;           // the thread's own stalls, summed over the run
  uint64_t self_stall_us_at_reply_ = 0;  // self_stall_us_ when last_reply_us_ was set
  int connected_ = 0;
  LiveStats live_;
};

}  // namespace bots
