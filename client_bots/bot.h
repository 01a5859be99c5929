// Bot: one simulated player. Plain data plus its snapshot decoder, owned and touched only by the
// bot thread that drives it (bot_thread.h). Its life is a small state machine:
//   kWaiting -> kChallenge -> kLobbyConnect -> kLobbyJoin -> kWorkerConnect -> kWorkerHello
//   -> kPlaying; any failure -> kBackoff -> kChallenge ...; the end of the run -> kDone.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include <enet/enet.h>

#include "client_bots/bot_state.h"
#include "client_bots/navigator.h"
#include "server/protocol/messages.h"
#include "server/protocol/snapshot_codec.h"

namespace bots {

// Commands whose send time is remembered for the response-time measurement. A command older
// than this when answered is counted answered without a sample (it was ~2 s at 30 Hz).
inline constexpr uint32_t kSendRing = 64;

struct Bot {
  // Identity, fixed for the run.
  int index = 0;  // global bot index
  std::string name;
  uint64_t token = 0;
  int host = 0;   // which of the thread's ENet hosts carries this bot's peers
  int server = 0; // which lobby it plays on (index into BotOptions::servers)
  // Commands go out at phase_us + k * period on the run's clock: a seeded offset in
  // [0, period), so bots are not in step with each other or with the server's frames.
  uint64_t phase_us = 0;

  BotState state = BotState::kWaiting;
  ENetPeer* lobby_peer = nullptr;
  ENetPeer* worker_peer = nullptr;
  uint64_t deadline_ms = 0;       // the current join step fails at this time
  uint64_t join_start_us = 0;     // first attempt of the current join (join time)
  bool joining = false;           // join_start_us is set
  bool ever_played = false;
  int attempts = 0;               // failed attempts since the last successful join

  // Join results.
  uint16_t player_id = proto::kNoPlayer;
  uint64_t ticket = 0;
  uint32_t challenge = 0;         // presented in the JoinRequest

  // Command stream. Invariant while playing: answered_seq <= sent_seq < next_seq.
  uint32_t next_seq = 1;          // sequence of the next command
  uint32_t sent_seq = 0;          // newest command sent
  uint32_t answered_seq = 0;      // newest command a snapshot reported applied
  uint32_t session_first_seq = 1; // first command of this connection (redundancy starts there)
  uint32_t max_reported_seq = 0;  // newest applied sequence the server ever reported (--verify)
  uint64_t next_cmd_us = 0;
  uint64_t last_snapshot_ms = 0;
  uint64_t self_stall_us_at_snapshot = 0;  // the thread's self_stall_us_ at last_snapshot_ms
  std::array<proto::UserCmd, proto::kMaxCommandsPerPacket> history{};  // by seq % 4
  std::array<uint64_t, kSendRing> sent_us{};                           // by seq % kSendRing

  proto::SnapshotDecoder decoder;
  proto::PlayerState me;
  bool deaths_known = false;  // `me.deaths` is from this connection (false until its first snapshot)
  BotBrain brain;
};

}  // namespace bots
