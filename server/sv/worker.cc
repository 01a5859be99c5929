// Worker: sessions, input validation, command execution under the locking scheme, replies.
#include "server/sv/worker.h"

#include <arpa/inet.h>

#include <algorithm>
#include <optional>

#include <spdlog/spdlog.h>

#include "server/core/check.h"
#include "server/core/steady_clock.h"
#include "server/protocol/enet_socket_batch.h"
#include "server/protocol/messages.h"
#include "server/sv/event_scope.h"
#include "server/sv/lobby.h"
#include "server/sv/locality.h"
#include "server/sv/snapshot_builder.h"
#include "server/sv/transport.h"

namespace sv {

namespace {

constexpr uint64_t kHelloTimeoutMs = 5000;  // a worker connection must say Hello by then

game::UserCmd ToGameCmd(const proto::UserCmd& c) {
  game::UserCmd g;
  g.sequence = c.sequence;
  g.duration_ms = c.duration_ms;
  g.view_angles = c.view_angles;
  g.forward_move = c.forward_move;
  g.side_move = c.side_move;
  g.up_move = c.up_move;
  g.buttons = c.buttons;
  g.impulse = c.impulse;
  return g;
}

}  // namespace

core::Status Worker::Create(int index, FrameShared* shared, std::unique_ptr<Worker>* out) {
  const ServerOptions& o = *shared->options;
  const uint16_t port = o.port == 0 ? 0 : static_cast<uint16_t>(o.port + 1 + index);
  const size_t per_worker = static_cast<size_t>((o.max_players + o.threads - 1) / o.threads);
  ENetHost* host = nullptr;
  core::Status s = CreateServerHost(o.bind_address, port, per_worker + 32, &host);
  if (!s.ok()) return core::Status::IoError("worker " + std::to_string(index) + ": " + s.message());
  out->reset(new Worker(index, BoundPort(host), host, shared));
  return core::Status::OK();
}

Worker::Worker(int index, uint16_t port, ENetHost* host, FrameShared* shared)
    : index_(index),
      port_(port),
      host_(host),
      shared_(shared),
      world_(shared->world),
      junk_(host, &shared->stats->junk, nullptr),
      executor_(index, shared) {}

Worker::~Worker() {
  for (ENetEvent& ev : pending_) {
    if (ev.type == ENET_EVENT_TYPE_RECEIVE) enet_packet_destroy(ev.packet);
  }
  enet_host_destroy(host_);
}

bool Worker::Poll(int timeout_ms) {
  junk_.Drain([this](ENetEvent& e) { pending_.push_back(e); }, static_cast<uint32_t>(timeout_ms));
  return !pending_.empty();
}

// ---- Request phase: receive ------------------------------------------------------------------

void Worker::ReceiveRequests(PhaseClock* clock) {
  clock->Switch(Phase::kReceive);
  executor_.BeginRequests();
  const uint64_t now_ms = core::SteadyMs();
  assignment_scratch_.clear();
  assignments_.DrainInto(&assignment_scratch_);
  // Before any packet: a drop must take effect before the old session's commands could run.
  for (const PlayerAssignment& a : assignment_scratch_) {
    if (a.drop) {
      DropPlayer(a.player, a.rejoin_ip, a.rejoin_port);
    } else {
      expected_[a.player] = Expected{a.ticket, a.last_applied_sequence, a.deadline_ms};
    }
  }
  for (ENetEvent& ev : pending_) HandleEvent(ev, now_ms);
  pending_.clear();
  junk_.Drain([&](ENetEvent& ev) { HandleEvent(ev, now_ms); });
  Expire(now_ms);
  RouteCommands();
  executor_.ExecuteCommands(exec_batch_, clock);
}

void Worker::HandleEvent(ENetEvent& ev, uint64_t now_ms) {
  switch (ev.type) {
    case ENET_EVENT_TYPE_CONNECT: {
      auto s = std::make_unique<Session>();
      s->conn_id = next_conn_++;
      s->peer = ev.peer;
      s->connected_ms = now_ms;
      ev.peer->data = s.get();
      enet_peer_ping_interval(ev.peer, proto::kEnetPingIntervalMs);
      sessions_[s->conn_id] = std::move(s);
      break;
    }
    case ENET_EVENT_TYPE_DISCONNECT: {
      Session* s = static_cast<Session*>(ev.peer->data);
      if (s == nullptr) break;
      Leave(s);
      RetireSession(s);
      break;
    }
    case ENET_EVENT_TYPE_RECEIVE: {
      Session* s = static_cast<Session*>(ev.peer->data);
      if (s != nullptr && !s->closing) HandlePacket(s, ev.packet, now_ms);
      enet_packet_destroy(ev.packet);
      break;
    }
    default:
      break;
  }
}

void Worker::HandlePacket(Session* s, const ENetPacket* packet, uint64_t now_ms) {
  const std::span<const uint8_t> data(packet->data, packet->dataLength);
  const std::optional<proto::MessageType> type = proto::PeekType(data);
  if (type == proto::MessageType::kHello && !s->active) {
    HandleHello(s, data);
  } else if (type == proto::MessageType::kCommandPacket && s->active) {
    HandleCommands(s, data, now_ms);
  } else if (type == proto::MessageType::kClientChat && s->active) {
    proto::ClientChat chat;
    if (!proto::Decode(data, &chat).ok()) {
      ChargeInvalid(s, now_ms, proto::KickReason::kInvalidInput);
      return;
    }
    if (AllowChat(s, now_ms)) {
      shared_->notices.Push(WorkerNotice{WorkerNotice::Kind::kChat, s->player, chat.text});
    }
  } else {
    // Unknown type, a client-bound type, or a message out of order (commands before Hello).
    ChargeInvalid(s, now_ms, proto::KickReason::kInvalidInput);
    if (!s->active && !s->closing) Kick(s, proto::KickReason::kInvalidInput, "expected Hello");
  }
}

bool Worker::AllowChat(Session* s, uint64_t now_ms) {
  if (now_ms >= s->chat_silent_until_ms && !s->chat_lines.Record(now_ms)) return true;
  shared_->stats->chat_dropped.fetch_add(1, std::memory_order_relaxed);
  if (now_ms >= s->chat_silent_until_ms) {  // this line starts the silence: say so, once
    s->chat_silent_until_ms = now_ms + kChatSilenceMs;
    proto::ChatEvent notice;  // from the server itself
    notice.text = "flood protection: you can't talk for " + std::to_string(kChatSilenceMs / 1000) + " seconds";
    std::vector<uint8_t> bytes;
    if (proto::Encode(notice, &bytes).ok()) SendReliable(s->peer, bytes);
  }
  return false;
}

void Worker::HandleHello(Session* s, std::span<const uint8_t> data) {
  proto::Hello hello;
  const bool decoded = proto::Decode(data, &hello).ok();
  auto it = decoded ? expected_.find(hello.player_id) : expected_.end();
  if (!decoded || it == expected_.end() || it->second.ticket != hello.session_ticket) {
    shared_->stats->invalid_packets.fetch_add(1, std::memory_order_relaxed);
    proto::Refuse refuse;
    refuse.reason = proto::RefuseReason::kBadTicket;
    refuse.text = "unknown player or ticket: join through the lobby";
    std::vector<uint8_t> bytes;
    if (proto::Encode(refuse, &bytes).ok()) SendReliable(s->peer, bytes);
    enet_peer_disconnect_later(s->peer, 0);
    s->closing = true;
    return;
  }
  s->active = true;
  s->player = hello.player_id;
  s->validator.emplace(it->second.last_applied_sequence, core::SteadyMs());
  player_conn_[s->player] = s;
  proto::Welcome welcome;
  welcome.player_id = hello.player_id;
  welcome.server_tick = static_cast<uint32_t>(std::max(0, shared_->tick));
  welcome.last_applied_sequence = it->second.last_applied_sequence;
  expected_.erase(it);
  std::vector<uint8_t> bytes;
  if (proto::Encode(welcome, &bytes).ok()) SendReliable(s->peer, bytes);
}

void Worker::HandleCommands(Session* s, std::span<const uint8_t> data, uint64_t now_ms) {
  proto::CommandPacket packet;
  if (!proto::Decode(data, &packet).ok()) {
    ChargeInvalid(s, now_ms, proto::KickReason::kInvalidInput);
    return;
  }
  if (!s->requested) requesters_.push_back(s);
  s->requested = true;
  s->ack_snapshot_id =
      packet.ack_snapshot_id == 0 ? 0 : std::max(s->ack_snapshot_id, packet.ack_snapshot_id);
  executor_.CountRequest();
  bool rejected = false, speed = false;
  for (int i = packet.count - 1; i >= 0; --i) {  // oldest first
    const proto::CommandCheck check = s->validator->Check(packet.cmds[i], now_ms);
    if (check.verdict == proto::CommandVerdict::kAccept) {
      commands_.push_back(PendingCommand{s, ToGameCmd(packet.cmds[i])});
    } else if (check.verdict == proto::CommandVerdict::kReject) {
      rejected = true;
      speed = speed || check.reason == proto::CommandReject::kSpeedHack ||
              check.reason == proto::CommandReject::kTooManyCommands;
    }
  }
  if (rejected) ChargeInvalid(s, now_ms, speed ? proto::KickReason::kSpeedHack : proto::KickReason::kInvalidInput);
}

void Worker::ChargeInvalid(Session* s, uint64_t now_ms, proto::KickReason reason) {
  shared_->stats->invalid_packets.fetch_add(1, std::memory_order_relaxed);
  if (s->closing) return;
  if (s->invalid.Record(now_ms)) {
    Kick(s, reason, reason == proto::KickReason::kSpeedHack ? "too many commands (speed hack)"
                                                            : "too many invalid packets");
  }
}

void Worker::Kick(Session* s, proto::KickReason reason, const std::string& text) {
  proto::Kick kick;
  kick.reason = reason;
  kick.text = text;
  std::vector<uint8_t> bytes;
  if (proto::Encode(kick, &bytes).ok()) SendReliable(s->peer, bytes);
  enet_peer_disconnect_later(s->peer, 0);
  s->closing = true;
  if (reason != proto::KickReason::kServerShutdown) {
    shared_->stats->kicked.fetch_add(1, std::memory_order_relaxed);
    spdlog::info("worker {}: kicked player {} ({})", index_, s->player, text);
  }
  Leave(s);
}

void Worker::DropPlayer(game::EntityId player, uint32_t rejoin_ip, uint16_t rejoin_port) {
  expected_.erase(player);
  auto conn = player_conn_.find(player);
  if (conn == player_conn_.end()) return;
  Session* s = conn->second;
  player_conn_.erase(conn);
  s->active = false;  // so Kick's Leave sends no notice: the master applied the leave already
  s->requested = false;
  if (ntohl(s->peer->address.host) == rejoin_ip && s->peer->address.port == rejoin_port) {
    // The client dropped without a disconnect and came back on the same port. Anything sent to
    // the old peer now (a Kick, a disconnect, a resend) would reach the new session's ENet peer
    // at that address, whose fresh host reuses the same peer slot and session ids, and break it.
    // So the old peer is reset, which sends nothing, and its session forgotten.
    ENetPeer* peer = s->peer;
    RetireSession(s);
    enet_peer_reset(peer);
    return;
  }
  Kick(s, proto::KickReason::kDuplicateLogin, "the same identity joined again");
}

void Worker::RetireSession(Session* s) {
  s->peer->data = nullptr;
  auto it = sessions_.find(s->conn_id);
  AS_CHECK(it != sessions_.end(), "Worker::RetireSession: the session is not this worker's");
  retired_.push_back(std::move(it->second));
  sessions_.erase(it);
}

void Worker::Leave(Session* s) {
  if (!s->active) return;
  s->active = false;
  s->requested = false;
  player_conn_.erase(s->player);
  shared_->notices.Push(WorkerNotice{WorkerNotice::Kind::kLeave, s->player, {}});
}

void Worker::Expire(uint64_t now_ms) {
  for (auto it = expected_.begin(); it != expected_.end();) {
    if (now_ms > it->second.deadline_ms) {
      shared_->notices.Push(WorkerNotice{WorkerNotice::Kind::kLeave, it->first, {}});
      it = expected_.erase(it);
    } else {
      ++it;
    }
  }
  for (auto& [id, s] : sessions_) {
    if (!s->active && !s->closing && now_ms > s->connected_ms + kHelloTimeoutMs) {
      enet_peer_disconnect(s->peer, 0);
      s->closing = true;
    }
  }
}

// ---- Request phase: execute ------------------------------------------------------------------

void Worker::RouteCommands() {
  exec_batch_.clear();
  const LocalityAssignment* locality = shared_->locality;
  const size_t threads = static_cast<size_t>(shared_->options->threads);
  for (const PendingCommand& pc : commands_) {
    if (!pc.session->active) continue;  // left, dropped or kicked meanwhile
    const game::EntityId player = pc.session->player;
    // A player's commands all arrive here, so they reach their thread in order.
    const int to = locality != nullptr ? locality->ThreadOf(player) : -1;
    if (to < 0 || to == index_) {
      exec_batch_.push_back(PlayerCommand{player, pc.cmd});
    } else {
      shared_->routed[static_cast<size_t>(index_) * threads + static_cast<size_t>(to)].push_back(
          PlayerCommand{player, pc.cmd});
    }
  }
  commands_.clear();
}

void Worker::ExecuteRoutedRequests(PhaseClock* clock) {
  exec_batch_.clear();
  const size_t threads = static_cast<size_t>(shared_->options->threads);
  for (size_t from = 0; from < threads; ++from) {
    if (from == static_cast<size_t>(index_)) continue;
    std::vector<PlayerCommand>& in = shared_->routed[from * threads + static_cast<size_t>(index_)];
    exec_batch_.insert(exec_batch_.end(), in.begin(), in.end());
    in.clear();
  }
  executor_.CountRouted(static_cast<uint32_t>(exec_batch_.size()));
  if (!exec_batch_.empty()) executor_.ExecuteCommands(exec_batch_, clock);
}

// ---- Reply phase -----------------------------------------------------------------------------

void Worker::BuildReplies(PhaseClock* clock, const std::function<bool()>& durable) {
  clock->Switch(Phase::kReply);
  held_.clear();
  held_bytes_.clear();
  released_ = false;
  ++reply_round_;
  // The frame's events: kills go into the snapshots encoded below, chat leaves at Release.
  event_scratch_.clear();
  events_.DrainInto(&event_scratch_);
  QueueKillEvents();
  executor_.PrepareReplies();
  for (const auto& [player, s] : player_conn_) {
    shared_->ping_ms[player].store(s->peer->roundTripTime, std::memory_order_relaxed);
  }
  // In the order the requests arrived: the player whose command waited longest for the frame
  // gets the first snapshot, so the wait and the place in the reply phase even out instead of
  // adding up (a fixed order let a player's phase and place add up frame after frame).
  size_t built = 0;
  for (size_t i = 0; i < requesters_.size(); ++i) {
    Session* const s = requesters_[i];
    if (!s->active || !s->requested) continue;  // left, dropped or kicked after its request
    s->requested = false;
    const game::EntityId player = s->player;
    if (i + 1 < requesters_.size() && requesters_[i + 1]->active) {
      requesters_[i + 1]->encoder.PrefetchBaseline(requesters_[i + 1]->ack_snapshot_id);
    }
    const core::Status st = executor_.EncodeSnapshot(player, s->ack_snapshot_id, &s->encoder, &encoded_);
    if (!st.ok()) {
      spdlog::warn("worker {}: snapshot for player {} not encoded: {}", index_, player,
                   st.ToString());
      continue;
    }
    if (released_) {
      SendFrameChat(s);
      SendSnapshot(s->peer, encoded_.bytes);
      if (++sent_ % kFlushEvery == 0) FlushHost();
      continue;
    }
    held_.push_back({s, held_bytes_.size(), encoded_.bytes.size()});
    held_bytes_.insert(held_bytes_.end(), encoded_.bytes.begin(), encoded_.bytes.end());
    if (++built % kDurableCheckEvery == 0 && durable()) Release();
  }
  requesters_.clear();
}

void Worker::QueueKillEvents() {
  const auto is_kill = [](const FrameEvent& e) { return !e.is_chat(); };  // chat: at Release
  if (std::none_of(event_scratch_.begin(), event_scratch_.end(), is_kill)) return;
  const float radius = shared_->options->interest_radius;
  uint64_t queued = 0, dropped = 0;
  // Players outside, events inside: each player's position is read once, and each encoder
  // still queues the frame's kills in their order.
  for (const auto& [player, s] : player_conn_) {
    const core::Vec3 origin = world_->Get(player).origin;
    const uint64_t dropped_before = s->encoder.events_dropped();
    for (const FrameEvent& e : event_scratch_) {
      if (!is_kill(e) || !EventReaches(e, player, origin, radius)) continue;
      const core::Status st = s->encoder.QueueEvent(e.kill);
      AS_CHECK(st.ok(), "Worker: the master sent an invalid kill event");
      ++queued;
    }
    dropped += s->encoder.events_dropped() - dropped_before;
  }
  ThreadStats& ts = shared_->stats->thread(index_);
  if (queued != 0) AddRelaxed(ts.kill_events, queued);
  if (dropped != 0) AddRelaxed(ts.kill_events_dropped, dropped);
}

void Worker::Release() {
  released_ = true;
  sent_ = held_.size();
  frame_chat_.clear();
  for (const FrameEvent& e : event_scratch_) {
    if (e.is_chat()) frame_chat_.emplace_back(e.bytes);
  }
  for (const HeldReply& r : held_) {
    SendFrameChat(r.session);
    SendSnapshot(r.session->peer, std::span<const uint8_t>(held_bytes_).subspan(r.offset, r.size));
  }
  FlushHost();
}

void Worker::FlushHost() {
  proto::SocketBatchScope batch;  // the flush's datagrams leave in sendmmsg calls
  enet_host_flush(host_);
}

void Worker::SendFrameChat(Session* s) {
  if (s->chat_round == reply_round_) return;
  s->chat_round = reply_round_;
  for (SharedReliable& chat : frame_chat_) chat.SendTo(s->peer);
}

void Worker::SendReplies(PhaseClock* clock) {
  clock->Switch(Phase::kReply);
  if (!released_) Release();
  for (const auto& [player, s] : player_conn_) SendFrameChat(s);  // those without a snapshot
  FlushHost();
  frame_chat_.clear();  // ENet holds a reference to every packet a peer took
  executor_.CountReplies(sent_);
  held_.clear();
  retired_.clear();  // no queued command, requester or held reply points at them any more
  released_ = false;
}

void Worker::DropReplies() {
  AS_CHECK(!released_, "Worker::DropReplies: replies already left for a durable frame");
  held_.clear();
  retired_.clear();
  // The frame's chat is not sent either. Its kills sit in encoders' queues, but the server
  // stops after a durability failure (Server::Fail), so no snapshot carries them.
  event_scratch_.clear();
}

void Worker::Shutdown() {
  for (auto& [id, s] : sessions_) {
    if (!s->closing) Kick(s.get(), proto::KickReason::kServerShutdown, "server shutting down");
  }
  const uint64_t until = core::SteadyMs() + 100;
  ENetEvent ev;
  while (core::SteadyMs() < until && !sessions_.empty()) {
    if (enet_host_service(host_, &ev, 5) > 0) {
      if (ev.type == ENET_EVENT_TYPE_DISCONNECT) {
        if (ev.peer->data != nullptr) RetireSession(static_cast<Session*>(ev.peer->data));
      } else if (ev.type == ENET_EVENT_TYPE_RECEIVE) {
        enet_packet_destroy(ev.packet);
      }
    }
  }
  enet_host_flush(host_);
}

}  // namespace sv
