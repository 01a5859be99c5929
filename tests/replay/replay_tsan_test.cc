// aftershock-replay's frame threads under ThreadSanitizer: a trace the in-process server recorded
// is replayed on 4 threads under each parallel locking scheme (the server's RegionLocker and
// global lock, its barriers, its per-thread encoders), on one thread to the recorded hash, and
// on 4 threads in the logged order (--order log) to it too.
#include <catch2/catch.hpp>

#include <memory>

#include <spdlog/spdlog.h>

#include "server/sv/replay.h"
#include "server/sv/server.h"
#include "tests/server/play_harness.h"
#include "tests/support/scratch_dir.h"

TEST_CASE("replay threads under every parallel locking scheme race-free") {
  spdlog::set_level(spdlog::level::warn);
  const testing_util::ScratchDir scratch("aftershock_replay_tsan");
  const std::string data_dir = scratch.Path("data");
  REQUIRE(svtest::RecordTrace(data_dir, 8, "t", 1000, 5) == "");
  // One replay of the trace. The state ends as recorded whenever the commands run in the logged
  // order: on one thread, or with --order log.
  auto replay = [&data_dir](int threads, sv::LockingScheme scheme, bool log_order) {
    sv::ReplayOptions r;
    r.data_dir = data_dir;
    r.threads = threads;
    r.locking = scheme;
    r.log_order = log_order;
    if (log_order) r.assign = sv::Assignment::kRoundRobin;  // block puts 8 players on one thread
    std::unique_ptr<sv::Replay> engine;
    const core::Status s = sv::Replay::Create(r, &engine);
    INFO(s.ToString());
    REQUIRE(s.ok());
    REQUIRE(engine->Run().ok());
    const sv::StatsReport rep = engine->Report();
    CHECK(rep.replay.ticks > 0);
    CHECK(rep.replay.commands_refused == 0);
    if (threads == 1 || log_order) {
      REQUIRE(rep.replay.has_recorded_hash);
      CHECK(rep.replay.state_hash == rep.replay.recorded_state_hash);
    }
  };
  for (int threads : {1, 4}) {
    for (sv::LockingScheme scheme : {sv::LockingScheme::kGlobal, sv::LockingScheme::kAreanode,
                                     sv::LockingScheme::kAreanodeOpt}) {
      replay(threads, scheme, /*log_order=*/false);
    }
  }
  // --order log: the threads hand the turn to each other through an atomic, between their locks.
  replay(4, sv::LockingScheme::kAreanodeOpt, /*log_order=*/true);
}
