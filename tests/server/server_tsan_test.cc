// The parallel schemes under ThreadSanitizer (label tsan): several worker threads and clients in
// one process, with the game's region check on, for global, areanode and areanode-opt locking in
// fixed mode and the request-driven frame gate, and the junk filters under junk. A data race or a deadlock fails the run (TSan
// reports, or the test times out); the assertions check that the play itself went through.
#include <catch2/catch.hpp>

#include <atomic>
#include <memory>
#include <random>
#include <thread>

#include <spdlog/spdlog.h>

#include "server/sv/server.h"
#include "server/sv/stats_report.h"
#include "tests/server/play_harness.h"
#include "tests/server/test_client.h"

namespace {

void Race(sv::ServerOptions o, int clients) {
  spdlog::set_level(spdlog::level::warn);
  std::unique_ptr<sv::Server> server;
  REQUIRE(sv::Server::Create(o, &server).ok());
  server->Start();
  svtest::PlayResult r = svtest::Play(server->lobby_port(), clients, "t", 1500, 4000, 3);
  server->RequestStop();
  server->Wait();
  INFO(r.join_error);
  REQUIRE(r.joined == clients);
  CHECK(r.all_replied());
  const sv::StatsReport rep = server->Report();
  CHECK(rep.commands > 0);
}

}  // namespace

TEST_CASE("tsan: global locking with 4 threads") {
  Race(svtest::TestOptions(sv::LockingScheme::kGlobal, 4), 12);
}

TEST_CASE("tsan: areanode locking with 4 threads") {
  Race(svtest::TestOptions(sv::LockingScheme::kAreanode, 4), 12);
}

TEST_CASE("tsan: areanode-opt locking with 4 threads") {
  Race(svtest::TestOptions(sv::LockingScheme::kAreanodeOpt, 4), 12);
}

TEST_CASE("tsan: locality assignment with 3 threads, commands routed between them") {
  sv::ServerOptions o = svtest::TestOptions(sv::LockingScheme::kAreanodeOpt, 3);
  o.assign = sv::Assignment::kLocality;
  // 32 leaves: a whole-map action locks every leaf, and TSan's deadlock detector tracks at most
  // 64 locks held by one thread.
  o.areanode_depth = 5;
  o.migrate_margin = 0;
  o.rebalance_s = 0.2;
  Race(o, 12);
}

TEST_CASE("tsan: request frame mode with 3 threads") {
  sv::ServerOptions o = svtest::TestOptions(sv::LockingScheme::kAreanodeOpt, 3);
  o.frame_mode = sv::FrameMode::kRequest;
  Race(o, 12);
}

TEST_CASE("tsan: junk at every port while clients play and the stats are read") {
  spdlog::set_level(spdlog::level::warn);
  sv::ServerOptions o = svtest::TestOptions(sv::LockingScheme::kAreanodeOpt, 2);
  std::unique_ptr<sv::Server> server;
  REQUIRE(sv::Server::Create(o, &server).ok());
  server->Start();
  std::atomic<bool> stop{false};
  const uint16_t ports[3] = {server->lobby_port(), server->worker_port(0), server->worker_port(1)};
  std::thread junk([&] {
    std::mt19937_64 rng(11);
    for (int i = 0; !stop.load() && i < 3000; ++i) {
      std::vector<uint8_t> d(1 + rng() % (i % 10 == 0 ? 6000 : 300));
      for (uint8_t& b : d) b = static_cast<uint8_t>(rng());
      if (i % 7 == 0) d.insert(d.begin(), {0xFF, 0xFF, 0xFF, 0xFF});
      svtest::SendRawUdp(ports[i % 3], d);
      if (i % 20 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  });
  std::thread reader([&] {  // the stats reporter's reads, concurrently
    while (!stop.load()) {
      (void)sv::ToJson(server->Report());
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
  svtest::PlayResult r = svtest::Play(server->lobby_port(), 6, "j", 1500, 4000, 5);
  stop = true;
  junk.join();
  reader.join();
  server->RequestStop();
  server->Wait();
  INFO(r.join_error);
  REQUIRE(r.joined == 6);
  CHECK(r.all_replied());
  CHECK(server->Report().junk.dropped > 0);
}
