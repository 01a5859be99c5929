// A junk flood against the real server binary, from the real aftershock-flood binary (another
// process, every kind of junk, every port), while honest clients play and one joins: nobody
// honest is kicked or disconnected, every command is applied, the join succeeds, the server
// keeps answering, the junk counters rise and the half-open peers stay under the cap. The flood
// is short and bounded; every wait polls with a deadline, and nothing asserts on timing.
#include <catch2/catch.hpp>

#include <signal.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "server/core/steady_clock.h"
#include "tests/server/test_client.h"
#include "tests/support/mini_json.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/server_ports.h"
#include "tests/support/subprocess.h"

namespace {

using testing_util::ReadFile;
using testing_util::Subprocess;

bool ServerAnswers(uint16_t port, int attempts) {
  for (int i = 0; i < attempts; ++i) {
    uint32_t challenge = 0;
    if (svtest::GetChallenge(port, &challenge).ok()) return true;
  }
  return false;
}

// Joins with retries until deadline_ms (a join under a flood may need ENet's resends).
core::Status JoinBy(svtest::TestClient* c, const svtest::JoinParams& p, uint64_t deadline_ms) {
  core::Status s = core::Status::IoError("no attempt");
  while (core::SteadyMs() < deadline_ms) {
    s = c->Join(p, 5000);
    if (s.ok()) return s;
  }
  return s;
}

// Plays every client at 30 Hz for play_ms, servicing them in between.
void PlayFor(std::vector<std::unique_ptr<svtest::TestClient>>& clients, int play_ms) {
  const uint64_t end = core::SteadyMs() + static_cast<uint64_t>(play_ms);
  uint64_t next = core::SteadyMs();
  float yaw = 0;
  while (core::SteadyMs() < end) {
    yaw = yaw > 170 ? -180 : yaw + 10;
    for (auto& c : clients) c->SendCommand(400, 0, yaw, 0, 33);
    next += 33;
    while (core::SteadyMs() < next) {
      for (auto& c : clients) c->Service(0);
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
}

// Polls the server's stats file (rewritten every second) until it counts at least `dropped`
// junk datagrams, or deadline_ms; returns the last stats read (empty if none).
svtest::Json WaitForJunkDropped(const std::string& stats, double dropped, uint64_t deadline_ms) {
  svtest::Json j;
  while (core::SteadyMs() < deadline_ms) {
    const std::string text = ReadFile(stats);
    if (!text.empty()) {
      j = svtest::ParseJson(text);
      if (j.Has("junk") && j["junk"]["dropped"].number >= dropped) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return j;
}

// Services until every client saw its last command applied, or the deadline.
bool DrainApplied(std::vector<std::unique_ptr<svtest::TestClient>>& clients, int deadline_ms) {
  const uint64_t end = core::SteadyMs() + static_cast<uint64_t>(deadline_ms);
  uint64_t nudge = 0;
  for (;;) {
    bool done = true;
    for (auto& c : clients) {
      c->Service(0);
      done = done && c->last_applied_sequence() == c->last_sent_sequence();
    }
    if (done) return true;
    if (core::SteadyMs() > end) return false;
    if (core::SteadyMs() > nudge + 100) {  // a lost last command is resent with the next one
      nudge = core::SteadyMs();
      for (auto& c : clients) {
        if (c->last_applied_sequence() != c->last_sent_sequence()) c->SendCommand(0, 0, 0, 0, 10);
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

}  // namespace

TEST_CASE("a junk flood from another process costs the sender, not the players") {
  const testing_util::ScratchDir scratch("aftershock_flood_test");
  const std::string tag = scratch.Path("flood_test");
  const std::string stats = tag + ".json";
  Subprocess server({AS_SERVER_BIN, "--port", "0", "--bind", "127.0.0.1", "--threads", "2",
                     "--data-dir", "", "--stats-out", stats, "--stats-interval", "1", "--log-level", "warn"},
                    "/dev/null", tag + ".server.err");
  svtest::ServerPorts ports;
  REQUIRE(svtest::WaitForServerPorts(stats, 30000, &ports));
  REQUIRE(ports.workers.size() == 2);
  const uint16_t port = ports.lobby;
  REQUIRE(ServerAnswers(port, 100));

  std::vector<std::unique_ptr<svtest::TestClient>> players;
  for (int i = 0; i < 4; ++i) {
    auto c = std::make_unique<svtest::TestClient>();
    svtest::JoinParams p;
    p.lobby_port = port;
    p.name = "honest" + std::to_string(i);
    p.token = 700 + static_cast<uint64_t>(i);
    REQUIRE(c->Join(p, 5000).ok());
    players.push_back(std::move(c));
  }
  // Every kind of junk at the lobby and both workers, from 8 source ports, for 5 s.
  const std::string flood_ports = std::to_string(port) + "," + std::to_string(ports.workers[0]) + "," +
                                  std::to_string(ports.workers[1]);
  Subprocess flood({AS_FLOOD_BIN, "--server", "127.0.0.1:" + std::to_string(port), "--ports", flood_ports,
                    "--rate", "5000", "--duration", "5", "--sockets", "8", "--out", tag + ".flood.json"},
                   "/dev/null", tag + ".flood.err");
  // A player who joins during the flood, on its own thread (its own ENet host).
  svtest::TestClient late;
  core::Status late_join = core::Status::IoError("not run");
  std::thread joiner([&] {
    WaitForJunkDropped(stats, 1, core::SteadyMs() + 20000);  // the flood has reached the server
    svtest::JoinParams p;
    p.lobby_port = port;
    p.name = "latecomer";
    p.token = 799;
    late_join = JoinBy(&late, p, core::SteadyMs() + 20000);
  });
  PlayFor(players, 4000);
  joiner.join();
  REQUIRE(flood.Wait(30) == 0);

  CHECK(DrainApplied(players, 5000));
  for (auto& c : players) {
    CHECK(c->connected());
    CHECK(!c->kicked());
    CHECK(c->snapshots() > 0);
  }
  INFO(late_join.ToString());
  CHECK(late_join.ok());
  CHECK(ServerAnswers(port, 20));

  // The stats file is rewritten every second: poll it for the flood's traces.
  const svtest::Json j = WaitForJunkDropped(stats, 1000, core::SteadyMs() + 10000);
  REQUIRE(j.Has("junk"));
  const svtest::Json& junk = j["junk"];
  INFO(ReadFile(stats));
  CHECK(junk["dropped"].number >= 1000);
  for (const char* k : {"short", "oversize", "unreadable", "bad_header", "connect_capped"}) {
    INFO(k);
    CHECK(junk[k].number > 0);
  }
  CHECK(junk["half_open_max"].number <= 96);  // 3/4 of the lobby's 128 slots (workers: 64)
  CHECK(j["kicked"].number == 0);

  server.Signal(SIGTERM);
  CHECK(server.Wait(20) == 0);
}
