// The Durability facade on FaultEnv, one thread: log + checkpoint + recover round trips, the
// data directory's identity check, errors that must stop the server (fsync failure, ENOSPC, a
// damaged payload), and the hash log.
#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>

#include <sys/stat.h>
#include <unistd.h>

#include "recovery/backup_format.h"
#include "recovery/crc32c.h"
#include "recovery/fault_env.h"
#include "recovery/log_format.h"
#include "recovery/log_reader.h"
#include "recovery/log_writer.h"
#include "server/durability/durability.h"
#include "server/durability/parallel_replay.h"
#include "server/durability/tick_apply.h"
#include "server/durability/tick_recorder.h"
#include "server/durability/world_identity.h"
#include "server/game/cmd_script.h"
#include "server/game/game_test_util.h"

namespace durability {
namespace {

constexpr char kDir[] = "/data/dur";

game::WorldConfig ArenaConfig(int max_players = 64) {
  game::WorldConfig config;
  config.max_players = max_players;
  return config;
}

game::testing::TestWorld Arena(int max_players = 64) {
  return game::testing::LoadWorld("maps/dm_arena.map", ArenaConfig(max_players));
}

DurabilityOptions Options(recovery::Env* env, recovery::Algorithm algorithm) {
  DurabilityOptions o;
  o.env = env;
  o.data_dir = kDir;
  o.algorithm = algorithm;
  o.sync_mode = recovery::SyncMode::kSync;
  return o;
}

core::Status OpenIn(recovery::Env* env, recovery::Algorithm a, game::testing::TestWorld* w,
                    WorldRecoveryReport* rep, std::unique_ptr<Durability>* dur) {
  return Durability::Open(Options(env, a), w->world.get(), rep, dur);
}

// Drives serial ticks like the server's master: world part, commands, log, wait, boundary.
class Driver {
 public:
  Driver(game::World* world, Durability* dur) : world_(world), dur_(dur), recorder_(1, 1, 0) {}

  core::Status Tick() {
    const uint64_t tick = dur_->recovered_tick() + ++ran_;
    TickRecord r;
    if (bots_.size() < 8) {
      const int k = static_cast<int>(bots_.size());
      const game::JoinResult j = ApplyJoin(world_, "bot" + std::to_string(k), 50 + k, &r);
      if (!j.status.ok()) return j.status;
      game::testing::ScriptOptions opts;
      opts.attack_percent = 25;
      bots_.emplace_back(j.player, 900 + k, opts);
    }
    ApplyWorldPhase(world_, true, &r);
    for (auto& bot : bots_) {
      const game::UserCmd c = bot.Next(*world_);
      if (world_->ExecuteCommand(bot.player(), c).ok()) recorder_.Record(0, bot.player(), c, {});
    }
    recorder_.MergeInto(&r);
    core::Status s = dur_->AppendTickRecord(tick, r);
    if (s.ok()) s = dur_->WaitDurable(tick);
    hashes_[tick] = world_->StateHash();
    if (s.ok()) s = dur_->TickBoundary(tick);
    return s;
  }
  uint64_t hash_at(uint64_t tick) const { return hashes_.at(tick); }

 private:
  game::World* world_;
  Durability* dur_;
  TickRecorder recorder_;
  std::vector<game::testing::ScriptedPlayer> bots_;
  uint64_t ran_ = 0;
  std::map<uint64_t, uint64_t> hashes_;
};

TEST_CASE("a fresh directory starts at tick 0, and reopening it recovers every tick") {
  for (recovery::Algorithm a : {recovery::Algorithm::kNone, recovery::Algorithm::kCou,
                                recovery::Algorithm::kNaive, recovery::Algorithm::kPingPong}) {
    INFO(recovery::AlgorithmName(a));
    recovery::FaultEnv env;
    auto live = Arena();
    WorldRecoveryReport rep;
    std::unique_ptr<Durability> dur;
    REQUIRE(Durability::Open(Options(&env, a), live.world.get(), &rep, &dur).ok());
    CHECK_FALSE(rep.found_state);
    CHECK(dur->recovered_tick() == 0);
    CHECK(env.FileExists(std::string(kDir) + "/world.id"));
    Driver driver(live.world.get(), dur.get());
    for (int t = 0; t < 25; ++t) REQUIRE(driver.Tick().ok());
    REQUIRE(dur->WaitCheckpointIdle().ok());
    const DurabilityStats st = dur->stats();
    CHECK(st.ticks_logged == 25);
    CHECK(st.durable_tick == 25);
    CHECK(st.log.syncs >= 1);
    if (a != recovery::Algorithm::kNone) CHECK(st.checkpoint.checkpoints >= 1);
    REQUIRE(dur->Close().ok());

    auto back = Arena();
    REQUIRE(Durability::Open(Options(&env, a), back.world.get(), &rep, &dur).ok());
    CHECK(rep.found_state);
    CHECK(rep.recovered_tick == 25);
    CHECK(rep.checkpoint_tick + rep.ticks_replayed == 25);
    CHECK(rep.from_checkpoint == (a != recovery::Algorithm::kNone));
    CHECK(rep.state_hash == driver.hash_at(25));
    CHECK(back.world->StateHash() == live.world->StateHash());
    CHECK(dur->recovered_tick() == 25);
    REQUIRE(dur->Close().ok());  // before `back` goes: the Durability must not outlive its world
  }
}

TEST_CASE("a data directory of another map or configuration is refused") {
  recovery::FaultEnv env;
  {
    auto w = Arena(64);
    WorldRecoveryReport rep;
    std::unique_ptr<Durability> dur;
    REQUIRE(OpenIn(&env, recovery::Algorithm::kCou, &w, &rep, &dur).ok());
    Driver driver(w.world.get(), dur.get());
    REQUIRE(driver.Tick().ok());
  }
  auto other = Arena(32);
  WorldRecoveryReport rep;
  std::unique_ptr<Durability> dur;
  core::Status s = OpenIn(&env, recovery::Algorithm::kCou, &other, &rep, &dur);
  CHECK(s.code() == core::Status::Code::kInvalidArgument);
  CHECK_THAT(s.message(), Catch::Contains("another map or configuration"));
  CHECK_THAT(s.message(), Catch::Contains("max_players 64 there, 32 here"));

  // Log files without world.id: not ours.
  recovery::FaultEnv env2;
  env2.PutFile("/data/dur/log-000001.aslog", "garbage");
  s = OpenIn(&env2, recovery::Algorithm::kCou, &other, &rep, &dur);
  CHECK(s.code() == core::Status::Code::kInvalidArgument);
  CHECK_THAT(s.message(), Catch::Contains("no world.id"));

  // A garbled world.id.
  recovery::FaultEnv env3;
  env3.PutFile("/data/dur/world.id", "aftershock-world 1\nmap_hash x\n");
  s = OpenIn(&env3, recovery::Algorithm::kCou, &other, &rep, &dur);
  CHECK(s.code() == core::Status::Code::kCorruption);

  // A world.id longer than one can be is refused unread (a huge one used to abort the server).
  recovery::FaultEnv env4;
  env4.PutFile("/data/dur/world.id", std::string(kMaxIdentityBytes + 1, 'x'));
  s = OpenIn(&env4, recovery::Algorithm::kCou, &other, &rep, &dur);
  CHECK(s.code() == core::Status::Code::kCorruption);
  CHECK(s.message() == "/data/dur/world.id is 4097 bytes, more than the 4096 it can be");
}

TEST_CASE("identity text round trip") {
  auto w = Arena();
  const WorldIdentity id = IdentityOf(w.world->globals());
  WorldIdentity back;
  REQUIRE(ParseIdentity(FormatIdentity(id), "world.id", &back).ok());
  CHECK(back == id);
  CHECK_FALSE(ParseIdentity("aftershock-world 2\n", "world.id", &back).ok());
  CHECK_FALSE(ParseIdentity(FormatIdentity(id) + "extra 1\n", "world.id", &back).ok());

  // A count past 32 bits was cut to its low bits and matched another world; a number past 64
  // bits became the largest one; a key given twice took the last value.
  auto with = [&](const std::string& key, const std::string& value) {
    std::string text = FormatIdentity(id);
    const size_t at = text.find("\n" + key + " ") + 1;
    const size_t end = text.find('\n', at);
    return text.replace(at, end - at, key + " " + value);
  };
  const std::string wrapped = std::to_string((uint64_t{1} << 32) + id.object_count);
  core::Status s = ParseIdentity(with("object_count", wrapped), "world.id", &back);
  CHECK(s.code() == core::Status::Code::kCorruption);
  CHECK(s.message() == "world.id line 3: object_count " + wrapped + " is out of range");
  CHECK_FALSE(ParseIdentity(with("seed", "18446744073709551616"), "world.id", &back).ok());
  CHECK(ParseIdentity(with("seed", "18446744073709551615"), "world.id", &back).ok());
  s = ParseIdentity(FormatIdentity(id) + "tick_ms 33\n", "world.id", &back);
  CHECK(s.message().find("key 'tick_ms' given twice") != std::string::npos);
}

TEST_CASE("a failed log fsync stops durability: every later call returns the error") {
  recovery::FaultEnv env;
  auto w = Arena();
  WorldRecoveryReport rep;
  std::unique_ptr<Durability> dur;
  REQUIRE(OpenIn(&env, recovery::Algorithm::kCou, &w, &rep, &dur).ok());
  Driver driver(w.world.get(), dur.get());
  REQUIRE(driver.Tick().ok());
  env.InjectFault(recovery::FaultEnv::kOpSync, core::Status::IoError("fdatasync: EIO"), 0, -1,
                  ".aslog");
  core::Status s = driver.Tick();
  REQUIRE_FALSE(s.ok());
  CHECK_THAT(s.ToString(), Catch::Contains("EIO"));
  CHECK_FALSE(dur->status().ok());
  CHECK_FALSE(driver.Tick().ok());  // sticky
  CHECK(dur->durable_tick() == 1);
}

TEST_CASE("a full disk surfaces as NoSpace") {
  recovery::FaultEnv env;
  auto w = Arena();
  WorldRecoveryReport rep;
  std::unique_ptr<Durability> dur;
  REQUIRE(OpenIn(&env, recovery::Algorithm::kNone, &w, &rep, &dur).ok());
  Driver driver(w.world.get(), dur.get());
  REQUIRE(driver.Tick().ok());
  env.SetSpaceLimit(1);  // already past it: the next write fails
  core::Status s;
  for (int t = 0; t < 5 && s.ok(); ++t) s = driver.Tick();
  CHECK(s.code() == core::Status::Code::kNoSpace);
}

TEST_CASE("a record whose payload does not decode stops recovery with a clear message") {
  recovery::FaultEnv env;
  {
    auto w = Arena();
    WorldRecoveryReport rep;
    std::unique_ptr<Durability> dur;
    REQUIRE(OpenIn(&env, recovery::Algorithm::kNone, &w, &rep, &dur).ok());
    Driver driver(w.world.get(), dur.get());
    REQUIRE(driver.Tick().ok());
    REQUIRE(driver.Tick().ok());
  }
  {  // A checksum-valid record of tick 3 with a payload that is not a tick record.
    recovery::LogOptions lo;
    lo.env = &env;
    lo.dir = kDir;
    lo.next_tick = 3;
    std::unique_ptr<recovery::LogWriter> log;
    REQUIRE(recovery::LogWriter::Open(lo, &log).ok());
    REQUIRE(log->Append(3, std::string(7, 'x')).ok());
    REQUIRE(log->Close().ok());
  }
  auto w = Arena();
  WorldRecoveryReport rep;
  std::unique_ptr<Durability> dur;
  core::Status s = OpenIn(&env, recovery::Algorithm::kNone, &w, &rep, &dur);
  CHECK(s.code() == core::Status::Code::kCorruption);
  CHECK_THAT(s.message(), Catch::Contains("log tick 3"));
}

TEST_CASE("the hash log holds the live hash of every logged tick") {
  recovery::FaultEnv env;
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("dur_hash_" + std::to_string(::getpid()) + ".log");
  std::filesystem::remove(path);
  auto w = Arena();
  DurabilityOptions o = Options(&env, recovery::Algorithm::kCou);
  o.hash_log_path = path.string();
  WorldRecoveryReport rep;
  std::unique_ptr<Durability> dur;
  REQUIRE(Durability::Open(o, w.world.get(), &rep, &dur).ok());
  Driver driver(w.world.get(), dur.get());
  for (int t = 0; t < 5; ++t) REQUIRE(driver.Tick().ok());
  std::ifstream in(path);
  uint64_t tick = 0;
  std::string hex;
  int lines = 0;
  while (in >> tick >> hex) {
    ++lines;
    CHECK(tick == static_cast<uint64_t>(lines));
    CHECK(std::stoull(hex, nullptr, 16) == driver.hash_at(tick));
  }
  CHECK(lines == 5);
  std::filesystem::remove(path);
}

// A pipe in the hash log's place used to block the server's start-up until a reader came.
TEST_CASE("a hash log that is not a regular file is refused at once") {
  recovery::FaultEnv env;
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("dur_hash_fifo_" + std::to_string(::getpid()) + ".log");
  std::filesystem::remove(path);
  REQUIRE(::mkfifo(path.c_str(), 0644) == 0);
  auto w = Arena();
  DurabilityOptions o = Options(&env, recovery::Algorithm::kCou);
  o.hash_log_path = path.string();
  WorldRecoveryReport rep;
  std::unique_ptr<Durability> dur;
  const core::Status s = Durability::Open(o, w.world.get(), &rep, &dur);
  CHECK(s.code() == core::Status::Code::kIoError);
  CHECK(s.message() == "open " + path.string() + ": not a hash log (a pipe)");
  std::filesystem::remove(path);
}

// Every file of dir with its bytes (to show that a read-only recovery wrote nothing).
std::map<std::string, std::string> DirContents(recovery::Env* env, const std::string& dir) {
  std::vector<std::string> names;
  REQUIRE(env->ListDir(dir, &names).ok());
  std::map<std::string, std::string> out;
  for (const std::string& n : names) {
    REQUIRE(recovery::ReadWholeFile(env, recovery::JoinPath(dir, n), 1ull << 30, &out[n]).ok());
  }
  return out;
}

// Rewrites backup `index` with one byte of its last object changed, and its checksums made
// good again: a backup that verifies but holds a state the log does not replay to.
void RewriteBackupWithOtherState(recovery::Env* env, int index) {
  namespace bf = recovery::backup_format;
  std::unique_ptr<recovery::File> f;
  REQUIRE(env->Open(std::string(kDir) + "/" + bf::BackupFileName(index),
                    recovery::OpenMode::kReadWrite, &f).ok());
  std::string head, image;
  bf::Header h;
  REQUIRE(f->Read(0, bf::kHeaderSize, &head).ok());
  REQUIRE(bf::DecodeHeader(head, "backup", &h).ok());
  REQUIRE(f->Read(bf::kHeaderRegion, h.object_count * h.object_size, &image).ok());
  image[image.size() - 7] ^= 0x5a;
  std::vector<uint32_t> crcs(h.object_count);
  for (uint64_t i = 0; i < h.object_count; ++i) {
    crcs[i] = recovery::crc32c::Value(image.data() + i * h.object_size, h.object_size);
  }
  h.image_crc = bf::ImageCrc(crcs.data(), crcs.size());
  REQUIRE(f->PWrite(0, bf::EncodeHeader(h)).ok());
  REQUIRE(f->PWrite(bf::kHeaderRegion, image).ok());
  REQUIRE(f->Sync().ok());
}

// Flips one bit of backup `index`'s image, checksums left as they were: its header verifies, its
// image does not (a checkpoint caught mid-write into the file looks the same).
void DamageBackupImage(recovery::Env* env, int index) {
  namespace bf = recovery::backup_format;
  std::unique_ptr<recovery::File> f;
  REQUIRE(env->Open(std::string(kDir) + "/" + bf::BackupFileName(index),
                    recovery::OpenMode::kReadWrite, &f).ok());
  std::string byte;
  REQUIRE(f->Read(bf::kHeaderRegion + 300, 1, &byte).ok());
  byte[0] = static_cast<char>(byte[0] ^ 0x01);
  REQUIRE(f->PWrite(bf::kHeaderRegion + 300, byte).ok());
}

// Flips one bit in the payload of the logged record of `tick` (checksums left as they were). The
// records are found by the reader's own walk (recovery::ParseSegment).
void FlipPayloadBitOfTick(recovery::Env* env, uint64_t tick) {
  std::vector<std::string> names;
  REQUIRE(env->ListDir(kDir, &names).ok());
  for (const std::string& name : names) {
    uint64_t number = 0;
    if (!recovery::log_format::ParseSegmentFileName(name, &number)) continue;
    std::unique_ptr<recovery::File> f;
    REQUIRE(env->Open(std::string(kDir) + "/" + name, recovery::OpenMode::kReadWrite, &f).ok());
    uint64_t size = 0;
    REQUIRE(f->Size(&size).ok());
    std::string data;
    REQUIRE(f->Read(0, size, &data).ok());
    int64_t at = -1;  // the offset of a byte in the middle of the record's payload
    recovery::SegmentInfo info;
    REQUIRE(recovery::ParseSegment(data, name, number, &info,
                                   [&](uint64_t t, std::string_view payload) {
                                     if (t == tick && !payload.empty()) {
                                       at = payload.data() + payload.size() / 2 - data.data();
                                     }
                                     return core::Status::OK();
                                   }).ok());
    if (at < 0) continue;
    const std::string byte(1, static_cast<char>(data[static_cast<size_t>(at)] ^ 0x04));
    REQUIRE(f->PWrite(static_cast<uint64_t>(at), byte).ok());
    return;
  }
  FAIL("no logged record of tick " << tick);
}

// The backups as recovery sees them: the one it loads (Durability::RecoverReadOnly's choice) and
// the other one's tick, from its header.
struct BackupsOnDisk {
  int newer = -1;
  uint64_t newer_tick = 0;
  uint64_t older_tick = 0;
};
BackupsOnDisk ReadBackups(recovery::Env* env) {
  auto probe = Arena();
  DurabilityOptions o = Options(env, recovery::Algorithm::kCou);
  WorldRecoveryReport r;
  REQUIRE(Durability::RecoverReadOnly(o, probe.world.get(), &r).ok());
  REQUIRE(r.from_checkpoint);
  BackupsOnDisk b;
  b.newer = r.backup_index;
  b.newer_tick = r.checkpoint_tick;
  for (const auto& h : recovery::backup_format::ReadHeaders(env, kDir)) {
    if (h.index != b.newer && h.status.ok()) b.older_tick = h.header.tick;
  }
  return b;
}

// Open's options with the replay check on, its worlds built on `scratch`'s map and collision.
DurabilityOptions CheckOptions(recovery::Env* env, recovery::Algorithm a,
                               const game::testing::TestWorld& scratch, bool refuse = false) {
  DurabilityOptions o = Options(env, a);
  o.make_check_world = [&scratch](std::unique_ptr<game::World>* out) {  // Arena()'s configuration
    return game::World::Create(scratch.map, *scratch.collision, ArenaConfig(), out);
  };
  o.refuse_differing_replay = refuse;
  return o;
}

// Plays 30 ticks with checkpoints into env's kDir, at least two of them committed, at different
// ticks; the live hash after each tick.
std::map<uint64_t, uint64_t> RecordWithCheckpoints(recovery::Env* env, recovery::Algorithm a) {
  auto live = Arena();
  WorldRecoveryReport rep;
  std::unique_ptr<Durability> dur;
  REQUIRE(OpenIn(env, a, &live, &rep, &dur).ok());
  CHECK(rep.replay_check.outcome == ReplayCheck::Outcome::kOff);  // no make_check_world
  Driver driver(live.world.get(), dur.get());
  std::map<uint64_t, uint64_t> hashes;
  for (uint64_t t = 1; t <= 30; ++t) {
    REQUIRE(driver.Tick().ok());
    hashes[t] = driver.hash_at(t);
    // The checkpoints run on their own thread: waiting now and then makes sure that at least two
    // commit at different ticks (the next boundary starts the next one).
    if (t % 10 == 0) REQUIRE(dur->WaitCheckpointIdle().ok());
  }
  REQUIRE(dur->WaitCheckpointIdle().ok());
  REQUIRE(dur->Close().ok());
  return hashes;
}

TEST_CASE("the replay check replays the older backup to the recovered one") {
  namespace bf = recovery::backup_format;
  auto scratch = Arena();  // the check's worlds use its map and collision world
  for (recovery::Algorithm a : {recovery::Algorithm::kCou, recovery::Algorithm::kNaive,
                                recovery::Algorithm::kPingPong}) {
    INFO(recovery::AlgorithmName(a));
    // Reopened as the server does with --replay-threads 2; by default every check that can runs
    // beside recovery (the test's backups are a few ticks apart, under the options' default span).
    auto reopen = [&](recovery::Env* env, WorldRecoveryReport* r, double beside_min_span_ms = 0) {
      DurabilityOptions o = CheckOptions(env, a, scratch);
      o.replay_threads = 2;
      o.check_beside_min_span_ms = beside_min_span_ms;
      auto back = Arena();
      std::unique_ptr<Durability> d;
      REQUIRE(Durability::Open(o, back.world.get(), r, &d).ok());  // never fatal
      REQUIRE(d->Close().ok());
    };
    {
      recovery::FaultEnv env;
      const auto live = RecordWithCheckpoints(&env, a);
      WorldRecoveryReport r;
      reopen(&env, &r);
      CHECK(r.state_hash == live.at(30));  // the check never changes the recovery
      const ReplayCheck& c = r.replay_check;
      INFO(c.detail);
      REQUIRE(c.outcome == ReplayCheck::Outcome::kMatch);
      CHECK(c.to_tick == r.checkpoint_tick);
      CHECK(c.from_tick > 0);  // a backup, not the initial world
      CHECK(c.from_tick < c.to_tick);
      CHECK(c.backup_hash == live.at(c.to_tick));
      CHECK(c.replayed_hash == c.backup_hash);
      CHECK(std::string(ReplayCheckName(c.outcome)) == "match");
      CHECK(c.beside_recovery);  // it ran on its own thread while recovery ran
      CHECK(r.replay_threads == 1);  // on the other one

      // With the default span the same short check runs after recovery, which keeps both threads.
      WorldRecoveryReport after;
      reopen(&env, &after, DurabilityOptions{}.check_beside_min_span_ms);
      CHECK(after.replay_check.outcome == ReplayCheck::Outcome::kMatch);
      CHECK_FALSE(after.replay_check.beside_recovery);
      CHECK(after.replay_threads == 2);
    }
    {  // the newer backup's image does not verify: recovery loads the older one, so the check
       // that ran beside recovery (towards the newer one's tick) is dropped and it runs again
       // after recovery, against the backup loaded, which has no older one
      recovery::FaultEnv env;
      const auto live = RecordWithCheckpoints(&env, a);
      const BackupsOnDisk b = ReadBackups(&env);
      DamageBackupImage(&env, b.newer);
      WorldRecoveryReport r;
      reopen(&env, &r);
      CHECK(r.state_hash == live.at(30));  // the older backup and the log after it
      CHECK(r.checkpoint_tick == b.older_tick);
      const ReplayCheck& c = r.replay_check;
      INFO(c.detail);
      CHECK(c.outcome == ReplayCheck::Outcome::kNotRun);
      CHECK_FALSE(c.beside_recovery);
      CHECK(c.to_tick == b.older_tick);
      CHECK(c.detail == "no other backup older than tick " + std::to_string(b.older_tick));
    }
    {  // a newer backup that verifies but is not what the log replays to: differs
      recovery::FaultEnv env;
      const auto live = RecordWithCheckpoints(&env, a);
      const BackupsOnDisk b = ReadBackups(&env);
      const uint64_t tick = b.newer_tick;
      RewriteBackupWithOtherState(&env, b.newer);
      WorldRecoveryReport r;
      reopen(&env, &r);
      CHECK(r.checkpoint_tick == tick);
      CHECK(r.replay_check.outcome == ReplayCheck::Outcome::kDiffers);
      CHECK(r.replay_check.replayed_hash == live.at(tick));
      CHECK(r.replay_check.backup_hash != live.at(tick));
      CHECK(r.replay_check.detail.find("replayed to") != std::string::npos);

      // Refusing: Open fails before its writers open, and the directory is as it was.
      const std::map<std::string, std::string> before = DirContents(&env, kDir);
      auto back = Arena();
      std::unique_ptr<Durability> d;
      const core::Status s = Durability::Open(CheckOptions(&env, a, scratch, /*refuse=*/true),
                                              back.world.get(), &r, &d);
      INFO(s.ToString());
      CHECK(s.code() == core::Status::Code::kCorruption);
      CHECK(s.message().find("replay check") != std::string::npos);
      CHECK(s.message().find("--recovery-check refuse") != std::string::npos);
      CHECK(d == nullptr);
      CHECK(DirContents(&env, kDir) == before);
    }
    {  // an older backup that does not verify: not run, and it says why
      recovery::FaultEnv env;
      RecordWithCheckpoints(&env, a);
      const int older = 1 - ReadBackups(&env).newer;
      DamageBackupImage(&env, older);
      WorldRecoveryReport r;
      reopen(&env, &r);
      CHECK(r.replay_check.outcome == ReplayCheck::Outcome::kNotRun);
      // The reason is the older file's own (not the note passing over the newer one).
      INFO(r.replay_check.detail);
      CHECK(r.replay_check.detail.find("no backup of tick " + std::to_string(r.replay_check.from_tick) +
                                       " verifies; skipped " + bf::BackupFileName(older) +
                                       ": corruption") != std::string::npos);
      CHECK(r.replay_check.detail.find("image checksum mismatch") != std::string::npos);
      // A checkpoint caught mid-write into the older file looks the same: normal, not damage.
      CHECK_FALSE(r.replay_check.fallback_damaged);
    }
    {  // a flipped payload bit in the log between the two backups: recovery (which reads only the
       // log after the newer one) succeeds, the check cannot replay and says the fallback is gone
      recovery::FaultEnv env;
      const auto live = RecordWithCheckpoints(&env, a);
      const BackupsOnDisk b = ReadBackups(&env);
      REQUIRE(b.older_tick < b.newer_tick);
      FlipPayloadBitOfTick(&env, b.older_tick + 1);
      WorldRecoveryReport r;
      reopen(&env, &r);
      CHECK(r.state_hash == live.at(30));
      CHECK(r.replay_check.outcome == ReplayCheck::Outcome::kNotRun);
      CHECK(r.replay_check.fallback_damaged);
      CHECK(r.replay_check.detail.find("does not verify") != std::string::npos);
    }
    {  // no log at all (its segments removed): recovery loads the newer backup; the check says
       // that no tick follows the older one (it said "ticks only up to" the older one's tick)
      recovery::FaultEnv env;
      RecordWithCheckpoints(&env, a);
      const BackupsOnDisk b = ReadBackups(&env);
      REQUIRE(b.older_tick < b.newer_tick);
      std::vector<std::string> names;
      REQUIRE(env.ListDir(kDir, &names).ok());
      for (const std::string& n : names) {
        if (n.ends_with(".aslog")) REQUIRE(env.Unlink(std::string(kDir) + "/" + n).ok());
      }
      WorldRecoveryReport r;
      reopen(&env, &r);
      CHECK(r.checkpoint_tick == b.newer_tick);
      CHECK(r.replay_check.outcome == ReplayCheck::Outcome::kNotRun);
      CHECK(r.replay_check.detail == "the log holds no tick after the older backup's tick " +
                                         std::to_string(b.older_tick) + " (recovered backup: tick " +
                                         std::to_string(b.newer_tick) + ")");
    }
    {  // one backup: not run
      recovery::FaultEnv env;
      RecordWithCheckpoints(&env, a);
      REQUIRE(env.Unlink(std::string(kDir) + "/" + bf::BackupFileName(1 - ReadBackups(&env).newer))
                  .ok());
      WorldRecoveryReport r;
      reopen(&env, &r);
      CHECK(r.replay_check.outcome == ReplayCheck::Outcome::kNotRun);
      CHECK(r.replay_check.detail.find("no other backup") != std::string::npos);
      CHECK_FALSE(r.replay_check.fallback_damaged);
    }
  }
}

TEST_CASE("replay threads outside 1..64 are refused before anything is read or written") {
  recovery::FaultEnv env;
  for (const int threads : {0, -1, kMaxReplayThreads + 1}) {
    INFO(threads);
    auto w = Arena();
    DurabilityOptions o = Options(&env, recovery::Algorithm::kCou);
    o.replay_threads = threads;
    WorldRecoveryReport rep;
    std::unique_ptr<Durability> dur;
    const core::Status s = Durability::Open(o, w.world.get(), &rep, &dur);
    REQUIRE(s.code() == core::Status::Code::kInvalidArgument);
    CHECK_THAT(s.message(), Catch::Contains("replay threads must be in 1..64"));
    CHECK(Durability::RecoverReadOnly(o, w.world.get(), &rep).code() ==
          core::Status::Code::kInvalidArgument);
    CHECK_FALSE(env.FileExists(std::string(kDir) + "/world.id"));
  }
}

TEST_CASE("a read-only recovery gives Open's state at any replay thread count and writes nothing") {
  recovery::FaultEnv env;
  auto live = Arena();
  std::unique_ptr<Durability> dur;
  WorldRecoveryReport rep;
  REQUIRE(OpenIn(&env, recovery::Algorithm::kNone, &live, &rep, &dur).ok());
  Driver driver(live.world.get(), dur.get());
  for (int t = 0; t < 30; ++t) REQUIRE(driver.Tick().ok());
  REQUIRE(dur->Close().ok());
  const std::map<std::string, std::string> before = DirContents(&env, kDir);
  for (const int threads : {1, 2, 3}) {
    INFO(threads << " replay threads");
    auto w = Arena();
    DurabilityOptions o = Options(&env, recovery::Algorithm::kNone);
    o.replay_threads = threads;
    REQUIRE(Durability::RecoverReadOnly(o, w.world.get(), &rep).ok());
    CHECK(rep.recovered_tick == 30);
    CHECK(rep.ticks_replayed == 30);
    CHECK(rep.replay_threads == threads);
    CHECK(rep.commands_replayed > 30);
    CHECK(rep.speed_x_realtime > 0);
    CHECK(rep.state_hash == driver.hash_at(30));
    CHECK(DirContents(&env, kDir) == before);
  }
  // A directory that a server did not write is refused, and stays as it was.
  REQUIRE(env.CreateDir("/data/other").ok());
  auto w = Arena();
  DurabilityOptions o = Options(&env, recovery::Algorithm::kNone);
  o.data_dir = "/data/other";
  const core::Status s = Durability::RecoverReadOnly(o, w.world.get(), &rep);
  CHECK(s.code() == core::Status::Code::kInvalidArgument);
  CHECK_THAT(s.message(), Catch::Contains("has no world.id"));
  CHECK(DirContents(&env, "/data/other").empty());
}

}  // namespace
}  // namespace durability
