// Delayed packets against a live server: an honest client whose datagrams a UDP relay holds for
// two seconds and then releases in one burst is not rejected or kicked, and all its commands are
// applied, beside a client with a direct path (docs/protocol.md 7.2, "delays are not charged").
#include <catch2/catch.hpp>

#include <chrono>
#include <memory>
#include <thread>

#include <spdlog/spdlog.h>

#include "server/sv/server.h"
#include "tests/server/play_harness.h"
#include "tests/server/test_client.h"
#include "tests/server/udp_relay.h"

namespace {

using Clock = std::chrono::steady_clock;

// Sends one 33 ms command per 33 ms of real time from each client, servicing them in between,
// until `until`. The schedule (*next: when the next command is due) carries over from one call to
// the next, so calls in a loop keep to real time: a schedule restarted at every call sent a
// command at the start of each 50 ms call, 1.3 times real time, and the server rightly refused
// the excess as a speed hack now and then.
void PlayUntil(const std::vector<svtest::TestClient*>& clients, Clock::time_point until,
               Clock::time_point* next) {
  while (Clock::now() < until) {
    if (Clock::now() >= *next) {
      for (svtest::TestClient* c : clients) c->SendCommand(400, 0, 90, 0, 33);
      *next += std::chrono::milliseconds(33);
    }
    for (svtest::TestClient* c : clients) c->Service(0);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

// Services the clients until each has seen its last command applied, or the deadline passes.
// The server answers only commands, and its ENet may drop a snapshot (the packet throttle, after
// the round trip spiked during the hold), so a client still waiting after 100 ms sends one more
// command, which carries the earlier ones as redundant copies.
bool DrainUntilApplied(const std::vector<svtest::TestClient*>& clients, Clock::time_point deadline) {
  auto last_nudge = Clock::now();
  while (Clock::now() < deadline) {
    bool all = true;
    for (svtest::TestClient* c : clients) {
      c->Service(0);
      all = all && c->last_applied_sequence() == c->last_sent_sequence();
    }
    if (all) return true;
    if (Clock::now() - last_nudge > std::chrono::milliseconds(100)) {
      last_nudge = Clock::now();
      for (svtest::TestClient* c : clients) {
        if (c->last_applied_sequence() != c->last_sent_sequence()) c->SendCommand(0, 0, 90, 0, 10);
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return false;
}

}  // namespace

TEST_CASE("a client whose packets are held for 2 s and released in a burst is not punished") {
  spdlog::set_level(spdlog::level::warn);
  std::unique_ptr<sv::Server> server;
  REQUIRE(sv::Server::Create(svtest::TestOptions(sv::LockingScheme::kAreanodeOpt, 1), &server).ok());
  server->Start();
  const uint16_t port = server->lobby_port();
  std::unique_ptr<svtest::UdpRelay> relay;
  REQUIRE(svtest::UdpRelay::Start(0, server->worker_port(0), &relay).ok());
  const uint16_t relay_port = relay->listen_port();

  svtest::TestClient direct, delayed;
  svtest::JoinParams p;
  p.lobby_port = port;
  p.name = "direct";
  p.token = 11;
  REQUIRE(direct.Join(p, 3000).ok());
  p.name = "delayed";
  p.token = 12;
  p.worker_port = relay_port;
  REQUIRE(delayed.Join(p, 3000).ok());

  const std::vector<svtest::TestClient*> clients = {&direct, &delayed};
  Clock::time_point next = Clock::now();
  PlayUntil(clients, Clock::now() + std::chrono::milliseconds(700), &next);
  relay->HoldClientDatagrams(2000);
  // The delayed client keeps playing: about 60 commands pile up in the relay.
  while (relay->holding()) PlayUntil(clients, Clock::now() + std::chrono::milliseconds(50), &next);
  PlayUntil(clients, Clock::now() + std::chrono::milliseconds(700), &next);
  const bool applied = DrainUntilApplied(clients, Clock::now() + std::chrono::seconds(3));
  server->RequestStop();
  server->Wait();

  INFO("delayed: sent " << delayed.last_sent_sequence() << " applied " << delayed.last_applied_sequence()
                        << "; released after the hold " << relay->released_after_hold());
  CHECK(relay->released_after_hold() >= 30);  // the burst really happened
  CHECK(applied);
  CHECK_FALSE(delayed.kicked());
  CHECK_FALSE(direct.kicked());
  CHECK(delayed.last_applied_sequence() == delayed.last_sent_sequence());
  const sv::StatsReport rep = server->Report();
  CHECK(rep.invalid_packets == 0);
  CHECK(rep.kicked == 0);
}
