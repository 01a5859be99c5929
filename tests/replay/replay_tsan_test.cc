// aftershock-replay's frame threads under ThreadSanitizer: a trace the in-process server recorded
// is replayed on 4 threads under each parallel locking scheme (the server's RegionLocker and
// global lock, its barriers, its per-thread encoders), on one thread to the recorded hash, and
// on 4 threads in the logged order (--order log) to it too.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <memory>

#include <spdlog/spdlog.h>

#include "server/sv/replay.h"
#include "server/sv/server.h"
#include "tests/server/play_harness.h"

TEST_CASE("replay threads under every parallel locking scheme race-free") {
  spdlog::set_level(spdlog::level::warn);
  const std::string data_dir = "/tmp/aftershock_replay_tsan_" + std::to_string(getpid());
  REQUIRE(svtest::RecordTrace(data_dir, 8, "t", 1000, 5) == "");
  for (int threads : {1, 4}) {
    for (sv::LockingScheme scheme : {sv::LockingScheme::kGlobal, sv::LockingScheme::kAreanode,
                                     sv::LockingScheme::kAreanodeOpt}) {
      sv::ReplayOptions r;
      r.data_dir = data_dir;
      r.threads = threads;
      r.locking = scheme;
      std::unique_ptr<sv::Replay> replay;
      const core::Status s = sv::Replay::Create(r, &replay);
      INFO(s.ToString());
      REQUIRE(s.ok());
      REQUIRE(replay->Run().ok());
      const sv::StatsReport rep = replay->Report();
      CHECK(rep.replay.ticks > 0);
      CHECK(rep.replay.commands_refused == 0);
      if (threads == 1) {
        REQUIRE(rep.replay.has_recorded_hash);
        CHECK(rep.replay.state_hash == rep.replay.recorded_state_hash);
      }
    }
  }
  // --order log: the threads hand the turn to each other through an atomic, between their locks.
  sv::ReplayOptions r;
  r.data_dir = data_dir;
  r.threads = 4;
  r.locking = sv::LockingScheme::kAreanodeOpt;
  r.assign = sv::Assignment::kRoundRobin;
  r.log_order = true;
  std::unique_ptr<sv::Replay> replay;
  REQUIRE(sv::Replay::Create(r, &replay).ok());
  REQUIRE(replay->Run().ok());
  const sv::StatsReport rep = replay->Report();
  REQUIRE(rep.replay.has_recorded_hash);
  CHECK(rep.replay.state_hash == rep.replay.recorded_state_hash);
  std::filesystem::remove_all(data_dir);
}
