// The parallel schemes under ThreadSanitizer (label tsan): several worker threads and clients in
// one process, with the game's region check on, for global, areanode and areanode-opt locking in
// fixed mode and the request-driven frame gate. A data race or a deadlock fails the run (TSan
// reports, or the test times out); the assertions check that the play itself went through.
#include <catch2/catch.hpp>

#include <memory>

#include <spdlog/spdlog.h>

#include "server/sv/server.h"
#include "tests/server/play_harness.h"

namespace {

void Race(sv::ServerOptions o, int clients) {
  spdlog::set_level(spdlog::level::warn);
  std::unique_ptr<sv::Server> server;
  REQUIRE(sv::Server::Create(o, &server).ok());
  server->Start();
  svtest::PlayResult r = svtest::Play(o.port, clients, "t", 1500, 4000, 3);
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
  Race(svtest::TestOptions(28500, sv::LockingScheme::kGlobal, 4), 12);
}

TEST_CASE("tsan: areanode locking with 4 threads") {
  Race(svtest::TestOptions(28510, sv::LockingScheme::kAreanode, 4), 12);
}

TEST_CASE("tsan: areanode-opt locking with 4 threads") {
  Race(svtest::TestOptions(28520, sv::LockingScheme::kAreanodeOpt, 4), 12);
}

TEST_CASE("tsan: request frame mode with 3 threads") {
  sv::ServerOptions o = svtest::TestOptions(28530, sv::LockingScheme::kAreanodeOpt, 3);
  o.frame_mode = sv::FrameMode::kRequest;
  Race(o, 12);
}
