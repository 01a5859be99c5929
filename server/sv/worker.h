// Worker: one frame thread's network side and its players (the paper's "each thread uses a
// different UDP port"). Owns an ENetHost on base+1+index that no other thread touches, the
// sessions of the players assigned to it, their snapshot encoders and input validators.
// It is the server's request source and reply sink: the phases themselves (commands under the
// locking scheme, snapshots built and encoded) are its FrameExecutor's, which aftershock-replay
// runs too. The frame loop (server.cc) calls it phase by phase on its own thread:
//   Poll (request mode, idle) -> ReceiveRequests (receive, validate, the executor runs the
//   commands; locality: hands the other threads theirs) -> ExecuteRoutedRequests (locality: the
//   commands the other ports read for this thread's players) -> BuildReplies (the executor's encoded snapshots, held; read-only on the world) ->
//   SendReplies (chat + the held snapshots with their kill events, once the tick is durable) or
//   DropReplies (it never became durable: nothing of the frame is shown).
//
// Threading: every method runs on the worker's thread, except the two inboxes (any thread) and
// executor()'s counters, which the master reads at a phase boundary.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include <enet/enet.h>

#include "server/core/status.h"
#include "server/protocol/command_validator.h"
#include "server/protocol/snapshot_codec.h"
#include "server/sv/frame_executor.h"
#include "server/sv/frame_shared.h"
#include "server/sv/junk_filter.h"
#include "server/sv/transport.h"

namespace sv {

// Chat flood protection (Worker::AllowChat), QuakeWorld's defaults: 4 lines in 4 s, then 10 s of
// silence.
inline constexpr uint32_t kChatFloodLines = 4;
inline constexpr uint64_t kChatFloodWindowMs = 4000;
inline constexpr uint64_t kChatSilenceMs = 10000;

class Worker {
 public:
  static core::Status Create(int index, FrameShared* shared, std::unique_ptr<Worker>* out);
  ~Worker();

  uint16_t port() const { return port_; }  // as bound (ServerOptions::port 0: the system's pick)

  ThreadQueue<PlayerAssignment>& assignments() { return assignments_; }
  ThreadQueue<FrameEvent>& events() { return events_; }

  // Request mode's select: services the host for up to timeout_ms and keeps what arrived for
  // the next request phase. True if anything arrived (now or earlier) that needs a frame.
  bool Poll(int timeout_ms);

  // The request phase: ReceiveRequests reads the port and validates, then runs the commands of
  // the players this thread runs (all of them, unless --assign locality). Under locality it
  // hands each other command to the thread that runs its player (shared->routed), and once every
  // worker has received (the server's route barrier) ExecuteRoutedRequests runs those handed to
  // this thread. A player's commands all arrive on one port, so they run in order either way.
  void ReceiveRequests(PhaseClock* clock);
  void ExecuteRoutedRequests(PhaseClock* clock);
  // Encodes every requesting player's snapshot while the log syncs the frame's tick. Until
  // `durable` (polled every few snapshots, never blocking) answers true the snapshots are held
  // in memory; from then on the frame's chat and the held snapshots leave, and each
  // later snapshot leaves as soon as it is encoded. Then exactly one of SendReplies (once the
  // tick is durable: sends whatever is still held) or DropReplies (it never became durable:
  // nothing of the frame is shown; only if nothing was released).
  void BuildReplies(PhaseClock* clock, const std::function<bool()>& durable);
  bool released() const { return released_; }
  void SendReplies(PhaseClock* clock);
  void DropReplies();
  // After the frame loop: kicks every client (server shutdown) and lets ENet deliver.
  void Shutdown();

  FrameExecutor& executor() { return executor_; }

 private:
  struct Session {
    uint64_t conn_id = 0;
    ENetPeer* peer = nullptr;
    uint64_t connected_ms = 0;
    bool active = false;   // Hello accepted
    bool closing = false;  // kicked or refused: ignore input until ENet disconnects
    game::EntityId player = 0;
    std::optional<proto::CommandValidator> validator;
    proto::RateWindow invalid{20, 5000};
    proto::RateWindow chat_lines{kChatFloodLines + 1, kChatFloodWindowMs};
    uint64_t chat_silent_until_ms = 0;  // flood protection: its chat is dropped until then
    proto::SnapshotEncoder encoder;
    uint32_t ack_snapshot_id = 0;
    bool requested = false;  // sent a command packet this frame
    uint64_t chat_round = 0;  // the reply round whose chat it was sent
  };
  struct PendingCommand {
    Session* session;  // alive this frame: a session that goes meanwhile is only retired
    game::UserCmd cmd;
  };
  struct Expected {
    uint64_t ticket = 0;
    uint32_t last_applied_sequence = 0;
    uint64_t deadline_ms = 0;
  };

  Worker(int index, uint16_t port, ENetHost* host, FrameShared* shared);
  void HandleEvent(ENetEvent& ev, uint64_t now_ms);
  void HandlePacket(Session* s, const ENetPacket* packet, uint64_t now_ms);
  void HandleHello(Session* s, std::span<const uint8_t> data);
  void HandleCommands(Session* s, std::span<const uint8_t> data, uint64_t now_ms);
  // QuakeWorld's chat flood protection (SV_Say's fp_messages, fp_persecond, fp_secondsdead):
  // true if `s` may say a line now. A line after kChatFloodLines within kChatFloodWindowMs
  // silences the player for kChatSilenceMs, and it is told so once; every line said while silent
  // is dropped and counted (chat_dropped). Each line goes to every player, reliably: without
  // this, one client's flood was multiplied by the number of players.
  bool AllowChat(Session* s, uint64_t now_ms);
  // Counts an invalid packet against the session and kicks it (`reason`) once its rate of
  // invalid packets is exceeded: a bad packet costs its sender.
  void ChargeInvalid(Session* s, uint64_t now_ms, proto::KickReason reason);
  void Kick(Session* s, proto::KickReason reason, const std::string& text);
  // Forgets `player`'s session or pending ticket on this worker (duplicate login from
  // rejoin_ip:rejoin_port, host order): kicks the old client, or resets its peer silently if it
  // is at that very address and port (the client restarted there).
  void DropPlayer(game::EntityId player, uint32_t rejoin_ip, uint16_t rejoin_port);
  void Leave(Session* s);
  // Takes `s` out of sessions_ and its peer's data; it is freed once the frame's replies are
  // sent or dropped (a queued command or a requester entry of this frame may still point at it).
  void RetireSession(Session* s);
  void Expire(uint64_t now_ms);

  // The tick is durable: sends every held snapshot, each after its player's share of the
  // frame's chat (one datagram for both).
  void Release();
  // enet_host_flush with the datagrams batched (enet_socket_batch.h).
  void FlushHost();
  // Queues each of the frame's kill events (event_scratch_) in the snapshot encoder of every
  // session it reaches (EventReaches).
  void QueueKillEvents();
  // Sends `s` the frame's chat lines (reliable packets), once per reply round.
  void SendFrameChat(Session* s);

  // The frame's commands of players still connected, in arrival order: into exec_batch_ if this
  // thread runs them, else into the routed list of the thread that does.
  void RouteCommands();

  const int index_;
  const uint16_t port_;
  ENetHost* host_;
  FrameShared* shared_;
  game::World* world_;
  JunkFilter junk_;  // on host_'s intercept hook: drops junk before ENet parses it
  FrameExecutor executor_;
  uint64_t next_conn_ = 1;
  // Every session, by conn_id; each ENet peer's data points at its session (nullptr: none). ENet
  // reuses a peer for the next client (NOTES.md), so every path that ends a session clears its
  // peer's data first (RetireSession), and events are handled in the order ENet gave them: an
  // event of a peer whose session ended sees nullptr, never a freed session.
  std::unordered_map<uint64_t, std::unique_ptr<Session>> sessions_;
  // Erased this frame (RetireSession); freed when its replies are sent or dropped.
  std::vector<std::unique_ptr<Session>> retired_;
  // This frame's requesting sessions, in the order their first command packet was read (the
  // socket's arrival order): the reply order. May hold sessions that left since (not active).
  std::vector<Session*> requesters_;
  // Active players -> their session (an entry leaves before its session is erased).
  std::unordered_map<game::EntityId, Session*> player_conn_;
  std::unordered_map<game::EntityId, Expected> expected_;
  ThreadQueue<PlayerAssignment> assignments_;
  ThreadQueue<FrameEvent> events_;
  std::vector<PlayerAssignment> assignment_scratch_;
  std::vector<FrameEvent> event_scratch_;
  std::vector<ENetEvent> pending_;  // arrived during Poll, handled in the next request phase
  std::vector<PendingCommand> commands_;
  std::vector<PlayerCommand> exec_batch_;  // commands_ of players still connected
  proto::EncodedSnapshot encoded_;
  struct HeldReply {
    Session* session;
    size_t offset, size;  // in held_bytes_
  };
  static constexpr size_t kDurableCheckEvery = 8;  // snapshots built between durability polls
  static constexpr size_t kFlushEvery = 32;        // snapshots sent between host flushes
  std::vector<HeldReply> held_;     // BuildReplies -> Release
  std::vector<uint8_t> held_bytes_;
  bool released_ = false;           // this frame's tick is durable and its replies are leaving
  size_t sent_ = 0;                 // snapshots sent this frame
  uint64_t reply_round_ = 0;        // BuildReplies calls so far
  std::deque<SharedReliable> frame_chat_;  // this round's chat lines (event_scratch_), as packets
};

}  // namespace sv
