// DatagramShape: what a raw UDP datagram at a server port can be, judged from its bytes alone
// before ENet parses it: a connectionless request, an ENet CONNECT, an ENet datagram for a peer
// slot, or junk that no ENet client or Aftershock client ever sends (and why). The cheap first
// step of the server's junk filter (server/sv/junk_filter.h). Pure; thread-safe.
//
// ENet 1.3.17's wire format (enet/protocol.h), big-endian: a 2-byte peer word (peer id in bits
// 0..11, session in 12..13, COMPRESSED flag 14, SENT_TIME flag 15), the 2-byte sent time if
// flagged, then commands, each opening with a 4-byte header whose first byte's low nibble is
// the command number (1..12). A CONNECT travels alone, to peer id 0xFFF, 48 bytes long.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace proto {

enum class DatagramKind : uint8_t {
  kConnectionless,  // starts FF FF FF FF (docs/protocol.md, section 3)
  kConnect,         // a well-formed ENet CONNECT: connect_id and channel_count are set
  kPeer,            // an ENet datagram for peer slot peer_id (whether that slot is live is the
                    // caller's question)
  kShort,           // junk: shorter than an ENet header and one command
  kOversize,        // junk: longer than max_bytes (the hosts' MTU: no ENet peer sends more)
  kBadHeader,       // junk: compressed (our hosts never compress) or no valid first command
  kBadConnect,      // junk: addressed to peer id 0xFFF but not a well-formed CONNECT
};

struct DatagramShape {
  DatagramKind kind = DatagramKind::kShort;
  uint16_t peer_id = 0;       // kPeer
  uint32_t connect_id = 0;    // kConnect
  uint32_t channel_count = 0; // kConnect, 1..255
};

// Smallest datagram ENet sends: a 2-byte header and a 4-byte PING.
inline constexpr size_t kMinEnetDatagramBytes = 6;
// Bytes of a CONNECT command (ENetProtocolConnect).
inline constexpr size_t kEnetConnectCommandBytes = 48;

DatagramShape ClassifyDatagram(std::span<const uint8_t> datagram, size_t max_bytes);

// True for the junk kinds.
inline bool IsJunk(DatagramKind k) {
  return k == DatagramKind::kShort || k == DatagramKind::kOversize ||
         k == DatagramKind::kBadHeader || k == DatagramKind::kBadConnect;
}

}  // namespace proto
