// The in-process server with a data directory (TSan too): worker threads record commands under
// their locks, the request phase's last thread logs the frame, the master runs the checkpoint
// boundary; clients play; after a clean stop a second server recovers from the directory to
// exactly the first one's final state, and every command a client saw applied is still applied;
// its replay check (--recovery-check refuse, the strictest) matches.
#include <catch2/catch.hpp>

#include <memory>

#include <spdlog/spdlog.h>

#include "server/sv/server.h"
#include "tests/server/play_harness.h"
#include "tests/support/scratch_dir.h"

namespace {

void PlayStopRecover(sv::ServerOptions o, recovery::Algorithm algorithm) {
  spdlog::set_level(spdlog::level::warn);
  const testing_util::ScratchDir scratch("aftershock_durability_server");  // goes after the servers
  o.data_dir = scratch.Path("data");
  o.checkpoint = algorithm;
  o.sync_mode = recovery::SyncMode::kSync;
  uint64_t final_hash = 0;
  svtest::PlayResult play;
  {
    std::unique_ptr<sv::Server> server;
    REQUIRE(sv::Server::Create(o, &server).ok());
    REQUIRE(server->durability_enabled());
    CHECK_FALSE(server->recovery_report().found_state);
    server->Start();
    play = svtest::Play(server->lobby_port(), 10, "d", 1500, 4000, 3);
    server->RequestStop();
    server->Wait();
    REQUIRE(server->fatal_status().ok());
    INFO(play.join_error);
    REQUIRE(play.joined == 10);
    CHECK(play.all_replied());
    final_hash = server->world().StateHash();
    const sv::StatsReport rep = server->Report();
    REQUIRE(rep.durability.enabled);
    CHECK(rep.durability.stats.ticks_logged == rep.frames);
    CHECK(rep.durability.stats.durable_tick == rep.durability.stats.ticks_logged);
    if (algorithm != recovery::Algorithm::kNone) {
      CHECK(rep.durability.stats.checkpoint.boundaries > 0);
    }
  }
  // The strictest replay check: a healthy directory must never be refused.
  o.recovery_check = sv::RecoveryCheck::kRefuse;
  std::unique_ptr<sv::Server> again;
  const core::Status created = sv::Server::Create(o, &again);
  INFO(created.ToString());
  REQUIRE(created.ok());
  const durability::WorldRecoveryReport& r = again->recovery_report();
  CHECK(r.found_state);
  CHECK(r.state_hash == final_hash);
  const durability::ReplayCheck& c = r.replay_check;
  INFO("replay check " << durability::ReplayCheckName(c.outcome) << ": " << c.detail);
  CHECK(c.outcome != durability::ReplayCheck::Outcome::kOff);
  CHECK(c.outcome != durability::ReplayCheck::Outcome::kDiffers);
  // A clean stop waits for its checkpoint, so both backups are whole and the check runs.
  if (algorithm != recovery::Algorithm::kNone) CHECK(c.outcome == durability::ReplayCheck::Outcome::kMatch);
  const game::World& w = again->world();  // not started: no thread touches it
  for (int i = 0; i < 10; ++i) {
    // Online, unless its client's disconnect (when Play returned) reached a frame before the
    // stop: then the logged leave moved it into the record store, with its last sequence.
    game::EntityId id = w.FindPlayer("d" + std::to_string(i));
    if (id == 0) id = w.FindRecord("d" + std::to_string(i));
    REQUIRE(id != 0);
    CHECK(w.Get(id).last_cmd_sequence >= play.applied[i]);  // nothing acknowledged is lost
  }
  again.reset();
}

}  // namespace

TEST_CASE("durable server, fixed frames, areanode-opt, cou: stop and recover") {
  PlayStopRecover(svtest::TestOptions(sv::LockingScheme::kAreanodeOpt, 3),
                  recovery::Algorithm::kCou);
}

TEST_CASE("durable server, request frames, pingpong: stop and recover") {
  sv::ServerOptions o = svtest::TestOptions(sv::LockingScheme::kAreanodeOpt, 3);
  o.frame_mode = sv::FrameMode::kRequest;
  PlayStopRecover(o, recovery::Algorithm::kPingPong);
}

TEST_CASE("durable server, global locking, naive: stop and recover") {
  PlayStopRecover(svtest::TestOptions(sv::LockingScheme::kGlobal, 2),
                  recovery::Algorithm::kNaive);
}
