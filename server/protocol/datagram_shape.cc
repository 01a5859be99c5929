// ClassifyDatagram: the shape checks, in the order ENet itself would fail them.
#include "server/protocol/datagram_shape.h"

#include <enet/protocol.h>

#include <cstddef>

#include "server/protocol/connectionless.h"

namespace proto {

namespace {

static_assert(sizeof(ENetProtocolConnect) == kEnetConnectCommandBytes);

constexpr uint16_t kPeerIdMask = 0x0FFF;
constexpr uint16_t kFlagCompressed = ENET_PROTOCOL_HEADER_FLAG_COMPRESSED;
constexpr uint16_t kFlagSentTime = ENET_PROTOCOL_HEADER_FLAG_SENT_TIME;

uint16_t Be16(const uint8_t* p) { return static_cast<uint16_t>((p[0] << 8) | p[1]); }
uint32_t Be32(const uint8_t* p) {
  return (static_cast<uint32_t>(p[0]) << 24) | (static_cast<uint32_t>(p[1]) << 16) |
         (static_cast<uint32_t>(p[2]) << 8) | p[3];
}

}  // namespace

DatagramShape ClassifyDatagram(std::span<const uint8_t> d, size_t max_bytes) {
  DatagramShape out;
  if (IsConnectionless(d)) {
    out.kind = DatagramKind::kConnectionless;
    return out;
  }
  if (d.size() < kMinEnetDatagramBytes) {
    out.kind = DatagramKind::kShort;
    return out;
  }
  if (d.size() > max_bytes) {
    out.kind = DatagramKind::kOversize;
    return out;
  }
  const uint16_t word = Be16(d.data());
  const size_t header = (word & kFlagSentTime) ? 4 : 2;
  const uint8_t command = d.size() >= header + 4 ? (d[header] & ENET_PROTOCOL_COMMAND_MASK) : 0;
  if ((word & kFlagCompressed) || command == ENET_PROTOCOL_COMMAND_NONE ||
      command >= ENET_PROTOCOL_COMMAND_COUNT) {
    out.kind = DatagramKind::kBadHeader;
    return out;
  }
  out.peer_id = word & kPeerIdMask;
  if (out.peer_id != ENET_PROTOCOL_MAXIMUM_PEER_ID) {
    out.kind = DatagramKind::kPeer;
    return out;
  }
  // Peer id 0xFFF: nothing but a CONNECT (ENet ignores any other command from a stranger).
  const uint8_t* c = d.data() + header;
  if (command != ENET_PROTOCOL_COMMAND_CONNECT || d.size() != header + kEnetConnectCommandBytes) {
    out.kind = DatagramKind::kBadConnect;
    return out;
  }
  out.channel_count = Be32(c + offsetof(ENetProtocolConnect, channelCount));
  out.connect_id = Be32(c + offsetof(ENetProtocolConnect, connectID));
  if (out.channel_count < ENET_PROTOCOL_MINIMUM_CHANNEL_COUNT ||
      out.channel_count > ENET_PROTOCOL_MAXIMUM_CHANNEL_COUNT) {
    out.kind = DatagramKind::kBadConnect;
    return out;
  }
  out.kind = DatagramKind::kConnect;
  return out;
}

}  // namespace proto
