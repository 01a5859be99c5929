// Persistent players that never fill the server, on the in-process server with real clients:
// 1,000 one-shot names from 8 addresses cannot lock a 64-player server; a flood of new names
// from one address is rate-limited so it cannot crowd returning players out of the record store,
// while players from other addresses still join; a returning player resumes its record and an
// evicted one starts afresh. Every wait polls with a deadline.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <spdlog/spdlog.h>

#include "server/core/steady_clock.h"
#include "server/sv/server.h"
#include "tests/server/play_harness.h"
#include "tests/server/test_client.h"

namespace {

std::unique_ptr<sv::Server> Start(const sv::ServerOptions& o) {
  spdlog::set_level(spdlog::level::warn);
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

// What one session saw: the last applied sequence the Welcome reported (the record's, 0 for a
// new identity), and the last one applied when it left.
struct Session {
  uint32_t at_join = 0;
  uint32_t at_leave = 0;
};

// Joins, plays at least `commands` commands (33 ms each, sent 33 ms apart: the server checks
// their pace) until the server reports every command sent applied, and disconnects.
Session PlayOnce(uint16_t port, const std::string& name, uint64_t token, int commands,
                 const std::string& source = "") {
  svtest::TestClient c(source);
  Session s;
  REQUIRE(c.Join(Params(port, name, token), 5000).ok());
  s.at_join = c.last_applied_sequence();
  const uint64_t deadline = core::SteadyMs() + 10000;
  for (int i = 0; (i < commands || c.last_applied_sequence() < c.last_sent_sequence()) &&
                  core::SteadyMs() < deadline;
       ++i) {
    c.SendCommand(400, 0, static_cast<float>((30 * i) % 360), 0, 33);  // yaw within 0..360
    const uint64_t next = core::SteadyMs() + 33;
    while (core::SteadyMs() < next) c.Service(1);
  }
  INFO(name << ": kicked " << c.kicked() << " (" << (c.kicked() ? c.kick()->text : "") << "), connected "
            << c.connected() << ", snapshots " << c.snapshots());
  REQUIRE(c.last_applied_sequence() == c.last_sent_sequence());
  s.at_leave = c.last_applied_sequence();
  c.Disconnect();
  return s;
}

// Waits until the server reports `online` players and at least `offline` records.
void WaitForCounts(const sv::Server& server, uint64_t online, uint64_t offline) {
  const uint64_t deadline = core::SteadyMs() + 20000;
  sv::StatsReport r = server.Report();
  while ((r.players != online || r.records.offline < offline) && core::SteadyMs() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    r = server.Report();
  }
  CHECK(r.players == online);
  CHECK(r.records.offline >= offline);
}

// Joins, retrying until refused or 20 s pass: right after a flood, the lobby's peer slots may
// still be held by flood clients that vanished after their refusal (ENet times them out).
core::Status JoinBy(svtest::TestClient* c, const svtest::JoinParams& p) {
  const uint64_t deadline = core::SteadyMs() + 20000;
  core::Status s = core::Status::IoError("no attempt");
  while (core::SteadyMs() < deadline) {
    s = c->Join(p, 3000);
    if (s.ok() || c->refuse_reason().has_value()) return s;
  }
  return s;
}

struct FloodResult {
  int joined = 0;
  int full = 0;   // refused with kServerFull
  int other = 0;  // failed otherwise (a refused client that vanishes holds a lobby peer slot
                  // until ENet times it out, so a fast flood finds the lobby's slots taken)
  std::string first_other;
};

// `count` one-shot names "<prefix><i>" from `threads` threads: join, and leave at once. Name i
// comes from sources[i % sources.size()] ("": 127.0.0.1, the default route's choice).
FloodResult OneShots(uint16_t port, const std::string& prefix, int count, int threads,
                     const std::vector<std::string>& sources = {""}) {
  std::atomic<int> joined{0}, full{0}, failed{0}, next{0};
  std::mutex mu;
  std::string other;  // the first failure that was not a refusal
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      for (int i = next.fetch_add(1); i < count; i = next.fetch_add(1)) {
        svtest::TestClient c(sources[static_cast<size_t>(i) % sources.size()]);
        const core::Status s = c.Join(Params(port, prefix + std::to_string(i), 1000 + i), 5000);
        if (s.ok()) {
          joined.fetch_add(1);
          c.Disconnect();
        } else if (c.refuse_reason() == proto::RefuseReason::kServerFull) {
          full.fetch_add(1);
        } else {
          failed.fetch_add(1);
          std::lock_guard<std::mutex> lock(mu);
          if (other.empty()) other = s.ToString();
        }
      }
    });
  }
  for (auto& t : pool) t.join();
  return {joined.load(), full.load(), failed.load(), other};
}

}  // namespace

TEST_CASE("1,000 one-shot names cannot fill a 64-player server: honest players still join") {
  sv::ServerOptions o = svtest::TestOptions(sv::LockingScheme::kAreanodeOpt, 2);
  o.max_players = 64;
  o.tick_hz = 60;
  // The new-identity rate limit keeps its defaults. From one address it would refuse a flood
  // past its burst (ServerOptions::new_identity_burst, 256): the next test's subject. This one
  // is about capacity, so the flood comes from 8 loopback addresses, 125 names each, below the
  // limit: a spread-out flood the rate limit does not stop, which capacity alone must absorb.
  // (Addresses whose hashes share a limiter slot share a bucket; two of them still fit.)
  REQUIRE(o.new_identity_burst >= 125);
  auto server = Start(o);
  const uint16_t port = server->lobby_port();
  std::vector<std::string> sources;
  for (int a = 1; a <= 8; ++a) sources.push_back("127.0.0." + std::to_string(a));
  const FloodResult f = OneShots(port, "oneshot", 1000, 4, sources);
  INFO(f.first_other);
  CHECK(f.joined == 1000);  // each leaves, so its slot frees: before, the 65th was refused for good
  CHECK(f.full == 0);
  CHECK(f.other == 0);
  WaitForCounts(*server, 0, 1000);
  const sv::StatsReport r = server->Report();
  CHECK(r.max_players_online <= 64);
  CHECK(r.records.offline == 1000);
  CHECK(r.records.evicted == 0);  // the default store (20,000) holds them all
  CHECK(r.records.new_identity_refusals == 0);
  // Honest newcomers from an address of their own fill the server.
  std::vector<std::unique_ptr<svtest::TestClient>> honest;
  for (int i = 0; i < 64; ++i) {
    honest.push_back(std::make_unique<svtest::TestClient>("127.0.0.100"));
    INFO("honest player " << i);
    REQUIRE(honest.back()->Join(Params(port, "honest" + std::to_string(i), 5), 5000).ok());
  }
  // Now the server is full of players who stay: the 65th is refused, as --max-players says.
  svtest::TestClient extra("127.0.0.100");
  const core::Status refused = extra.Join(Params(port, "extra", 5), 5000);
  CHECK_FALSE(refused.ok());
  CHECK(extra.refuse_reason() == proto::RefuseReason::kServerFull);
  CHECK(refused.ToString().find("server full") != std::string::npos);  // not the rate limit
  server->RequestStop();
  server->Wait();
}

TEST_CASE("new names from one address are rate-limited: returning players keep their records") {
  sv::ServerOptions o = svtest::TestOptions(sv::LockingScheme::kAreanodeOpt, 2);
  o.max_players = 16;
  o.max_records = 40;
  o.new_identity_burst = 20;
  o.new_identity_per_min = 0;  // no refill during the test: the counts are exact
  auto server = Start(o);
  const uint16_t port = server->lobby_port();
  std::vector<uint32_t> applied(5);
  for (int i = 0; i < 5; ++i) {
    applied[i] = PlayOnce(port, "veteran" + std::to_string(i), 70 + i, 10 + i).at_leave;
  }
  // 200 new names from 127.0.0.1: the 15 tokens left after the veterans' 5, then refusals.
  const FloodResult f = OneShots(port, "flood", 200, 4);
  CHECK(f.joined == 15);
  CHECK(f.full + f.other == 185);
  CHECK(f.full > 50);  // most reach the limit; the rest find the lobby's slots held by earlier ones
  WaitForCounts(*server, 0, 20);
  sv::StatsReport r = server->Report();
  CHECK(r.records.offline == 20);
  CHECK(r.records.evicted == 0);
  // A refusal whose answer came too late for its client counts at the server, not as `full`.
  CHECK(r.records.new_identity_refusals >= static_cast<uint64_t>(f.full));
  CHECK(r.records.new_identity_refusals <= static_cast<uint64_t>(f.full + f.other));
  // Every veteran comes back to its record: its commands are still applied.
  for (int i = 0; i < 5; ++i) {
    svtest::TestClient c;
    REQUIRE(JoinBy(&c, Params(port, "veteran" + std::to_string(i), 70 + i)).ok());
    CHECK(c.last_applied_sequence() == applied[i]);
    CHECK(applied[i] >= static_cast<uint32_t>(10 + i));
    c.Disconnect();
  }
  // A new player from another address is not limited by the flood's.
  svtest::TestClient other("127.0.0.2");
  CHECK(JoinBy(&other, Params(port, "newcomer", 9)).ok());
  // ... while from the flood's address a new name is still refused, with the reason in the text.
  svtest::TestClient again;
  CHECK_FALSE(JoinBy(&again, Params(port, "flood-late", 9)).ok());
  CHECK(again.refuse_reason() == proto::RefuseReason::kServerFull);
  server->RequestStop();
  server->Wait();
}

TEST_CASE("a returning player resumes its record, and an evicted one starts afresh") {
  sv::ServerOptions o = svtest::TestOptions(sv::LockingScheme::kAreanodeOpt, 1);
  o.max_players = 4;
  o.max_records = 2;
  auto server = Start(o);
  const uint16_t port = server->lobby_port();
  const Session first = PlayOnce(port, "keeper", 1, 12);
  CHECK(first.at_join == 0);
  const Session second = PlayOnce(port, "keeper", 1, 5);
  CHECK(second.at_join == first.at_leave);  // resumed: the record's sequence carries on
  CHECK(second.at_leave > first.at_leave);
  PlayOnce(port, "gone", 2, 7);                                // store: keeper, gone (full)
  const Session third = PlayOnce(port, "keeper", 1, 1);        // keeper seen again: gone is oldest
  CHECK(third.at_join == second.at_leave);
  PlayOnce(port, "third", 3, 3);                               // its leave evicts gone
  WaitForCounts(*server, 0, 2);
  CHECK(server->Report().records.evicted == 1);
  const Session keeper = PlayOnce(port, "keeper", 1, 1);  // keeper is newest again
  CHECK(keeper.at_join == third.at_leave);
  const Session gone = PlayOnce(port, "gone", 77, 1);  // any token: a new identity
  CHECK(gone.at_join == 0);
  server->RequestStop();
  server->Wait();
}
