// Tests for the join, input, chat and event messages: round trips, framing errors and every
// field validation rule.
#include "server/protocol/messages.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <limits>

#include "server/protocol/byte_io.h"
#include "server/protocol/protocol_test_util.h"

namespace proto {
namespace {

using testing::Rng;

template <class M>
M RoundTrip(const M& m) {
  std::vector<uint8_t> bytes;
  core::Status s = Encode(m, &bytes);
  INFO(s.ToString());
  REQUIRE(s.ok());
  M back;
  s = Decode(bytes, &back);
  INFO(s.ToString());
  REQUIRE(s.ok());
  return back;
}

// Encodes a valid message, lets `patch` damage the bytes, and returns the decode status.
template <class M, class Patch>
core::Status DecodePatched(const M& m, Patch patch) {
  std::vector<uint8_t> bytes;
  REQUIRE(Encode(m, &bytes).ok());
  patch(bytes);
  M back;
  return Decode(bytes, &back);
}

void PutFloat(std::vector<uint8_t>& b, size_t offset, float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, 4);
  for (size_t i = 0; i < 4; ++i) b[offset + i] = static_cast<uint8_t>(bits >> (8 * i));
}

CommandPacket OneCommand() {
  CommandPacket p;
  p.ack_snapshot_id = 77;
  p.count = 1;
  p.cmds[0] = UserCmd{10, 16, {-30.0f, 270.5f, 0.0f}, 400, -400, 0, kButtonAttack, 0};
  return p;
}

// Offsets inside an encoded CommandPacket's first command.
constexpr size_t kCmd0 = 6;
constexpr size_t kDurationAt = kCmd0 + 4, kPitchAt = kCmd0 + 5, kYawAt = kCmd0 + 9,
                 kRollAt = kCmd0 + 13, kForwardAt = kCmd0 + 17, kButtonsAt = kCmd0 + 23,
                 kImpulseAt = kCmd0 + 24;

TEST_CASE("every message round-trips exactly", "[messages]") {
  Rng rng(1);
  for (const testing::Codec& codec : testing::AllCodecs()) {
    INFO(codec.name);
    for (int i = 0; i < 200; ++i) {
      std::vector<uint8_t> bytes = codec.sample(rng);
      std::vector<uint8_t> again;
      core::Status s = codec.reencode(bytes, &again);
      INFO(s.ToString());
      REQUIRE(s.ok());
      REQUIRE(again == bytes);
    }
  }
}

TEST_CASE("decoded fields equal the encoded struct", "[messages]") {
  JoinRequest jr{kProtocolVersion, 0xDEADBEEF, "Player One", 0x0123456789ABCDEFULL};
  CHECK(RoundTrip(jr) == jr);
  JoinAccept ja{27501, 7, 0xFEEDFACECAFEBEEFULL, 1234, 60, 99, 123456789012ULL};
  CHECK(RoundTrip(ja) == ja);
  CommandPacket cp = OneCommand();
  cp.count = 4;
  Rng rng(7);
  for (uint32_t i = 0; i < 4; ++i) cp.cmds[i] = testing::RandomCmd(rng, 100 - i);
  CHECK(RoundTrip(cp) == cp);
  ChatEvent ce{kNoPlayer, "", "server restarting"};
  CHECK(RoundTrip(ce) == ce);
  Kick k{KickReason::kSpeedHack, "too fast"};
  CHECK(RoundTrip(k) == k);
}

TEST_CASE("a packet is rejected when truncated at any length, extended, retyped or oversize",
          "[messages]") {
  Rng rng(2);
  for (const testing::Codec& codec : testing::AllCodecs()) {
    INFO(codec.name);
    for (int i = 0; i < 20; ++i) {
      std::vector<uint8_t> bytes = codec.sample(rng);
      std::vector<uint8_t> out;
      for (size_t n = 0; n < bytes.size(); ++n) {
        REQUIRE_FALSE(codec.reencode(std::span(bytes.data(), n), &out).ok());
      }
      std::vector<uint8_t> longer = bytes;
      longer.push_back(0);
      CHECK_FALSE(codec.reencode(longer, &out).ok());
      std::vector<uint8_t> retyped = bytes;
      retyped[0] ^= 0x40;
      CHECK_FALSE(codec.reencode(retyped, &out).ok());
      std::vector<uint8_t> huge = bytes;
      huge.resize(kMaxPacketBytes + 1, 0);
      core::Status s = codec.reencode(huge, &out);
      CHECK_FALSE(s.ok());
      CHECK(s.code() == core::Status::Code::kCorruption);
    }
  }
}

TEST_CASE("PeekType names known types only", "[messages]") {
  std::vector<uint8_t> b;
  REQUIRE(Encode(OneCommand(), &b).ok());
  CHECK(PeekType(b) == MessageType::kCommandPacket);
  CHECK(PeekType(std::span<const uint8_t>()) == std::nullopt);
  uint8_t unknown[] = {0x05};
  CHECK(PeekType(unknown) == std::nullopt);
  uint8_t unknown_high[] = {0x8A};
  CHECK(PeekType(unknown_high) == std::nullopt);
}

TEST_CASE("UserCmd rejects NaN and infinite angles", "[messages][validation]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  for (size_t at : {kPitchAt, kYawAt, kRollAt}) {
    for (float bad : {nan, inf, -inf}) {
      core::Status s = DecodePatched(OneCommand(), [&](auto& b) { PutFloat(b, at, bad); });
      CHECK(s.code() == core::Status::Code::kInvalidArgument);
    }
  }
  CommandPacket p = OneCommand();
  p.cmds[0].view_angles.y = nan;
  std::vector<uint8_t> out;
  CHECK_FALSE(Encode(p, &out).ok());
}

TEST_CASE("UserCmd rejects out-of-range angles and moves", "[messages][validation]") {
  CHECK_FALSE(DecodePatched(OneCommand(), [](auto& b) { PutFloat(b, kPitchAt, 90.5f); }).ok());
  CHECK_FALSE(DecodePatched(OneCommand(), [](auto& b) { PutFloat(b, kYawAt, -361.0f); }).ok());
  CHECK_FALSE(DecodePatched(OneCommand(), [](auto& b) { PutFloat(b, kRollAt, 91.0f); }).ok());
  CHECK(DecodePatched(OneCommand(), [](auto& b) { PutFloat(b, kYawAt, -360.0f); }).ok());
  // 401 and -401 as int16 little-endian.
  CHECK_FALSE(DecodePatched(OneCommand(), [](auto& b) {
                b[kForwardAt] = 0x91;
                b[kForwardAt + 1] = 0x01;
              }).ok());
  CHECK_FALSE(DecodePatched(OneCommand(), [](auto& b) {
                b[kForwardAt] = 0x6F;
                b[kForwardAt + 1] = 0xFE;
              }).ok());
  CHECK(DecodePatched(OneCommand(), [](auto& b) {
          b[kForwardAt] = 0x70;
          b[kForwardAt + 1] = 0xFE;
        }).ok());
}

TEST_CASE("UserCmd duration must be 1..250", "[messages][validation]") {
  CHECK_FALSE(DecodePatched(OneCommand(), [](auto& b) { b[kDurationAt] = 0; }).ok());
  CHECK_FALSE(DecodePatched(OneCommand(), [](auto& b) { b[kDurationAt] = 251; }).ok());
  CHECK_FALSE(DecodePatched(OneCommand(), [](auto& b) { b[kDurationAt] = 255; }).ok());
  CHECK(DecodePatched(OneCommand(), [](auto& b) { b[kDurationAt] = 1; }).ok());
  CHECK(DecodePatched(OneCommand(), [](auto& b) { b[kDurationAt] = 250; }).ok());
}

TEST_CASE("UserCmd rejects unknown button bits and impulses", "[messages][validation]") {
  for (uint8_t bits : {4, 8, 0x80, 0xFF}) {
    CHECK_FALSE(DecodePatched(OneCommand(), [&](auto& b) { b[kButtonsAt] = bits; }).ok());
  }
  CHECK(DecodePatched(OneCommand(), [](auto& b) { b[kButtonsAt] = 3; }).ok());
  CHECK_FALSE(DecodePatched(OneCommand(), [](auto& b) { b[kImpulseAt] = kMaxImpulse + 1; }).ok());
  CHECK(DecodePatched(OneCommand(), [](auto& b) { b[kImpulseAt] = kMaxImpulse; }).ok());
}

TEST_CASE("CommandPacket count and sequence rules", "[messages][validation]") {
  CHECK_FALSE(DecodePatched(OneCommand(), [](auto& b) { b[5] = 0; }).ok());
  CHECK_FALSE(DecodePatched(OneCommand(), [](auto& b) { b[5] = 5; }).ok());
  CommandPacket p = OneCommand();
  p.count = 3;
  p.cmds[1] = p.cmds[0];
  p.cmds[2] = p.cmds[0];
  p.cmds[1].sequence = 9;
  p.cmds[2].sequence = 8;
  std::vector<uint8_t> out;
  CHECK(Encode(p, &out).ok());
  p.cmds[2].sequence = 7;  // gap
  CHECK_FALSE(Encode(p, &out).ok());
  p.cmds[2].sequence = 10;  // not descending
  CHECK_FALSE(Encode(p, &out).ok());
  CommandPacket zero = OneCommand();
  zero.cmds[0].sequence = 0;
  CHECK_FALSE(Encode(zero, &out).ok());
  CommandPacket low = p;
  low.cmds[0].sequence = 2;  // would need sequences 2, 1, 0
  low.cmds[1].sequence = 1;
  low.cmds[2].sequence = 0;
  CHECK_FALSE(Encode(low, &out).ok());
}

TEST_CASE("enums outside their range are rejected", "[messages][validation]") {
  JoinRefuse jr;
  jr.reason = RefuseReason::kBanned;
  CHECK_FALSE(DecodePatched(jr, [](auto& b) { b[1] = 0; }).ok());
  CHECK_FALSE(DecodePatched(jr, [](auto& b) { b[1] = kMaxRefuseReason + 1; }).ok());
  Kick k{KickReason::kAdmin, "bye"};
  CHECK_FALSE(DecodePatched(k, [](auto& b) { b[1] = 0; }).ok());
  CHECK_FALSE(DecodePatched(k, [](auto& b) { b[1] = kMaxKickReason + 1; }).ok());
}

TEST_CASE("text fields reject bad characters and lengths", "[messages][validation]") {
  std::vector<uint8_t> out;
  CHECK_FALSE(Encode(ClientChat{""}, &out).ok());
  CHECK_FALSE(Encode(ClientChat{std::string(kMaxChatChars + 1, 'a')}, &out).ok());
  CHECK(Encode(ClientChat{std::string(kMaxChatChars, 'a')}, &out).ok());
  CHECK_FALSE(DecodePatched(ClientChat{"hello"}, [](auto& b) { b[3] = '\n'; }).ok());
  CHECK_FALSE(DecodePatched(ClientChat{"hello"}, [](auto& b) { b[3] = 0xC3; }).ok());
  CHECK_FALSE(Encode(Kick{KickReason::kAdmin, std::string(kMaxReasonChars + 1, 'k')}, &out).ok());
  CHECK_FALSE(Encode(ChatEvent{1, std::string(kMaxNameChars + 1, 'n'), "hi"}, &out).ok());
}

TEST_CASE("ValidateName is the lobby's name policy", "[messages][validation]") {
  CHECK(ValidateName("Ranger").ok());
  CHECK(ValidateName("a b").ok());
  CHECK(ValidateName(std::string(kMaxNameChars, 'x')).ok());
  CHECK_FALSE(ValidateName("").ok());
  CHECK_FALSE(ValidateName(std::string(kMaxNameChars + 1, 'x')).ok());
  CHECK_FALSE(ValidateName(" lead").ok());
  CHECK_FALSE(ValidateName("quo\"te").ok());
  CHECK_FALSE(ValidateName("back\\slash").ok());
  CHECK_FALSE(ValidateName("tab\there").ok());
  // JoinRequest still decodes with a bad name so the lobby can refuse with kBadName.
  JoinRequest jr{kProtocolVersion, 5, " bad\"name", 9};
  JoinRequest back = RoundTrip(jr);
  CHECK(back.name == jr.name);
  jr.name = std::string(256, 'x');
  std::vector<uint8_t> out;
  CHECK_FALSE(Encode(jr, &out).ok());
}

TEST_CASE("join and hello identifiers must be usable", "[messages][validation]") {
  std::vector<uint8_t> out;
  JoinAccept ja{27501, 7, 1, 0, 60, 0, 0};
  CHECK(Encode(ja, &out).ok());
  JoinAccept bad = ja;
  bad.worker_port = 0;
  CHECK_FALSE(Encode(bad, &out).ok());
  bad = ja;
  bad.session_ticket = 0;
  CHECK_FALSE(Encode(bad, &out).ok());
  bad = ja;
  bad.tick_rate_hz = 0;
  CHECK_FALSE(Encode(bad, &out).ok());
  bad = ja;
  bad.tick_rate_hz = 1001;
  CHECK_FALSE(Encode(bad, &out).ok());
  bad = ja;
  bad.player_id = kNoPlayer;
  CHECK_FALSE(Encode(bad, &out).ok());
  CHECK_FALSE(Encode(Hello{0, 1}, &out).ok());
  CHECK_FALSE(Encode(Hello{5, kNoPlayer}, &out).ok());
  CHECK_FALSE(Encode(Welcome{kNoPlayer, 0, 0}, &out).ok());
}

TEST_CASE("wire format of CommandPacket is pinned (docs/protocol.md example)", "[messages]") {
  CommandPacket p;
  p.ack_snapshot_id = 5;
  p.count = 1;
  p.cmds[0] = UserCmd{10, 16, {0.0f, 90.0f, 0.0f}, 400, 0, 0, kButtonAttack, 0};
  std::vector<uint8_t> out;
  REQUIRE(Encode(p, &out).ok());
  const std::vector<uint8_t> expect = {0x03, 0x05, 0x00, 0x00, 0x00, 0x01, 0x0A, 0x00,
                                       0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00,
                                       0x00, 0xB4, 0x42, 0x00, 0x00, 0x00, 0x00, 0x90,
                                       0x01, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00};
  CHECK(out == expect);
}

}  // namespace
}  // namespace proto
