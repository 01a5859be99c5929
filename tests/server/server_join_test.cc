// Join refusals and the connectionless queries: a full server, a wrong protocol version, a
// wrong token for a known name, a bad challenge and a bad name each come back as a JoinRefuse
// with that reason; getchallenge and status are answered on the base port.
#include <catch2/catch.hpp>

#include <chrono>
#include <memory>
#include <thread>

#include <spdlog/spdlog.h>

#include "server/core/steady_clock.h"
#include "server/protocol/connectionless.h"
#include "server/sv/server.h"
#include "tests/server/play_harness.h"
#include "tests/server/test_client.h"

namespace {

std::unique_ptr<sv::Server> StartServer(int max_players) {
  spdlog::set_level(spdlog::level::warn);
  sv::ServerOptions o = svtest::TestOptions(sv::LockingScheme::kAreanodeOpt, 2);
  o.max_players = max_players;
  std::unique_ptr<sv::Server> server;
  REQUIRE(sv::Server::Create(o, &server).ok());
  server->Start();
  return server;
}

svtest::JoinParams Params(uint16_t port, const std::string& name, uint64_t token) {
  svtest::JoinParams p;
  p.lobby_port = port;
  p.name = name;
  p.token = token;
  return p;
}

}  // namespace

TEST_CASE("join refusals name their reason") {
  auto server = StartServer(2);
  const uint16_t port = server->lobby_port();
  svtest::TestClient a, b;
  REQUIRE(a.Join(Params(port, "alice", 11), 3000).ok());
  REQUIRE(b.Join(Params(port, "bob", 22), 3000).ok());

  SECTION("full server") {
    svtest::TestClient c;
    CHECK(c.Join(Params(port, "carol", 33), 3000).code() == core::Status::Code::kRefused);
    CHECK(c.refuse_reason() == proto::RefuseReason::kServerFull);
  }
  SECTION("wrong protocol version") {
    svtest::TestClient c;
    svtest::JoinParams p = Params(port, "carol", 33);
    p.protocol_version = proto::kProtocolVersion + 1;
    CHECK(c.Join(p, 3000).code() == core::Status::Code::kRefused);
    CHECK(c.refuse_reason() == proto::RefuseReason::kWrongProtocolVersion);
  }
  SECTION("bad challenge") {
    uint32_t good = 0;
    REQUIRE(svtest::GetChallenge(port, &good).ok());
    svtest::TestClient c;
    svtest::JoinParams p = Params(port, "carol", 33);
    p.challenge = good ^ 0x5a5a5a5au;
    CHECK(c.Join(p, 3000).code() == core::Status::Code::kRefused);
    CHECK(c.refuse_reason() == proto::RefuseReason::kBadChallenge);
  }
  SECTION("bad name") {
    svtest::TestClient c;
    CHECK(c.Join(Params(port, "", 33), 3000).code() == core::Status::Code::kRefused);
    CHECK(c.refuse_reason() == proto::RefuseReason::kBadName);
  }
  SECTION("a second login with the right token replaces the first, a wrong token does not") {
    svtest::TestClient impostor;
    CHECK(impostor.Join(Params(port, "alice", 12), 3000).code() == core::Status::Code::kRefused);
    CHECK(impostor.refuse_reason() == proto::RefuseReason::kWrongToken);
    a.Service(50);
    CHECK_FALSE(a.kicked());
    svtest::TestClient c;
    REQUIRE(c.Join(Params(port, "alice", 11), 3000).ok());
    for (int i = 0; i < 100 && !a.kicked(); ++i) a.Service(10);
    REQUIRE(a.kicked());
    CHECK(a.kick()->reason == proto::KickReason::kDuplicateLogin);
    CHECK_FALSE(c.kicked());
  }
  SECTION("wrong token for a known identity, right token resumes it") {
    a.Disconnect();
    // The worker notices the disconnect and the master applies the leave in a world phase.
    const uint64_t deadline = core::SteadyMs() + 10000;
    while (server->Report().leaves == 0 && core::SteadyMs() < deadline) {
      a.Service(0);
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    REQUIRE(server->Report().leaves == 1);
    svtest::TestClient c;
    CHECK(c.Join(Params(port, "alice", 999), 3000).code() == core::Status::Code::kRefused);
    CHECK(c.refuse_reason() == proto::RefuseReason::kWrongToken);
    svtest::TestClient d;
    CHECK(d.Join(Params(port, "alice", 11), 3000).ok());
  }
  server->RequestStop();
  server->Wait();
  CHECK(server->Report().join_refusals >= 1);
}

TEST_CASE("connectionless status lists map and players") {
  auto server = StartServer(8);
  const uint16_t port = server->lobby_port();
  svtest::TestClient a;
  REQUIRE(a.Join(Params(port, "alice", 11), 3000).ok());
  // The master republishes the status board about once a second.
  proto::ServerStatus status;
  bool seen = false;
  for (int attempt = 0; attempt < 30 && !seen; ++attempt) {
    std::vector<uint8_t> reply;
    REQUIRE(svtest::Connectionless(port, proto::EncodeRequest(proto::ConnectionlessRequest::kStatus),
                                   2000, &reply).ok());
    REQUIRE(proto::ParseStatusReply(reply, &status).ok());
    seen = status.players == 1;
    if (!seen) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  CHECK(seen);
  CHECK(status.map == "dm_arena");
  CHECK(status.max_players == 8);
  CHECK(status.protocol_version == proto::kProtocolVersion);
  REQUIRE(status.player_list.size() == 1);
  CHECK(status.player_list[0].name == "alice");
  server->RequestStop();
  server->Wait();
}

TEST_CASE("joins and duplicate logins arriving in one frame keep the tick record's order") {
  // Regression: a duplicate login's leave was applied after other joins of the same frame, which
  // breaks the tick record (leaves come before joins) and aborted the server under bot load.
  // Several rounds of concurrent joins, half of them identities already online, make it very
  // likely that the master sees both kinds in one batch.
  auto server = StartServer(32);
  const uint16_t port = server->lobby_port();
  std::vector<std::unique_ptr<svtest::TestClient>> online;
  for (int i = 0; i < 4; ++i) {
    online.push_back(std::make_unique<svtest::TestClient>());
    REQUIRE(online.back()->Join(Params(port, "dup" + std::to_string(i), 100 + i), 3000).ok());
  }
  for (int round = 0; round < 3; ++round) {
    std::vector<std::unique_ptr<svtest::TestClient>> clients(8);
    std::vector<core::Status> results(8);
    std::vector<std::thread> threads;
    for (int i = 0; i < 8; ++i) {
      clients[i] = std::make_unique<svtest::TestClient>();
      // Even i: a new identity each round; odd i: one of the online identities, right token.
      const std::string name = i % 2 == 0 ? "new" + std::to_string(round) + "_" + std::to_string(i)
                                          : "dup" + std::to_string(i / 2);
      const uint64_t token = i % 2 == 0 ? 1000 + i : 100 + i / 2;
      threads.emplace_back([&clients, &results, i, port, name, token] {
        results[i] = clients[i]->Join(Params(port, name, token), 5000);
      });
    }
    for (std::thread& t : threads) t.join();
    for (int i = 0; i < 8; ++i) {
      INFO("round " << round << " client " << i << ": " << results[i].ToString());
      CHECK(results[i].ok());
    }
    for (auto& c : clients) c->Disconnect();
  }
  server->RequestStop();
  server->Wait();
  CHECK(server->Report().joins >= 4 + 3 * 8);
}
