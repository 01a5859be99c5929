// ENet host creation and sends.
#include "server/sv/transport.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "server/protocol/enet_pool.h"
#include "server/protocol/protocol_format.h"

namespace sv {

core::Status InitEnet() { return proto::InitializeEnet(); }

core::Status CreateServerHost(const std::string& bind_address, uint16_t port, size_t max_peers,
                              ENetHost** out) {
  core::Status s = InitEnet();
  if (!s.ok()) return s;
  ENetAddress addr;
  addr.port = port;
  if (bind_address.empty() || bind_address == "0.0.0.0") {
    addr.host = ENET_HOST_ANY;
  } else if (enet_address_set_host_ip(&addr, bind_address.c_str()) != 0) {
    return core::Status::InvalidArgument("bad bind address '" + bind_address + "'");
  }
  const size_t peers = std::clamp<size_t>(max_peers, 1, ENET_PROTOCOL_MAXIMUM_PEER_ID);
  errno = 0;
  ENetHost* host = enet_host_create(&addr, peers, proto::kNumChannels, 0, 0);
  if (host == nullptr) {
    // ENet keeps the failing bind's errno (its clean-up is a close and frees): "Address already in
    // use" for a taken port, "Cannot assign requested address" for an address not on this host.
    const int err = errno;
    return core::Status::IoError("cannot bind UDP " + bind_address + ":" + std::to_string(port) +
                                 (err != 0 ? std::string(": ") + std::strerror(err) : std::string(" (port in use?)")));
  }
  host->maximumPacketSize = proto::kMaxPacketBytes;
  // A worker reads its socket once per frame: a frame's worth of commands from every player it
  // serves (1,000 players at 30 Hz: about 1,000 datagrams) must fit in the kernel's queue.
  enet_socket_set_option(host->socket, ENET_SOCKOPT_RCVBUF, kSocketBufferBytes);
  enet_socket_set_option(host->socket, ENET_SOCKOPT_SNDBUF, kSocketBufferBytes);
  *out = host;
  return core::Status::OK();
}

uint16_t BoundPort(ENetHost* host) {
  ENetAddress addr{};
  if (enet_socket_get_address(host->socket, &addr) != 0) return host->address.port;
  return addr.port;
}

void SendReliable(ENetPeer* peer, std::span<const uint8_t> bytes) {
  ENetPacket* p = enet_packet_create(bytes.data(), bytes.size(), ENET_PACKET_FLAG_RELIABLE);
  if (p != nullptr && enet_peer_send(peer, proto::kChannelControl, p) != 0) enet_packet_destroy(p);
}

void SharedReliable::SendTo(ENetPeer* peer) {
  if (packet_ == nullptr) {
    packet_ = enet_packet_create(bytes_.data(), bytes_.size(), ENET_PACKET_FLAG_RELIABLE);
    if (packet_ == nullptr) return;
  }
  enet_peer_send(peer, proto::kChannelControl, packet_);  // on failure the peer took no reference
}

SharedReliable::~SharedReliable() {
  if (packet_ != nullptr && packet_->referenceCount == 0) enet_packet_destroy(packet_);
}

void SendSnapshot(ENetPeer* peer, std::span<const uint8_t> bytes) {
  ENetPacket* p = enet_packet_create(bytes.data(), bytes.size(), 0);
  if (p != nullptr && enet_peer_send(peer, proto::kChannelSnapshot, p) != 0) enet_packet_destroy(p);
}

}  // namespace sv
