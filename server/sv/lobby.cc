// Lobby: connectionless queries, join validation, and the hand-off to the master.
#include "server/sv/lobby.h"

#include <arpa/inet.h>

#include <random>

#include <spdlog/spdlog.h>

#include "server/core/steady_clock.h"
#include "server/protocol/messages.h"
#include "server/sv/transport.h"

namespace sv {

namespace {

constexpr uint64_t kJoinTimeoutMs = 5000;  // a connection must send its JoinRequest by then
constexpr uint64_t kLeaveTimeoutMs = 5000;  // an accepted client must leave the lobby by then
// How long the loop waits for traffic. With a connection open, the master's join decisions
// are applied within kBusyWaitMs. With none, nothing but a datagram (which ends the wait at
// once) can need the lobby; a short wait there only cost a walk over every ENet peer slot
// (max players + 64) hundreds of times a second: 2% of a core at 2,000 players.
constexpr uint32_t kBusyWaitMs = 2;
constexpr uint32_t kIdleWaitMs = 20;

uint64_t RandomWord() {
  std::random_device rd;
  return (static_cast<uint64_t>(rd()) << 32) ^ rd();
}

}  // namespace

core::Status Lobby::Create(const std::string& bind_address, uint16_t port, size_t max_peers,
                           ServerStats* stats, const StatusBoard* board,
                           ThreadQueue<JoinTicketRequest>* to_master,
                           ThreadQueue<JoinDecision>* from_master, std::unique_ptr<Lobby>* out) {
  ENetHost* host = nullptr;
  core::Status s = CreateServerHost(bind_address, port, max_peers, &host);
  if (!s.ok()) return core::Status::IoError("lobby: " + s.message());
  out->reset(new Lobby(host, stats, board, to_master, from_master));
  return core::Status::OK();
}

Lobby::Lobby(ENetHost* host, ServerStats* stats, const StatusBoard* board,
             ThreadQueue<JoinTicketRequest>* to_master, ThreadQueue<JoinDecision>* from_master)
    : host_(host),
      port_(BoundPort(host)),
      stats_(stats),
      board_(board),
      to_master_(to_master),
      from_master_(from_master),
      challenges_(RandomWord(), RandomWord()),
      start_ms_(core::SteadyMs()),
      junk_(host, &stats->junk, [this](ENetHost*, std::span<const uint8_t> data) {
        return AnswerConnectionless(data);
      }) {}

Lobby::~Lobby() { enet_host_destroy(host_); }

bool Lobby::AnswerConnectionless(std::span<const uint8_t> data) {
  proto::ConnectionlessRequest request;
  proto::StatusParts parts;
  if (!proto::ParseRequest(data, &request, &parts).ok()) return false;
  std::vector<uint8_t> reply;
  if (request == proto::ConnectionlessRequest::kGetChallenge) {
    const uint64_t now_s = core::SteadyMs() / 1000;
    reply = proto::EncodeChallengeReply(
        challenges_.Issue(ntohl(host_->receivedAddress.host), 0, now_s));
  } else {
    proto::ServerStatus status = board_->Get();
    status.uptime_s = (core::SteadyMs() - start_ms_) / 1000;
    if (!proto::EncodeStatusReply(status, &reply, nullptr, parts).ok()) return true;  // our fault
  }
  ENetBuffer buf;
  buf.data = reply.data();
  buf.dataLength = reply.size();
  enet_socket_send(host_->socket, &host_->receivedAddress, &buf, 1);
  return true;
}

void Lobby::Run(const std::atomic<bool>& stop) {
  while (!stop.load(std::memory_order_acquire)) {
    junk_.Drain([this](ENetEvent& ev) { HandleEvent(ev, false); },
                conns_.empty() ? kIdleWaitMs : kBusyWaitMs);
    ApplyDecisions();
    ExpireIdle(core::SteadyMs());
  }
  // Shutting down: answer what is pending, tell everyone, and let ENet deliver for a moment.
  ApplyDecisions();
  for (auto& [id, conn] : conns_) {
    if (!conn.answered) Refuse(&conn, proto::RefuseReason::kShuttingDown, "server shutting down");
  }
  const uint64_t until = core::SteadyMs() + 100;
  ENetEvent ev;
  while (core::SteadyMs() < until && !conns_.empty()) {
    if (enet_host_service(host_, &ev, 5) > 0) HandleEvent(ev, true);
  }
  enet_host_flush(host_);
}

void Lobby::HandleEvent(const ENetEvent& ev, bool stopping) {
  switch (ev.type) {
    case ENET_EVENT_TYPE_CONNECT: {
      const uint64_t id = next_conn_++;
      ev.peer->data = reinterpret_cast<void*>(id);
      conns_[id] = Conn{ev.peer, core::SteadyMs(), false, false};
      if (stopping) Refuse(&conns_[id], proto::RefuseReason::kShuttingDown, "server shutting down");
      break;
    }
    case ENET_EVENT_TYPE_DISCONNECT: {
      conns_.erase(reinterpret_cast<uint64_t>(ev.peer->data));
      ev.peer->data = nullptr;
      break;
    }
    case ENET_EVENT_TYPE_RECEIVE: {
      const uint64_t id = reinterpret_cast<uint64_t>(ev.peer->data);
      auto it = conns_.find(id);
      if (it != conns_.end()) HandleJoinRequest(id, &it->second, ev.packet, stopping);
      enet_packet_destroy(ev.packet);
      break;
    }
    default:
      break;
  }
}

void Lobby::HandleJoinRequest(uint64_t id, Conn* conn, const ENetPacket* packet, bool stopping) {
  if (conn->asked || conn->answered) {
    // One request per connection: anything more is abuse.
    stats_->invalid_packets.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  proto::JoinRequest req;
  const core::Status s = proto::Decode({packet->data, packet->dataLength}, &req);
  if (!s.ok()) {
    stats_->invalid_packets.fetch_add(1, std::memory_order_relaxed);
    // A well-formed request with a newer/older version still parses its version field first.
    if (packet->dataLength >= 3 && packet->data[0] == static_cast<uint8_t>(proto::MessageType::kJoinRequest) &&
        (packet->data[1] | (packet->data[2] << 8)) != proto::kProtocolVersion) {
      Refuse(conn, proto::RefuseReason::kWrongProtocolVersion,
             "server speaks protocol version " + std::to_string(proto::kProtocolVersion));
    } else {
      Refuse(conn, proto::RefuseReason::kBadName, "malformed join request");
    }
    return;
  }
  if (req.protocol_version != proto::kProtocolVersion) {
    Refuse(conn, proto::RefuseReason::kWrongProtocolVersion,
           "server speaks protocol version " + std::to_string(proto::kProtocolVersion));
    return;
  }
  if (stopping) {
    Refuse(conn, proto::RefuseReason::kShuttingDown, "server shutting down");
    return;
  }
  if (!challenges_.Verify(req.challenge, ntohl(conn->peer->address.host), 0, core::SteadyMs() / 1000)) {
    Refuse(conn, proto::RefuseReason::kBadChallenge, "bad or expired challenge: ask getchallenge again");
    return;
  }
  if (!proto::ValidateName(req.name).ok()) {
    Refuse(conn, proto::RefuseReason::kBadName, "invalid player name");
    return;
  }
  conn->asked = true;
  to_master_->Push(JoinTicketRequest{id, req.name, req.secret_token,
                                     ntohl(conn->peer->address.host), conn->peer->address.port});
}

void Lobby::Send(Conn* conn, const std::vector<uint8_t>& bytes) {
  SendReliable(conn->peer, bytes);
}

void Lobby::Refuse(Conn* conn, proto::RefuseReason reason, const std::string& text) {
  proto::JoinRefuse refuse;
  refuse.reason = reason;
  refuse.text = text.substr(0, proto::kMaxReasonChars);
  std::vector<uint8_t> bytes;
  if (proto::Encode(refuse, &bytes).ok()) Send(conn, bytes);
  conn->answered = true;
  enet_peer_disconnect_later(conn->peer, 0);
  stats_->join_refusals.fetch_add(1, std::memory_order_relaxed);
}

void Lobby::ApplyDecisions() {
  decisions_.clear();
  from_master_->DrainInto(&decisions_);
  for (const JoinDecision& d : decisions_) {
    auto it = conns_.find(d.lobby_conn);
    if (it == conns_.end()) continue;  // gone; the master's worker times the ticket out
    Conn* conn = &it->second;
    if (!d.accepted) {
      Refuse(conn, d.refuse.reason, d.refuse.text);
      continue;
    }
    std::vector<uint8_t> bytes;
    if (proto::Encode(d.accept, &bytes).ok()) Send(conn, bytes);
    // The client disconnects after an accept (docs/protocol.md); disconnecting from here too
    // makes the two DISCONNECTs cross, the client then retransmits its unacknowledged one, and
    // with ENet's 2-bit session ids that late packet can close the next connection from the
    // same client host that took this peer slot. ExpireIdle disconnects clients that stay.
    conn->answered = true;
    conn->answered_ms = core::SteadyMs();
  }
}

void Lobby::ExpireIdle(uint64_t now_ms) {
  for (auto& [id, conn] : conns_) {
    if (!conn.asked && !conn.answered && now_ms > conn.connected_ms + kJoinTimeoutMs) {
      conn.answered = true;
      conn.answered_ms = now_ms;
      enet_peer_disconnect(conn.peer, 0);
    } else if (conn.answered && conn.answered_ms != 0 && now_ms > conn.answered_ms + kLeaveTimeoutMs) {
      conn.answered_ms = 0;  // once
      enet_peer_disconnect(conn.peer, 0);
    }
  }
}

}  // namespace sv
