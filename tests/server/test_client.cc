// TestClient: join sequence, commands, snapshot decoding.
#include "tests/server/test_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>

#include "server/core/steady_clock.h"
#include "server/protocol/enet_pool.h"

namespace svtest {

sockaddr_in Loopback(uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return a;
}

namespace {

void Send(ENetPeer* peer, const std::vector<uint8_t>& bytes, uint8_t channel, bool reliable) {
  ENetPacket* p = enet_packet_create(bytes.data(), bytes.size(),
                                     reliable ? ENET_PACKET_FLAG_RELIABLE
                                              : ENET_PACKET_FLAG_UNSEQUENCED);
  if (enet_peer_send(peer, channel, p) != 0) enet_packet_destroy(p);
}

}  // namespace

core::Status Connectionless(uint16_t port, const std::vector<uint8_t>& request, int timeout_ms,
                            std::vector<uint8_t>* reply, const std::string& source_address) {
  const int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
  if (fd < 0) return core::Status::IoError("socket");
  if (!source_address.empty()) {
    sockaddr_in from{};
    from.sin_family = AF_INET;
    ::inet_pton(AF_INET, source_address.c_str(), &from.sin_addr);
    if (::bind(fd, reinterpret_cast<const sockaddr*>(&from), sizeof from) != 0) {
      ::close(fd);
      return core::Status::IoError("bind " + source_address);
    }
  }
  const sockaddr_in to = Loopback(port);
  ::sendto(fd, request.data(), request.size(), 0, reinterpret_cast<const sockaddr*>(&to), sizeof to);
  pollfd pfd{fd, POLLIN, 0};
  core::Status s = core::Status::IoError("no connectionless reply");
  if (::poll(&pfd, 1, timeout_ms) == 1) {
    reply->resize(2048);
    const ssize_t n = ::recv(fd, reply->data(), reply->size(), 0);
    if (n > 0) {
      reply->resize(static_cast<size_t>(n));
      s = core::Status::OK();
    }
  }
  ::close(fd);
  return s;
}

core::Status GetChallenge(uint16_t port, uint32_t* challenge, const std::string& source_address) {
  std::vector<uint8_t> reply;
  core::Status s = Connectionless(
      port, proto::EncodeRequest(proto::ConnectionlessRequest::kGetChallenge), 2000, &reply,
      source_address);
  if (!s.ok()) return s;
  return proto::ParseChallengeReply(reply, challenge);
}

void SendRawUdp(uint16_t port, const std::vector<uint8_t>& bytes) {
  const int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
  if (fd < 0) return;
  const sockaddr_in to = Loopback(port);
  ::sendto(fd, bytes.data(), bytes.size(), 0, reinterpret_cast<const sockaddr*>(&to), sizeof to);
  ::close(fd);
}

TestClient::TestClient(const std::string& source_address, uint16_t source_port)
    : source_address_(source_address) {
  (void)proto::InitializeEnet();
  ENetAddress bind{};
  bind.host = ENET_HOST_ANY;
  if (!source_address.empty()) enet_address_set_host_ip(&bind, source_address.c_str());
  bind.port = source_port;
  const bool bound = !source_address.empty() || source_port != 0;
  host_ = enet_host_create(bound ? &bind : nullptr, 2, proto::kNumChannels, 0, 0);
}

uint16_t TestClient::local_port() const {
  if (host_ == nullptr) return 0;
  ENetAddress addr{};
  return enet_socket_get_address(host_->socket, &addr) == 0 ? addr.port : 0;
}

void TestClient::Abandon() {
  if (host_ != nullptr) enet_host_destroy(host_);  // resets its peers: nothing is sent
  host_ = nullptr;
  worker_peer_ = nullptr;
  disconnected_ = true;
}

TestClient::~TestClient() {
  if (worker_peer_ != nullptr && !disconnected_) {
    enet_peer_disconnect_now(worker_peer_, 0);
  }
  if (host_ != nullptr) enet_host_destroy(host_);
}

core::Status TestClient::WaitFor(ENetHost* host, int timeout_ms, ENetEvent* ev) {
  const uint64_t until = core::SteadyMs() + static_cast<uint64_t>(timeout_ms);
  while (core::SteadyMs() < until) {
    if (enet_host_service(host, ev, 5) > 0) {
      if (ev->type == ENET_EVENT_TYPE_RECEIVE || ev->type == ENET_EVENT_TYPE_CONNECT ||
          ev->type == ENET_EVENT_TYPE_DISCONNECT) {
        return core::Status::OK();
      }
    }
  }
  return core::Status::IoError("timed out");
}

core::Status TestClient::Join(const JoinParams& params, int timeout_ms) {
  if (host_ == nullptr) return core::Status::IoError("no ENet host");
  uint32_t challenge = 0;
  if (params.challenge) {
    challenge = *params.challenge;
  } else {
    core::Status s = GetChallenge(params.lobby_port, &challenge, source_address_);
    if (!s.ok()) return s;
  }
  ENetAddress addr;
  enet_address_set_host_ip(&addr, "127.0.0.1");
  addr.port = params.lobby_port;
  ENetPeer* lobby = enet_host_connect(host_, &addr, proto::kNumChannels, 0);
  ENetEvent ev;
  if (!WaitFor(host_, timeout_ms, &ev).ok() || ev.type != ENET_EVENT_TYPE_CONNECT) {
    return core::Status::IoError("lobby connect failed");
  }
  proto::JoinRequest req;
  req.protocol_version = params.protocol_version;
  req.challenge = challenge;
  req.name = params.name;
  req.secret_token = params.token;
  std::vector<uint8_t> bytes;
  core::Status s = proto::Encode(req, &bytes);
  if (!s.ok()) return s;
  Send(lobby, bytes, proto::kChannelControl, true);
  proto::JoinAccept accept;
  for (;;) {
    if (!WaitFor(host_, timeout_ms, &ev).ok()) return core::Status::IoError("no join answer");
    if (ev.type == ENET_EVENT_TYPE_DISCONNECT) return core::Status::IoError("lobby disconnected");
    if (ev.type != ENET_EVENT_TYPE_RECEIVE) continue;
    const std::span<const uint8_t> data(ev.packet->data, ev.packet->dataLength);
    proto::JoinRefuse refuse;
    const bool is_accept = proto::Decode(data, &accept).ok();
    const bool is_refuse = !is_accept && proto::Decode(data, &refuse).ok();
    enet_packet_destroy(ev.packet);
    if (is_refuse) {
      refuse_reason_ = refuse.reason;
      enet_peer_reset(lobby);
      return core::Status::Refused(refuse.text);
    }
    if (is_accept) break;
    return core::Status::Corruption("unexpected lobby message");
  }
  enet_peer_disconnect(lobby, 0);
  addr.port = params.worker_port != 0 ? params.worker_port : accept.worker_port;
  worker_peer_ = enet_host_connect(host_, &addr, proto::kNumChannels, 0);
  for (;;) {
    if (!WaitFor(host_, timeout_ms, &ev).ok()) return core::Status::IoError("worker connect failed");
    if (ev.type == ENET_EVENT_TYPE_CONNECT && ev.peer == worker_peer_) break;
    if (ev.type == ENET_EVENT_TYPE_RECEIVE) enet_packet_destroy(ev.packet);
  }
  proto::Hello hello;
  hello.session_ticket = accept.session_ticket;
  hello.player_id = accept.player_id;
  s = proto::Encode(hello, &bytes);
  if (!s.ok()) return s;
  Send(worker_peer_, bytes, proto::kChannelControl, true);
  for (;;) {
    if (!WaitFor(host_, timeout_ms, &ev).ok()) return core::Status::IoError("no Welcome");
    if (ev.type == ENET_EVENT_TYPE_DISCONNECT && ev.peer == worker_peer_) {
      disconnected_ = true;
      return core::Status::IoError("worker disconnected");
    }
    if (ev.type != ENET_EVENT_TYPE_RECEIVE) continue;
    proto::Welcome welcome;
    const bool ok = proto::Decode({ev.packet->data, ev.packet->dataLength}, &welcome).ok();
    enet_packet_destroy(ev.packet);
    if (ok) {
      player_id_ = welcome.player_id;
      sequence_ = welcome.last_applied_sequence;
      last_applied_ = welcome.last_applied_sequence;
      return core::Status::OK();
    }
  }
}

void TestClient::SendCommand(int16_t forward, int16_t side, float yaw, uint8_t buttons,
                             uint8_t duration_ms) {
  if (!connected()) return;
  proto::UserCmd cmd;
  cmd.sequence = ++sequence_;
  cmd.duration_ms = duration_ms;
  cmd.view_angles = {0, yaw, 0};
  cmd.forward_move = forward;
  cmd.side_move = side;
  cmd.buttons = buttons;
  history_.push_back(cmd);
  if (history_.size() > proto::kMaxCommandsPerPacket) history_.erase(history_.begin());
  proto::CommandPacket packet;
  packet.ack_snapshot_id = decoder_.ack_id();
  packet.count = static_cast<uint8_t>(history_.size());
  for (size_t i = 0; i < history_.size(); ++i) packet.cmds[i] = history_[history_.size() - 1 - i];
  std::vector<uint8_t> bytes;
  if (proto::Encode(packet, &bytes).ok()) {
    Send(worker_peer_, bytes, proto::kChannelCommand, false);
  }
  enet_host_flush(host_);
}

void TestClient::SendRaw(const std::vector<uint8_t>& bytes, uint8_t channel, bool reliable) {
  if (!connected()) return;
  Send(worker_peer_, bytes, channel, reliable);
  enet_host_flush(host_);
}

void TestClient::Service(int timeout_ms) {
  ENetEvent ev;
  int r = enet_host_service(host_, &ev, static_cast<enet_uint32>(timeout_ms));
  while (r > 0) {
    if (ev.type == ENET_EVENT_TYPE_DISCONNECT && ev.peer == worker_peer_) disconnected_ = true;
    if (ev.type == ENET_EVENT_TYPE_RECEIVE) {
      const std::span<const uint8_t> data(ev.packet->data, ev.packet->dataLength);
      const std::optional<proto::MessageType> type = proto::PeekType(data);
      if (type == proto::MessageType::kSnapshot) {
        if (decoder_.Decode(data, &snapshot_).ok()) {
          ++snapshots_;
          last_applied_ = std::max(last_applied_, snapshot_.last_applied_sequence);
          kills_.insert(kills_.end(), snapshot_.events.begin(), snapshot_.events.end());
        } else {
          ++snapshot_errors_;
        }
      } else if (type == proto::MessageType::kKick) {
        proto::Kick k;
        if (proto::Decode(data, &k).ok()) kick_ = k;
      } else if (type.has_value()) {
        ++events_;
      }
      enet_packet_destroy(ev.packet);
    }
    r = enet_host_check_events(host_, &ev);
  }
}

void TestClient::Disconnect() {
  if (worker_peer_ != nullptr && !disconnected_) {
    enet_peer_disconnect(worker_peer_, 0);
    enet_host_flush(host_);
    disconnected_ = true;
  }
}

}  // namespace svtest
