// Tests for the connectionless getchallenge / challenge / status text codec.
#include "server/protocol/connectionless.h"

#include <catch2/catch.hpp>
#include <string>

namespace proto {
namespace {

std::vector<uint8_t> Raw(const std::string& text, bool prefix = true) {
  const std::string full = (prefix ? std::string(4, '\xFF') : std::string()) + text;
  std::vector<uint8_t> v(full.size());
  for (size_t i = 0; i < full.size(); ++i) v[i] = static_cast<uint8_t>(full[i]);
  return v;
}

ServerStatus SampleStatus() {
  ServerStatus s;
  s.hostname = "Aftershock test server";
  s.map = "dm_arena";
  s.players = 3;
  s.max_players = 512;
  s.fraglimit = 30;
  s.uptime_s = 86400;
  s.protocol_version = 1;
  s.tick_rate_hz = 60;
  s.player_list = {{12, 45, "Ranger"}, {-2, 0, "a b c"}, {0, 9999, "x"}};
  return s;
}

TEST_CASE("requests round-trip and tolerate one trailing newline", "[connectionless]") {
  ConnectionlessRequest r;
  REQUIRE(ParseRequest(EncodeRequest(ConnectionlessRequest::kGetChallenge), &r).ok());
  CHECK(r == ConnectionlessRequest::kGetChallenge);
  REQUIRE(ParseRequest(EncodeRequest(ConnectionlessRequest::kStatus), &r).ok());
  CHECK(r == ConnectionlessRequest::kStatus);
  REQUIRE(ParseRequest(Raw("status\n"), &r).ok());
  CHECK(r == ConnectionlessRequest::kStatus);
  CHECK(EncodeRequest(ConnectionlessRequest::kStatus) == Raw("status"));
}

TEST_CASE("bad requests are rejected", "[connectionless]") {
  ConnectionlessRequest r;
  CHECK_FALSE(ParseRequest(Raw("status", false), &r).ok());
  CHECK_FALSE(ParseRequest(Raw("status\n\n"), &r).ok());
  CHECK_FALSE(ParseRequest(Raw("STATUS"), &r).ok());
  CHECK_FALSE(ParseRequest(Raw("getchallenge x"), &r).ok());
  CHECK_FALSE(ParseRequest(Raw(""), &r).ok());
  CHECK_FALSE(ParseRequest(Raw(std::string(2000, 's')), &r).ok());
  CHECK_FALSE(IsConnectionless(std::vector<uint8_t>{0xFF, 0xFF, 0xFF}));
}

TEST_CASE("challenge replies round-trip and reject malformed numbers", "[connectionless]") {
  for (uint32_t c : {0u, 1u, 123456789u, 4294967295u}) {
    uint32_t back = 7;
    REQUIRE(ParseChallengeReply(EncodeChallengeReply(c), &back).ok());
    CHECK(back == c);
  }
  CHECK(EncodeChallengeReply(42) == Raw("challenge 42\n"));
  uint32_t v;
  CHECK_FALSE(ParseChallengeReply(Raw("challenge 4294967296\n"), &v).ok());
  CHECK_FALSE(ParseChallengeReply(Raw("challenge -1\n"), &v).ok());
  CHECK_FALSE(ParseChallengeReply(Raw("challenge 042\n"), &v).ok());
  CHECK_FALSE(ParseChallengeReply(Raw("challenge 42"), &v).ok());
  CHECK_FALSE(ParseChallengeReply(Raw("challenge \n"), &v).ok());
  CHECK_FALSE(ParseChallengeReply(Raw("challenge 4x\n"), &v).ok());
}

TEST_CASE("status replies round-trip", "[connectionless]") {
  ServerStatus s = SampleStatus();
  std::vector<uint8_t> bytes;
  size_t listed = 0;
  REQUIRE(EncodeStatusReply(s, &bytes, &listed).ok());
  CHECK(listed == 3);
  std::string text(bytes.begin() + 4, bytes.end());
  CHECK(text ==
        "status\n\\hostname\\Aftershock test server\\map\\dm_arena\\players\\3\\maxplayers\\512"
        "\\fraglimit\\30\\uptime\\86400\\protocol\\1\\tickrate\\60\n"
        "12 45 \"Ranger\"\n-2 0 \"a b c\"\n0 9999 \"x\"\n");
  ServerStatus back;
  REQUIRE(ParseStatusReply(bytes, &back).ok());
  CHECK(back == s);
}

TEST_CASE("status lists only the players that fit in one datagram", "[connectionless]") {
  ServerStatus s = SampleStatus();
  s.player_list.clear();
  for (int i = 0; i < 500; ++i) {
    s.player_list.push_back(
        {i, static_cast<uint32_t>(i), "player_" + std::to_string(i) + "_long_name_x"});
  }
  s.players = 500;
  std::vector<uint8_t> bytes;
  size_t listed = 0;
  REQUIRE(EncodeStatusReply(s, &bytes, &listed).ok());
  CHECK(bytes.size() <= kMaxConnectionlessBytes);
  CHECK(listed > 10);
  CHECK(listed < 500);
  ServerStatus back;
  REQUIRE(ParseStatusReply(bytes, &back).ok());
  CHECK(back.players == 500);
  REQUIRE(back.player_list.size() == listed);
  CHECK(back.player_list.back() == s.player_list[listed - 1]);
}

TEST_CASE("status rejects bad fields on both sides", "[connectionless]") {
  std::vector<uint8_t> out;
  ServerStatus s = SampleStatus();
  s.hostname = "bad\\host";
  CHECK_FALSE(EncodeStatusReply(s, &out).ok());
  s = SampleStatus();
  s.map = "";
  CHECK_FALSE(EncodeStatusReply(s, &out).ok());
  s = SampleStatus();
  s.player_list[0].name = "quo\"te";
  CHECK_FALSE(EncodeStatusReply(s, &out).ok());
  s = SampleStatus();
  s.player_list[0].ping_ms = 10000;
  CHECK_FALSE(EncodeStatusReply(s, &out).ok());

  const std::string info =
      "status\n\\hostname\\h\\map\\m\\players\\0\\maxplayers\\8\\fraglimit\\0\\uptime\\5"
      "\\protocol\\1\\tickrate\\60";
  ServerStatus back;
  REQUIRE(ParseStatusReply(Raw(info + "\n"), &back).ok());
  CHECK(ParseStatusReply(Raw(info + "\\future\\x\n"), &back).ok());  // unknown key ignored
  CHECK_FALSE(ParseStatusReply(Raw(info), &back).ok());              // no final newline
  CHECK_FALSE(ParseStatusReply(Raw(info + "\\map\\again\n"), &back).ok());
  CHECK_FALSE(ParseStatusReply(Raw(info + "\\dangling\n"), &back).ok());
  CHECK_FALSE(ParseStatusReply(Raw(info + "\n1 2 noquotes\n"), &back).ok());
  CHECK_FALSE(ParseStatusReply(Raw(info + "\n1 2\n"), &back).ok());
  CHECK_FALSE(ParseStatusReply(Raw(info + "\nx 2 \"n\"\n"), &back).ok());
  CHECK_FALSE(ParseStatusReply(Raw(info + "\n40000 2 \"n\"\n"), &back).ok());
  CHECK_FALSE(ParseStatusReply(Raw(info + "\n1 2 \"\"\n"), &back).ok());
  CHECK_FALSE(ParseStatusReply(Raw(info + "\n1 2 \"\t\"\n"), &back).ok());
  std::string missing = "status\n\\hostname\\h\\map\\m\\players\\0\n";
  CHECK_FALSE(ParseStatusReply(Raw(missing), &back).ok());
}

}  // namespace
}  // namespace proto
