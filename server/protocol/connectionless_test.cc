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
  s.protocol_version = 2;
  s.tick_rate_hz = 60;
  s.player_list = {{1, 12, 3, 45, "Ranger"}, {64, -2, 0, 0, "a b c"}, {65535, 0, 99999, 9999, "x"}};
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

TEST_CASE("status takes QuakeWorld's flags argument, as server browsers send it", "[connectionless]") {
  ConnectionlessRequest r = ConnectionlessRequest::kGetChallenge;
  StatusParts parts{false, false};
  REQUIRE(ParseRequest(Raw("status 23\n"), &r, &parts).ok());  // qstat's query
  CHECK(r == ConnectionlessRequest::kStatus);
  CHECK(parts == StatusParts{true, true});
  REQUIRE(ParseRequest(Raw("status 0"), &r, &parts).ok());
  CHECK(parts == StatusParts{true, true});
  REQUIRE(ParseRequest(Raw("status 1"), &r, &parts).ok());
  CHECK(parts == StatusParts{true, false});
  REQUIRE(ParseRequest(Raw("status 2"), &r, &parts).ok());
  CHECK(parts == StatusParts{false, true});
  REQUIRE(ParseRequest(Raw("status 023"), &r, &parts).ok());
  CHECK(parts == StatusParts{true, true});
  REQUIRE(ParseRequest(Raw("status"), &r, &parts).ok());
  CHECK(parts == StatusParts{true, true});
  CHECK_FALSE(ParseRequest(Raw("status "), &r, &parts).ok());
  CHECK_FALSE(ParseRequest(Raw("status x"), &r, &parts).ok());
  CHECK_FALSE(ParseRequest(Raw("status -1"), &r, &parts).ok());
  CHECK_FALSE(ParseRequest(Raw("status 1 2"), &r, &parts).ok());
  CHECK_FALSE(ParseRequest(Raw("status 99999999999"), &r, &parts).ok());
  CHECK_FALSE(ParseRequest(Raw("statusx"), &r, &parts).ok());
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
        "n\\hostname\\Aftershock test server\\map\\dm_arena\\maxclients\\512\\players\\3"
        "\\fraglimit\\30\\uptime\\86400\\protocol\\2\\tickrate\\60\\*version\\aftershock 2\n"
        "1 12 3 45 \"Ranger\" \"\" 0 0\n64 -2 0 0 \"a b c\" \"\" 0 0\n65535 0 99999 9999 \"x\" \"\" 0 0\n");
  ServerStatus back;
  REQUIRE(ParseStatusReply(bytes, &back).ok());
  CHECK(back == s);
}

TEST_CASE("status sends only the parts the flags ask for", "[connectionless]") {
  const ServerStatus s = SampleStatus();
  std::vector<uint8_t> bytes;
  REQUIRE(EncodeStatusReply(s, &bytes, nullptr, StatusParts{true, false}).ok());
  std::string text(bytes.begin() + 4, bytes.end());
  CHECK(text.find("Ranger") == std::string::npos);
  CHECK(text.starts_with("n\\hostname\\"));
  REQUIRE(EncodeStatusReply(s, &bytes, nullptr, StatusParts{false, true}).ok());
  text.assign(bytes.begin() + 4, bytes.end());
  CHECK(text.starts_with("n1 12 3 45 \"Ranger\""));
  CHECK(text.find("hostname") == std::string::npos);
}

TEST_CASE("status lists only the players that fit in one datagram", "[connectionless]") {
  ServerStatus s = SampleStatus();
  s.player_list.clear();
  for (int i = 0; i < 500; ++i) {
    s.player_list.push_back({static_cast<uint32_t>(i + 1), i, 1, static_cast<uint32_t>(i),
                             "player_" + std::to_string(i) + "_long_name_x"});
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
  s = SampleStatus();
  s.player_list[0].user_id = 65536;
  CHECK_FALSE(EncodeStatusReply(s, &out).ok());

  const std::string info =
      "n\\hostname\\h\\map\\m\\players\\0\\maxclients\\8\\fraglimit\\0\\uptime\\5"
      "\\protocol\\2\\tickrate\\60";
  ServerStatus back;
  REQUIRE(ParseStatusReply(Raw(info + "\n"), &back).ok());
  CHECK(ParseStatusReply(Raw(info + "\\future\\x\n"), &back).ok());  // unknown key ignored
  CHECK_FALSE(ParseStatusReply(Raw(info), &back).ok());              // no final newline
  CHECK_FALSE(ParseStatusReply(Raw(info + "\\map\\again\n"), &back).ok());
  CHECK_FALSE(ParseStatusReply(Raw(info + "\\dangling\n"), &back).ok());
  REQUIRE(ParseStatusReply(Raw(info + "\n3 1 0 2 \"n\" \"base\" 4 13\n"), &back).ok());
  CHECK(back.player_list.at(0) == StatusPlayer{3, 1, 0, 2, "n"});
  CHECK_FALSE(ParseStatusReply(Raw(info + "\n3 1 0 2 n \"\" 0 0\n"), &back).ok());
  CHECK_FALSE(ParseStatusReply(Raw(info + "\n3 1 0 2 \"n\"\n"), &back).ok());
  CHECK_FALSE(ParseStatusReply(Raw(info + "\nx 1 0 2 \"n\" \"\" 0 0\n"), &back).ok());
  CHECK_FALSE(ParseStatusReply(Raw(info + "\n3 40000 0 2 \"n\" \"\" 0 0\n"), &back).ok());
  CHECK_FALSE(ParseStatusReply(Raw(info + "\n3 1 0 2 \"\" \"\" 0 0\n"), &back).ok());
  CHECK_FALSE(ParseStatusReply(Raw(info + "\n3 1 0 2 \"\t\" \"\" 0 0\n"), &back).ok());
  CHECK_FALSE(ParseStatusReply(Raw(info + "\n3 1 0 2 \"n\" \"\" 0 14\n"), &back).ok());
  CHECK_FALSE(ParseStatusReply(Raw(info + "\n3 1 0 2 \"n \"\" 0 0\n"), &back).ok());
  std::string missing = "n\\hostname\\h\\map\\m\\players\\0\n";
  CHECK_FALSE(ParseStatusReply(Raw(missing), &back).ok());
}

}  // namespace
}  // namespace proto
