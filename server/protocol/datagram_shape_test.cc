// ClassifyDatagram: each junk shape is named, and what ENet clients really send passes.
#include <catch2/catch.hpp>

#include <enet/protocol.h>

#include <vector>

#include "server/protocol/connectionless.h"
#include "server/protocol/datagram_shape.h"

namespace {

constexpr size_t kMtu = 1400;

// An ENet CONNECT (peer id 0xFFF, sent time) asking for `channels` channels.
std::vector<uint8_t> Connect(uint32_t channels, uint32_t connect_id) {
  std::vector<uint8_t> d(4 + proto::kEnetConnectCommandBytes, 0);
  d[0] = 0x8F;  // SENT_TIME | peer id 0xFFF
  d[1] = 0xFF;
  d[4] = static_cast<uint8_t>(int{ENET_PROTOCOL_COMMAND_CONNECT} | int{ENET_PROTOCOL_COMMAND_FLAG_ACKNOWLEDGE});
  d[5] = 0xFF;
  for (int i = 0; i < 4; ++i) {
    d[4 + 16 + i] = static_cast<uint8_t>(channels >> (24 - 8 * i));
    d[4 + 40 + i] = static_cast<uint8_t>(connect_id >> (24 - 8 * i));
  }
  return d;
}

proto::DatagramKind Kind(const std::vector<uint8_t>& d) { return proto::ClassifyDatagram(d, kMtu).kind; }

}  // namespace

TEST_CASE("datagram shapes: connects, peer traffic and connectionless pass") {
  const proto::DatagramShape c = proto::ClassifyDatagram(Connect(3, 0xCAFE), kMtu);
  CHECK(c.kind == proto::DatagramKind::kConnect);
  CHECK(c.channel_count == 3);
  CHECK(c.connect_id == 0xCAFE);
  // Peer 5, sent time, one SEND_UNSEQUENCED command.
  const std::vector<uint8_t> peer = {0x80, 0x05, 0x12, 0x34, 0x49, 0x02, 0x00, 0x00, 0, 1, 0, 1, 7};
  const proto::DatagramShape p = proto::ClassifyDatagram(peer, kMtu);
  CHECK(p.kind == proto::DatagramKind::kPeer);
  CHECK(p.peer_id == 5);
  CHECK(Kind(proto::EncodeRequest(proto::ConnectionlessRequest::kStatus)) ==
        proto::DatagramKind::kConnectionless);
}

TEST_CASE("datagram shapes: junk is named by what is wrong with it") {
  CHECK(Kind({}) == proto::DatagramKind::kShort);
  CHECK(Kind({0x80, 0x05, 0x00, 0x00, 0x05}) == proto::DatagramKind::kShort);
  CHECK(Kind(std::vector<uint8_t>(kMtu + 1, 0x01)) == proto::DatagramKind::kOversize);
  CHECK(Kind({0x40, 0x05, 0x05, 0x00, 0x00, 0x00}) == proto::DatagramKind::kBadHeader);  // compressed
  CHECK(Kind({0x00, 0x05, 0x00, 0x00, 0x00, 0x00}) == proto::DatagramKind::kBadHeader);  // command 0
  CHECK(Kind({0x00, 0x05, 0x0D, 0x00, 0x00, 0x00}) == proto::DatagramKind::kBadHeader);  // command 13
  CHECK(Kind({0x0F, 0xFF, 0x05, 0x00, 0x00, 0x00}) == proto::DatagramKind::kBadConnect);  // a PING to 0xFFF
  std::vector<uint8_t> cut = Connect(3, 1);
  cut.pop_back();
  CHECK(Kind(cut) == proto::DatagramKind::kBadConnect);
  CHECK(Kind(Connect(0, 1)) == proto::DatagramKind::kBadConnect);
  CHECK(Kind(Connect(256, 1)) == proto::DatagramKind::kBadConnect);
  for (auto k : {proto::DatagramKind::kShort, proto::DatagramKind::kOversize, proto::DatagramKind::kBadHeader,
                 proto::DatagramKind::kBadConnect}) {
    CHECK(proto::IsJunk(k));
  }
  CHECK(!proto::IsJunk(proto::DatagramKind::kConnect));
}
