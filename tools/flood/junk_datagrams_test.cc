// The flood tool's junk generators: every kind has its promised size and shape.
#include <catch2/catch.hpp>

#include <enet/protocol.h>

#include "tools/flood/junk_datagrams.h"

TEST_CASE("junk kinds have their names and promised shapes") {
  std::mt19937_64 rng(7);
  std::vector<uint8_t> d;
  for (int k = 0; k < flood::kJunkKindCount; ++k) {
    const auto kind = static_cast<flood::JunkKind>(k);
    REQUIRE(flood::ParseJunkKind(flood::JunkKindName(kind)) == kind);
  }
  CHECK(!flood::ParseJunkKind("bogus"));
  for (int i = 0; i < 2000; ++i) {
    flood::MakeJunk(flood::JunkKind::kRandom, rng, &d);
    CHECK((d.size() >= 1 && d.size() <= 1400));
    flood::MakeJunk(flood::JunkKind::kOversize, rng, &d);
    CHECK((d.size() > 1400 && d.size() <= flood::kMaxJunkBytes));
    flood::MakeJunk(flood::JunkKind::kTruncated, rng, &d);
    CHECK((d.size() >= 1 && d.size() < 64));  // cut from at most 64 bytes
    flood::MakeJunk(flood::JunkKind::kConnectionless, rng, &d);
    CHECK((d.size() > 4 && d[0] == 0xFF && d[3] == 0xFF));
  }
  flood::MakeJunk(flood::JunkKind::kEnetConnect, rng, &d);
  REQUIRE(d.size() == flood::kEnetConnectBytes);
  CHECK(((d[0] << 8 | d[1]) & 0x0FFF) == ENET_PROTOCOL_MAXIMUM_PEER_ID);
  CHECK((d[4] & ENET_PROTOCOL_COMMAND_MASK) == ENET_PROTOCOL_COMMAND_CONNECT);
  CHECK(!flood::IsVerifyConnect(d.data(), d.size()));
  d[4] = static_cast<uint8_t>(int{ENET_PROTOCOL_COMMAND_VERIFY_CONNECT} | int{ENET_PROTOCOL_COMMAND_FLAG_ACKNOWLEDGE});
  CHECK(flood::IsVerifyConnect(d.data(), d.size()));
}
