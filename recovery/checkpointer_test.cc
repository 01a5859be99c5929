// Checkpointer on FaultEnv: every algorithm writes backups whose images equal the state at their
// header tick (with the writer running alongside later ticks), backups alternate, a crash or an
// error in the middle of a checkpoint leaves the other backup usable, ENOSPC is a clear error.
#include <catch2/catch.hpp>
#include <limits>
#include <map>
#include <string>

#include "recovery/backup_format.h"
#include "recovery/checkpointer.h"
#include "recovery/fault_env.h"
#include "recovery/synthetic_state.h"

namespace recovery {

namespace bf = backup_format;

namespace {

constexpr uint32_t kObjects = 200;
constexpr uint32_t kSize = 48;

std::unique_ptr<Checkpointer> OpenCkpt(Env* env, Algorithm a, SyntheticState* state, uint64_t tick) {
  CheckpointOptions o;
  o.env = env;
  o.dir = "/db";
  o.algorithm = a;
  o.object_count = state->object_count();
  o.object_size = state->object_size();
  std::unique_ptr<Checkpointer> c;
  REQUIRE(Checkpointer::Open(o, state->data(), tick, &c).ok());
  return c;
}

// Runs ticks [from, to]: updates through the hook, boundary, and remembers each tick's state.
void RunTicks(Checkpointer* c, SyntheticState* state, uint64_t from, uint64_t to, bool wait_each,
              std::map<uint64_t, std::vector<uint8_t>>* history, int updates = 15) {
  for (uint64_t t = from; t <= to; ++t) {
    state->Apply(t, SyntheticState::MakePayload(5, t, state->object_count(), updates), c);
    REQUIRE(c->TickBoundary(t).ok());
    (*history)[t] = state->bytes();
    if (wait_each) REQUIRE(c->WaitIdle().ok());
  }
}

// Loads backup b and checks its image is the state at its tick. Returns the tick.
uint64_t CheckBackup(Env* env, int b, const std::map<uint64_t, std::vector<uint8_t>>& history,
                     uint32_t objects = kObjects, uint32_t size = kSize) {
  std::vector<uint8_t> image(uint64_t{objects} * size);
  bf::Header h;
  core::Status s = bf::LoadBackup(env, JoinPath("/db", bf::BackupFileName(b)), objects, size,
                                  image.data(), &h);
  INFO(s.ToString());
  REQUIRE(s.ok());
  REQUIRE(history.count(h.tick) == 1);
  CHECK(image == history.at(h.tick));
  return h.tick;
}

}  // namespace

TEST_CASE("every algorithm writes consistent, alternating backups", "[checkpoint]") {
  for (Algorithm a : {Algorithm::kNaive, Algorithm::kCou, Algorithm::kPingPong}) {
    for (bool wait_each : {true, false}) {
      INFO(AlgorithmName(a) << (wait_each ? " (one checkpoint per tick)" : " (writer overlaps ticks)"));
      FaultEnv env;
      SyntheticState state(kObjects, kSize);
      std::map<uint64_t, std::vector<uint8_t>> history;
      history[0] = state.bytes();
      auto c = OpenCkpt(&env, a, &state, 0);
      RunTicks(c.get(), &state, 1, 60, wait_each, &history);
      REQUIRE(c->WaitIdle().ok());
      RunTicks(c.get(), &state, 61, 62, true, &history);  // at least two whatever the speed
      CheckpointStats st = c->stats();
      REQUIRE(c->Close().ok());
      CHECK(st.checkpoints >= 2);
      CHECK(st.boundaries == 62);
      const uint64_t t0 = CheckBackup(&env, 0, history);
      const uint64_t t1 = CheckBackup(&env, 1, history);
      CHECK(t0 != t1);
      CHECK(std::max(t0, t1) == st.last_tick);
      if (wait_each) CHECK(st.checkpoints == 62);
    }
  }
}

// With an interval the idle writer sleeps until the next start is due (here: 25 days after the
// first), so Close must wake it. Before the first checkpoint there is no start to count from: a
// writer that is already waiting when tick 1 starts one must take it at its next poll (this part
// bites only when the writer reaches its wait before the first boundary, as it does in the server).
TEST_CASE("a checkpoint interval delays later starts, not the first one, and Close wakes the waiting writer",
          "[checkpoint]") {
  for (Algorithm a : {Algorithm::kNaive, Algorithm::kCou, Algorithm::kPingPong}) {
    INFO(AlgorithmName(a));
    FaultEnv env;
    SyntheticState state(kObjects, kSize);
    std::map<uint64_t, std::vector<uint8_t>> history;
    CheckpointOptions o;
    o.env = &env;
    o.dir = "/db";
    o.algorithm = a;
    o.object_count = kObjects;
    o.object_size = kSize;
    o.interval_ms = std::numeric_limits<int>::max();  // about 25 days
    std::unique_ptr<Checkpointer> c;
    REQUIRE(Checkpointer::Open(o, state.data(), 0, &c).ok());
    RunTicks(c.get(), &state, 1, 3, true, &history);  // WaitIdle after each boundary
    const CheckpointStats st = c->stats();
    REQUIRE(c->Close().ok());
    CHECK(st.checkpoints == 1);  // tick 1's; ticks 2 and 3 are inside the interval
    CHECK(st.last_tick == 1);
    CHECK(CheckBackup(&env, 0, history) == 1);
  }
}

TEST_CASE("backups stay exact when writes cover parts of objects and of 64-byte chunks", "[checkpoint]") {
  // 200-byte objects: three whole chunks and a partial one; SyntheticState rewrites each object
  // from a tick-dependent offset, so writes start inside chunks and touch one to four of them.
  for (Algorithm a : {Algorithm::kCou, Algorithm::kPingPong}) {
    for (bool wait_each : {true, false}) {
      INFO(AlgorithmName(a) << (wait_each ? " (one checkpoint per tick)" : " (writer overlaps ticks)"));
      FaultEnv env;
      SyntheticState state(300, 200);
      std::map<uint64_t, std::vector<uint8_t>> history;
      history[0] = state.bytes();
      auto c = OpenCkpt(&env, a, &state, 0);
      RunTicks(c.get(), &state, 1, 40, wait_each, &history, 60);
      REQUIRE(c->WaitIdle().ok());
      RunTicks(c.get(), &state, 41, 42, true, &history, 60);
      REQUIRE(c->Close().ok());
      CHECK(CheckBackup(&env, 0, history, 300, 200) != CheckBackup(&env, 1, history, 300, 200));
    }
  }
}

TEST_CASE("incremental checkpoints write only dirty objects after the first full ones", "[checkpoint]") {
  FaultEnv env;
  SyntheticState state(kObjects, kSize);
  std::map<uint64_t, std::vector<uint8_t>> history;
  auto c = OpenCkpt(&env, Algorithm::kCou, &state, 0);
  RunTicks(c.get(), &state, 1, 2, true, &history);  // two full checkpoints, one per backup
  CHECK(c->stats().objects_written == 2 * kObjects);
  state.Apply(3, std::string("\x07\0\0\0", 4), c.get());  // one object changes
  REQUIRE(c->TickBoundary(3).ok());
  history[3] = state.bytes();
  REQUIRE(c->WaitIdle().ok());
  // Backup 0 last saw tick 1: it needs the objects of ticks 2 and 3 (16 at most, plus the short
  // gaps between them that the writer fills to save write calls), not the whole state.
  const uint64_t written = c->stats().objects_written - 2 * kObjects;
  CHECK(written > 0);
  CHECK(written < kObjects / 2);
  REQUIRE(c->Close().ok());
  CHECK(CheckBackup(&env, 0, history) == 3);
  CHECK(CheckBackup(&env, 1, history) == 2);
}

TEST_CASE("a crash in the middle of a checkpoint leaves a usable backup", "[checkpoint][fault]") {
  for (Algorithm a : {Algorithm::kNaive, Algorithm::kCou, Algorithm::kPingPong}) {
    for (int fail_sync : {0, 1}) {  // 0: the image sync fails; 1: the header sync fails
      for (auto mode : {FaultEnv::CrashMode::kDropUnsynced, FaultEnv::CrashMode::kKeepPrefix,
                        FaultEnv::CrashMode::kReorder, FaultEnv::CrashMode::kGarble}) {
        INFO(AlgorithmName(a) << " failing sync " << fail_sync << " crash mode " << int(mode));
        FaultEnv env(11 + fail_sync);
        SyntheticState state(kObjects, kSize);
        std::map<uint64_t, std::vector<uint8_t>> history;
        auto c = OpenCkpt(&env, a, &state, 0);
        RunTicks(c.get(), &state, 1, 4, true, &history);
        // The next checkpoint dies before its commit is durable, then the power goes.
        env.InjectFault(FaultEnv::kOpSync, core::Status::IoError("EIO (injected)"), fail_sync, -1, "backup-");
        state.Apply(5, SyntheticState::MakePayload(5, 5, kObjects, 15), c.get());
        (void)c->TickBoundary(5);  // starts the doomed checkpoint (may already report its failure)
        history[5] = state.bytes();
        core::Status s = c->WaitIdle();
        CHECK(s.code() == core::Status::Code::kIoError);
        CHECK(s.message().find("backup-") != std::string::npos);
        CHECK(c->TickBoundary(6).code() == core::Status::Code::kIoError);  // sticky
        env.Crash(mode);
        c.reset();
        env.ClearFaults();
        // Whatever survived: each backup either fails verification or holds exactly its tick.
        int valid = 0;
        for (int b = 0; b < 2; ++b) {
          std::vector<uint8_t> image(kObjects * kSize);
          bf::Header h;
          if (bf::LoadBackup(&env, JoinPath("/db", bf::BackupFileName(b)), kObjects, kSize,
                             image.data(), &h).ok()) {
            ++valid;
            CHECK(image == history.at(h.tick));
          }
        }
        CHECK(valid >= 1);  // the other backup (tick 4 or 3) always survives
      }
    }
  }
}

TEST_CASE("ENOSPC during a checkpoint is a clear, sticky error", "[checkpoint][fault]") {
  FaultEnv env;
  SyntheticState state(kObjects, kSize);
  std::map<uint64_t, std::vector<uint8_t>> history;
  auto c = OpenCkpt(&env, Algorithm::kCou, &state, 0);
  RunTicks(c.get(), &state, 1, 1, true, &history);  // backup-0 holds tick 1
  env.SetSpaceLimit(bf::kHeaderRegion + kObjects * kSize + 1000);  // no room for backup-1
  state.Apply(2, SyntheticState::MakePayload(5, 2, kObjects, 15), c.get());
  (void)c->TickBoundary(2);  // starts the checkpoint (may already report its failure)
  core::Status s = c->WaitIdle();
  CHECK(s.code() == core::Status::Code::kNoSpace);
  CHECK(s.message().find("backup-1.ckpt") != std::string::npos);
  CHECK(s.message().find("tick 2") != std::string::npos);
  REQUIRE(c->Close().code() == core::Status::Code::kNoSpace);
  CHECK(CheckBackup(&env, 0, history) == 1);
}

TEST_CASE("checkpointer refuses a backup of another geometry and never overwrites the only valid one",
          "[checkpoint]") {
  FaultEnv env;
  SyntheticState state(kObjects, kSize);
  std::map<uint64_t, std::vector<uint8_t>> history;
  {
    auto c = OpenCkpt(&env, Algorithm::kCou, &state, 0);
    RunTicks(c.get(), &state, 1, 1, true, &history);  // only backup-0 valid, tick 1
  }
  {
    auto c = OpenCkpt(&env, Algorithm::kCou, &state, 1);  // restart: next target is backup-1
    RunTicks(c.get(), &state, 2, 2, true, &history);
  }
  CHECK(CheckBackup(&env, 0, history) == 1);
  CHECK(CheckBackup(&env, 1, history) == 2);
  CheckpointOptions o;
  o.env = &env;
  o.dir = "/db";
  o.object_count = kObjects + 1;
  o.object_size = kSize;
  std::unique_ptr<Checkpointer> c;
  SyntheticState bigger(kObjects + 1, kSize);
  core::Status s = Checkpointer::Open(o, bigger.data(), 0, &c);
  CHECK(s.code() == core::Status::Code::kInvalidArgument);
  CHECK(s.message().find("200 objects") != std::string::npos);
}

}  // namespace recovery
