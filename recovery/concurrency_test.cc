// cou and pingpong under real concurrency (run under TSan): several updater threads write
// interleaved objects (neighbours share dirty-bit words and cache lines) through the hook while
// the asynchronous writer copies; every backup must hold exactly the state of its tick.
#include <barrier>
#include <catch2/catch.hpp>
#include <map>
#include <random>
#include <thread>

#include "recovery/backup_format.h"
#include "recovery/checkpointer.h"
#include "recovery/fault_env.h"
#include "recovery/synthetic_state.h"

namespace recovery {

namespace bf = backup_format;

TEST_CASE("cou and pingpong stay consistent with concurrent updaters and writer", "[checkpoint][tsan]") {
  constexpr uint32_t kObjects = 512;
  constexpr uint32_t kSize = 64;
  constexpr int kThreads = 4;
  constexpr uint64_t kTicks = 150;
  for (Algorithm a : {Algorithm::kCou, Algorithm::kPingPong}) {
    INFO(AlgorithmName(a));
    FaultEnv env;
    SyntheticState state(kObjects, kSize);
    CheckpointOptions o;
    o.env = &env;
    o.dir = "/db";
    o.algorithm = a;
    o.object_count = kObjects;
    o.object_size = kSize;
    std::unique_ptr<Checkpointer> ckpt;
    REQUIRE(Checkpointer::Open(o, state.data(), 0, &ckpt).ok());

    std::map<uint64_t, std::vector<uint8_t>> history;
    history[0] = state.bytes();
    uint64_t tick = 0;  // written by the main thread between frames only
    core::Status boundary_status;
    // Frame = all updaters update, then the completion step (one thread, no updater running)
    // is the tick boundary: exactly the orchestrator's contract.
    std::barrier frame(kThreads, [&]() noexcept {
      core::Status s = ckpt->TickBoundary(tick);
      if (!s.ok() && boundary_status.ok()) boundary_status = s;
      history[tick] = state.bytes();
      ++tick;
    });
    tick = 1;
    std::vector<std::thread> threads;
    for (int k = 0; k < kThreads; ++k) {
      threads.emplace_back([&, k] {
        std::mt19937 rng(k + 1);
        for (uint64_t t = 1; t <= kTicks; ++t) {
          for (int u = 0; u < 40; ++u) {
            // Thread k owns objects with id % kThreads == k: one writer per object.
            uint32_t id = static_cast<uint32_t>((rng() % (kObjects / kThreads)) * kThreads + k);
            state.Update(id, t, ckpt.get());
          }
          frame.arrive_and_wait();
        }
      });
    }
    for (auto& t : threads) t.join();
    REQUIRE(boundary_status.ok());
    REQUIRE(ckpt->WaitIdle().ok());
    for (int extra = 0; extra < 2; ++extra) {  // at least two checkpoints, however slow the writer
      REQUIRE(ckpt->TickBoundary(tick).ok());
      history[tick] = state.bytes();
      REQUIRE(ckpt->WaitIdle().ok());
      ++tick;
    }
    CheckpointStats st = ckpt->stats();
    REQUIRE(ckpt->Close().ok());
    CHECK(st.checkpoints >= 2);
    for (int b = 0; b < 2; ++b) {
      std::vector<uint8_t> image(kObjects * kSize);
      bf::Header h;
      REQUIRE(bf::LoadBackup(&env, "/db/" + bf::BackupFileName(b), kObjects, kSize, image.data(), &h).ok());
      REQUIRE(history.count(h.tick) == 1);
      CHECK(image == history[h.tick]);
    }
  }
}

}  // namespace recovery
