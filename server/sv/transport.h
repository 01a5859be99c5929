// Small ENet helpers shared by the lobby and the workers: host creation with the server's limits
// (peer count, packet size, channels) and sends on the protocol's channels. Each ENetHost is
// touched by one thread only; these helpers run on that thread.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include <enet/enet.h>

#include "server/core/status.h"

namespace sv {

// Initialises ENet once per process (thread-safe, idempotent).
core::Status InitEnet();

// Socket buffer size a server host asks for (receive and send). The kernel caps it at
// net.core.rmem_max / wmem_max.
inline constexpr int kSocketBufferBytes = 8 << 20;

// A server host bound to bind_address:port with max_peers peers (clamped to 1..4095),
// kNumChannels channels, maximumPacketSize = proto::kMaxPacketBytes and socket buffers of
// kSocketBufferBytes (as far as the kernel allows). Port 0: the system picks one (BoundPort).
core::Status CreateServerHost(const std::string& bind_address, uint16_t port, size_t max_peers,
                              ENetHost** out);
// The UDP port `host`'s socket is bound to (host order).
uint16_t BoundPort(ENetHost* host);

// Reliable, on the control channel.
void SendReliable(ENetPeer* peer, std::span<const uint8_t> bytes);
// One reliable control-channel packet sent to any number of peers: ENet reference-counts it, so
// the bytes are copied once however many receive them. Created on the first SendTo; freed at
// destruction if no peer took it (ENet frees it after the last peer sent it).
class SharedReliable {
 public:
  explicit SharedReliable(std::span<const uint8_t> bytes) : bytes_(bytes) {}
  ~SharedReliable();
  SharedReliable(const SharedReliable&) = delete;
  SharedReliable& operator=(const SharedReliable&) = delete;
  void SendTo(ENetPeer* peer);

 private:
  std::span<const uint8_t> bytes_;
  ENetPacket* packet_ = nullptr;
};

// Unreliable sequenced, on the snapshot channel.
void SendSnapshot(ENetPeer* peer, std::span<const uint8_t> bytes);

}  // namespace sv
