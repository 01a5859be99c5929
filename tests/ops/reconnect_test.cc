// Reconnecting after a drop without an ENet disconnect (a crashed client, a lost network): the
// client restarts on the same UDP port and joins again with its identity, while the server
// still holds its old session. The new session must join, play and stay (docs/protocol.md,
// section 4, "Reconnecting"). In-process server, real clients; waits poll with deadlines.
#include <catch2/catch.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include <spdlog/spdlog.h>

#include "server/core/steady_clock.h"
#include "server/sv/server.h"
#include "tests/server/play_harness.h"
#include "tests/server/test_client.h"

namespace {

svtest::JoinParams Params(uint16_t port, const std::string& name) {
  svtest::JoinParams p;
  p.lobby_port = port;
  p.name = name;
  p.token = 4242;
  return p;
}

// Plays 33 ms commands for `ms` milliseconds; returns false if the client was kicked or lost.
bool PlayFor(svtest::TestClient* c, int ms) {
  const uint64_t end = core::SteadyMs() + static_cast<uint64_t>(ms);
  while (core::SteadyMs() < end && c->connected() && !c->kicked()) {
    c->SendCommand(400, 0, 90, 0, 33);
    const uint64_t next = core::SteadyMs() + 33;
    while (core::SteadyMs() < next) c->Service(1);
  }
  return c->connected() && !c->kicked();
}

}  // namespace

TEST_CASE("a client that dropped without a disconnect reconnects from the same UDP port") {
  spdlog::set_level(spdlog::level::warn);
  for (const int threads : {1, 2}) {
    INFO("threads " << threads);
    sv::ServerOptions o = svtest::TestOptions(sv::LockingScheme::kAreanodeOpt, threads);
    std::unique_ptr<sv::Server> server;
    REQUIRE(sv::Server::Create(o, &server).ok());
    server->Start();
    const uint16_t port = server->lobby_port();
    for (int round = 0; round < 3; ++round) {
      INFO("round " << round);
      svtest::TestClient first("127.0.0.1");  // on a port the system picks
      const uint16_t client_port = first.local_port();
      REQUIRE(first.Join(Params(port, "phoenix"), 5000).ok());
      REQUIRE(PlayFor(&first, 300));
      const uint32_t applied = first.last_applied_sequence();
      first.Abandon();
      // At once, on the same port, with the same identity: the server still has the old session.
      svtest::TestClient second("127.0.0.1", client_port);
      REQUIRE(second.Join(Params(port, "phoenix"), 5000).ok());
      CHECK(second.last_applied_sequence() >= applied);  // the record carried on
      CHECK(PlayFor(&second, 1500));                     // and it stays: no stale kick or disconnect
      CHECK(second.last_applied_sequence() > applied);
      second.Disconnect();
    }
    server->RequestStop();
    server->Wait();
  }
}
