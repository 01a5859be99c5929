// LogWriter and ScanLog on FaultEnv: round trip with rotation, group commit, durability modes,
// torn tails at every byte, corruption in the middle, segment deletion, sticky fsync errors,
// ENOSPC, tick gaps.
#include <catch2/catch.hpp>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <future>
#include <map>
#include <string>
#include <vector>

#include "recovery/byte_buffer.h"
#include "recovery/coding.h"
#include "recovery/crc32c.h"
#include "recovery/fault_env.h"
#include "recovery/log_format.h"
#include "recovery/log_reader.h"
#include "recovery/log_writer.h"

namespace recovery {

namespace {

const std::string kDir = "/db";

std::string PayloadOf(uint64_t tick) { return std::string(tick % 23, static_cast<char>('a' + tick % 26)); }

std::unique_ptr<LogWriter> OpenLog(Env* env, SyncMode d, uint64_t next_tick = 1,
                                   uint64_t segment_bytes = 64ull << 20) {
  LogOptions o;
  o.env = env;
  o.dir = kDir;
  o.sync_mode = d;
  o.next_tick = next_tick;
  o.segment_bytes = segment_bytes;
  o.async_flush_ms = 1;
  std::unique_ptr<LogWriter> log;
  REQUIRE(LogWriter::Open(o, &log).ok());
  return log;
}

void AppendTicks(LogWriter* log, uint64_t from, uint64_t to) {
  for (uint64_t t = from; t <= to; ++t) REQUIRE(log->Append(t, PayloadOf(t)).ok());
}

// Logs ticks 1..9 into segment 1 of `env` (sync mode) and returns the segment's bytes.
std::string LogNineTicks(FaultEnv* env) {
  auto log = OpenLog(env, SyncMode::kSync);
  AppendTicks(log.get(), 1, 9);
  REQUIRE(log->Close().ok());
  std::string full;
  REQUIRE(env->GetFile(JoinPath(kDir, log_format::SegmentFileName(1)), &full));
  return full;
}

// File offset of tick's record in a segment that starts at tick 1 (as LogNineTicks writes it).
size_t OffsetOfTick(uint64_t tick) {
  size_t off = log_format::kSegmentHeaderSize;
  for (uint64_t t = 1; t < tick; ++t) off += log_format::kRecordHeaderSize + PayloadOf(t).size();
  return off;
}

// Scans the log in `dir` and returns tick -> payload.
core::Status ScanDir(Env* env, const std::string& dir, std::map<uint64_t, std::string>* out,
                     LogScanReport* report, uint64_t after = 0, bool repair = true) {
  out->clear();
  LogScanOptions o;
  o.after_tick = after;
  o.repair_tail = repair;
  return ScanLog(env, dir, o, [&](uint64_t tick, std::string_view p) {
    (*out)[tick] = std::string(p);
    return core::Status::OK();
  }, report);
}

// ScanDir on kDir.
core::Status Scan(Env* env, std::map<uint64_t, std::string>* out, LogScanReport* report,
                  uint64_t after = 0, bool repair = true) {
  return ScanDir(env, kDir, out, report, after, repair);
}

// A new directory under the system's temporary directory, for the tests on real files.
std::string MakeTempDir() {
  std::string dir = (std::filesystem::temp_directory_path() / "aftershock-log-XXXXXX").string();
  REQUIRE(::mkdtemp(dir.data()) != nullptr);
  return dir;
}

// Segments no writer makes, or too large to write in a test: in `dir` (real files), opens the log
// at `first_tick` and closes it, which leaves an empty segment with the writer's own header, then
// writes one record header per entry of `sizes` (ticks from first_tick on) whose payload is that
// many zeros, and leaves the payloads as holes: the file is sparse. Returns the segment's path;
// its size is where the records end.
std::string WriteZeroRecordSegment(const std::string& dir, uint64_t first_tick,
                                   const std::vector<uint32_t>& sizes) {
  namespace lf = log_format;
  std::vector<std::string> before;
  REQUIRE(Env::Posix()->ListDir(dir, &before).ok());
  LogOptions o;
  o.dir = dir;
  o.next_tick = first_tick;
  auto log = std::unique_ptr<LogWriter>();
  REQUIRE(LogWriter::Open(o, &log).ok());
  REQUIRE(log->Close().ok());
  log.reset();
  const std::string path = JoinPath(dir, lf::SegmentFileName(before.size() + 1));
  REQUIRE(std::filesystem::file_size(path) == lf::kSegmentHeaderSize);
  const std::string zeros(1 << 20, '\0');
  FILE* f = std::fopen(path.c_str(), "r+b");
  REQUIRE(f != nullptr);
  uint64_t at = lf::kSegmentHeaderSize;
  for (size_t i = 0; i < sizes.size(); ++i) {
    char header[lf::kRecordHeaderSize];
    EncodeFixed32(header + 4, sizes[i]);
    EncodeFixed64(header + 8, first_tick + i);
    uint32_t crc = crc32c::Value(header + 4, 12);
    for (uint32_t done = 0; done < sizes[i]; done += zeros.size()) {
      crc = crc32c::Extend(crc, zeros.data(), std::min<size_t>(zeros.size(), sizes[i] - done));
    }
    EncodeFixed32(header, crc32c::Mask(crc));
    REQUIRE(::fseeko(f, static_cast<off_t>(at), SEEK_SET) == 0);
    REQUIRE(std::fwrite(header, 1, sizeof(header), f) == sizeof(header));
    at += lf::kRecordHeaderSize + sizes[i];
  }
  REQUIRE(std::fclose(f) == 0);
  REQUIRE(::truncate(path.c_str(), static_cast<off_t>(at)) == 0);
  return path;
}

// This process's resident memory, and its peak since ResetPeakResidentBytes (from
// /proc/self/status: VmRSS and VmHWM).
uint64_t StatusKiB(const char* field) {
  FILE* f = std::fopen("/proc/self/status", "r");
  REQUIRE(f != nullptr);
  char line[256];
  uint64_t kib = 0;
  const size_t n = std::strlen(field);
  while (std::fgets(line, sizeof(line), f) != nullptr) {
    if (std::strncmp(line, field, n) == 0) kib = std::strtoull(line + n + 1, nullptr, 10);
  }
  std::fclose(f);
  REQUIRE(kib > 0);
  return kib;
}
void ResetPeakResidentBytes() {  // "5" to clear_refs: the peak becomes the current size
  FILE* f = std::fopen("/proc/self/clear_refs", "w");
  REQUIRE(f != nullptr);
  REQUIRE(std::fputs("5", f) >= 0);
  REQUIRE(std::fclose(f) == 0);
}

}  // namespace

TEST_CASE("log round trip across rotated segments with group commit", "[log]") {
  FaultEnv env;
  auto log = OpenLog(&env, SyncMode::kSync, 1, /*segment_bytes=*/300);
  AppendTicks(log.get(), 1, 200);
  REQUIRE(log->WaitDurable(200).ok());
  CHECK(log->IsDurable(200));
  REQUIRE(log->Close().ok());
  LogWriter::Stats st = log->stats();
  CHECK(st.records == 200);
  CHECK(st.segments_created > 5);
  CHECK(st.syncs <= st.batches + st.segments_created);  // one data sync per batch (+ rotations)
  CHECK(st.sync_ns > 0);  // the syncs were timed
  std::map<uint64_t, std::string> got;
  LogScanReport report;
  REQUIRE(Scan(&env, &got, &report).ok());
  REQUIRE(got.size() == 200);
  for (uint64_t t = 1; t <= 200; ++t) REQUIRE(got[t] == PayloadOf(t));
  CHECK(report.last_tick == 200);
  CHECK_FALSE(report.truncated);
  REQUIRE(Scan(&env, &got, &report, /*after=*/150).ok());
  CHECK(got.size() == 50);
  CHECK(got.begin()->first == 151);
}

// Pass 1 kept every segment's bytes for pass 2, so a log never cut by a checkpoint took its whole
// size in memory at start-up (ten 1 GiB segments: std::bad_alloc). Past max_kept_bytes the
// segments are read again for pass 2: the same records, in order, after any tick, and with a
// torn tail at the end (cut, or, read-only, passed over again).
TEST_CASE("log scan delivers the same records when it keeps no segment in memory", "[log][fault]") {
  for (uint64_t keep : {uint64_t{0}, uint64_t{700}}) {  // none, and a few of the segments
    for (uint64_t after : {uint64_t{0}, uint64_t{37}, uint64_t{150}}) {
      for (bool repair : {true, false}) {
        CAPTURE(keep, after, repair);
        FaultEnv env;
        auto log = OpenLog(&env, SyncMode::kSync, 1, /*segment_bytes=*/300);
        AppendTicks(log.get(), 1, 200);
        REQUIRE(log->Close().ok());
        std::vector<std::string> names;
        REQUIRE(env.ListDir(kDir, &names).ok());
        std::sort(names.begin(), names.end());
        std::string newest;
        REQUIRE(env.GetFile(JoinPath(kDir, names.back()), &newest));
        env.PutFile(JoinPath(kDir, names.back()), newest + std::string(7, '\x5a'));  // a torn tail
        LogScanOptions o;
        o.after_tick = after;
        o.repair_tail = repair;
        o.max_kept_bytes = keep;
        std::vector<uint64_t> ticks;
        LogScanReport report;
        REQUIRE(ScanLog(&env, kDir, o, [&](uint64_t tick, std::string_view p) {
          CHECK(p == PayloadOf(tick));
          ticks.push_back(tick);
          return core::Status::OK();
        }, &report).ok());
        REQUIRE(ticks.size() == 200 - after);
        for (size_t i = 0; i < ticks.size(); ++i) CHECK(ticks[i] == after + 1 + i);
        CHECK(report.truncated);
      }
    }
  }
}

// With max_kept_bytes 0, pass 1 checks each segment in one buffer and keeps none. When one
// segment alone is due, pass 2 delivers the bytes pass 1 checked, still in that buffer, without
// opening the file again; with several due, each is opened and read again. Shown by failing
// every open of a segment after the first one of each.
TEST_CASE("log scan delivers a lone due segment from the buffer pass 1 checked it in",
          "[log][fault]") {
  for (uint64_t segment_bytes : {uint64_t{64} << 20, uint64_t{600}}) {
    for (bool torn : {false, true}) {
      CAPTURE(segment_bytes, torn);
      FaultEnv env;
      auto log = OpenLog(&env, SyncMode::kSync, 1, segment_bytes);
      AppendTicks(log.get(), 1, 60);
      REQUIRE(log->Close().ok());
      std::vector<std::string> names;
      REQUIRE(env.ListDir(kDir, &names).ok());
      std::sort(names.begin(), names.end());
      if (torn) {
        std::string bytes;
        REQUIRE(env.GetFile(JoinPath(kDir, names.back()), &bytes));
        env.PutFile(JoinPath(kDir, names.back()), bytes + std::string(5, '\x5a'));
      }
      LogScanOptions o;
      o.repair_tail = false;
      o.max_kept_bytes = 0;
      env.InjectFault(FaultEnv::kOpOpen, core::Status::IoError("injected: opened again"),
                      static_cast<int>(names.size()), -1, ".aslog");
      std::vector<uint64_t> ticks;
      LogScanReport report;
      const core::Status s = ScanLog(&env, kDir, o, [&](uint64_t tick, std::string_view p) {
        CHECK(p == PayloadOf(tick));
        ticks.push_back(tick);
        return core::Status::OK();
      }, &report);
      if (names.size() == 1) {
        REQUIRE(s.ok());
        CHECK(ticks.size() == 60);
        CHECK(report.truncated == torn);
      } else {
        CHECK(s.code() == core::Status::Code::kIoError);
        CHECK(s.message().find("opened again") != std::string::npos);
        CHECK(ticks.empty());
      }
    }
  }
}

TEST_CASE("log sync mode: every tick acknowledged as durable survives a crash", "[log][fault]") {
  for (auto mode : {FaultEnv::CrashMode::kDropUnsynced, FaultEnv::CrashMode::kKeepPrefix}) {
    FaultEnv env(7);
    auto log = OpenLog(&env, SyncMode::kSync, 1, 400);
    AppendTicks(log.get(), 1, 60);
    REQUIRE(log->WaitDurable(40).ok());
    uint64_t acked = log->durable_tick();
    env.Crash(mode);
    log.reset();
    std::map<uint64_t, std::string> got;
    LogScanReport report;
    REQUIRE(Scan(&env, &got, &report).ok());
    CHECK(report.last_tick >= acked);
    for (uint64_t t = 1; t <= report.last_tick; ++t) REQUIRE(got[t] == PayloadOf(t));
  }
}

TEST_CASE("log async mode syncs on its timer and on Flush, and off mode never syncs", "[log]") {
  FaultEnv env;
  {
    auto log = OpenLog(&env, SyncMode::kAsync);
    AppendTicks(log.get(), 1, 30);
    REQUIRE(log->Flush().ok());
    CHECK(log->durable_tick() == 30);
    CHECK(log->stats().syncs >= 1);
    env.Crash(FaultEnv::CrashMode::kDropUnsynced);
  }
  std::map<uint64_t, std::string> got;
  LogScanReport report;
  REQUIRE(Scan(&env, &got, &report).ok());
  CHECK(got.size() == 30);

  FaultEnv env2;
  auto log = OpenLog(&env2, SyncMode::kOff);
  AppendTicks(log.get(), 1, 30);
  REQUIRE(log->WaitDurable(30).ok());  // handed to the OS
  REQUIRE(log->Close().ok());
  CHECK(log->stats().syncs == 0);
  CHECK(log->stats().sync_ns == 0);
  REQUIRE(Scan(&env2, &got, &report).ok());
  CHECK(got.size() == 30);  // no crash: written data is there
}

TEST_CASE("log torn tail at every byte offset of the last record is cut, once", "[log][fault]") {
  FaultEnv base;
  const std::string full = LogNineTicks(&base);
  const std::string file = JoinPath(kDir, log_format::SegmentFileName(1));
  const size_t last_start = OffsetOfTick(9);
  for (size_t cut = last_start; cut < full.size(); ++cut) {
    for (bool garbage : {false, true}) {
      FaultEnv env;
      std::string content = full.substr(0, cut);
      if (garbage) content += std::string(full.size() - cut, '\x5a');  // torn: size grew, data did not
      env.PutFile(file, content);
      std::map<uint64_t, std::string> got;
      LogScanReport report;
      core::Status s = Scan(&env, &got, &report);
      INFO("cut at " << cut << (garbage ? " with garbage" : ""));
      REQUIRE(s.ok());
      CHECK(report.last_tick == 8);
      CHECK(got.size() == 8);
      CHECK(report.truncated == (content.size() > last_start));
      std::string after;
      REQUIRE(env.GetFile(file, &after));
      CHECK(after.size() == last_start);
      // Running again finds nothing to cut: recovery is idempotent.
      REQUIRE(Scan(&env, &got, &report).ok());
      CHECK_FALSE(report.truncated);
      CHECK(got.size() == 8);
    }
  }
}

// Whether a damaged spot is a torn tail is a search for a valid record after it. That search
// checksummed every offset whose 16 bytes looked like a record header that fits: after 24 MiB of
// 0x01 bytes (each offset a header of a 16 MiB record) the server's start-up checksummed for
// minutes, ignoring SIGTERM. A record of the writer's holds a tick the bytes before it can
// reach (ticks are consecutive), and the checksums have a budget; spent, the answer is the
// safe one: Corruption, nothing cut. Each scan runs against a deadline, for the old behaviour.
TEST_CASE("log torn-tail search is bounded on tails that look like record headers", "[log][fault]") {
  FaultEnv base;
  const std::string full = LogNineTicks(&base);
  const std::string file = JoinPath(kDir, log_format::SegmentFileName(1));
  const size_t tail_at = OffsetOfTick(10);
  auto scan_within_60s = [](FaultEnv* env, std::map<uint64_t, std::string>* got, LogScanReport* report) {
    auto done = std::async(std::launch::async, [&] { return Scan(env, got, report); });
    if (done.wait_for(std::chrono::seconds(60)) != std::future_status::ready) {
      FAIL_CHECK("the torn-tail search ran for over 60 s");
    }
    return done.get();  // waits for it, however long
  };
  SECTION("bytes whose ticks no record of the writer's could hold: a torn tail, cut") {
    FaultEnv env;
    env.PutFile(file, full + std::string(24u << 20, '\x01'));
    std::map<uint64_t, std::string> got;
    LogScanReport report;
    const core::Status s = scan_within_60s(&env, &got, &report);
    REQUIRE(s.ok());
    CHECK(got.size() == 9);
    CHECK(report.truncated);
    CHECK(report.truncated_offset == tail_at);
  }
  SECTION("headers with the next tick at every 16th byte and bad checksums: Corruption, kept") {
    std::string header(16, '\0');
    const uint32_t len = 1u << 20;
    const uint64_t tick = 10;
    std::memcpy(&header[4], &len, 4);  // little-endian on the machines we run on, as the format
    std::memcpy(&header[8], &tick, 8);
    std::string tail;
    while (tail.size() < (24u << 20)) tail += header;
    FaultEnv env;
    env.PutFile(file, full + tail);
    std::map<uint64_t, std::string> got;
    LogScanReport report;
    const core::Status s = scan_within_60s(&env, &got, &report);
    CHECK(s.code() == core::Status::Code::kCorruption);
    CHECK(got.empty());
    std::string after;
    REQUIRE(env.GetFile(file, &after));
    CHECK(after.size() == full.size() + tail.size());  // nothing cut
  }
}

TEST_CASE("log damage in the middle is Corruption naming file, offset and the tool", "[log][fault]") {
  FaultEnv base;
  const std::string full = LogNineTicks(&base);
  const std::string name = log_format::SegmentFileName(1);
  const size_t off = OffsetOfTick(4);
  for (size_t flip_at : {off + 4 /*length*/, off + 9 /*tick*/, off + 17 /*payload*/, off /*crc*/}) {
    FaultEnv env;
    std::string bad = full;
    bad[flip_at] = static_cast<char>(bad[flip_at] ^ 0x10);
    env.PutFile(JoinPath(kDir, name), bad);
    std::map<uint64_t, std::string> got;
    LogScanReport report;
    core::Status s = Scan(&env, &got, &report);
    INFO("flip at " << flip_at << ": " << s.ToString());
    CHECK(s.code() == core::Status::Code::kCorruption);
    CHECK(s.message().find(name + " offset " + std::to_string(off)) != std::string::npos);
    CHECK(s.message().find("aftershock-inspect /db") != std::string::npos);
    CHECK(got.empty());  // nothing is replayed from a damaged log
    std::string after;
    REQUIRE(env.GetFile(JoinPath(kDir, name), &after));
    CHECK(after == bad);  // and nothing is cut
  }
}

// Recovery from a checkpoint at tick `after` reads only the headers of the records up to it
// (ScanLog's contract): the offsets it reports and cuts at must still be file offsets.
TEST_CASE("log scan after a checkpoint tick skips the records before it, at file offsets", "[log][fault]") {
  FaultEnv base;
  const std::string full = LogNineTicks(&base);
  const std::string name = log_format::SegmentFileName(1);
  const std::string file = JoinPath(kDir, name);
  std::map<uint64_t, std::string> got;
  LogScanReport report;

  SECTION("every checkpoint tick delivers exactly the ticks after it") {
    for (uint64_t after = 0; after <= 11; ++after) {
      INFO("after " << after);
      REQUIRE(Scan(&base, &got, &report, after).ok());
      CHECK(got.size() == (after < 9 ? 9 - after : 0));
      for (const auto& [tick, payload] : got) CHECK(payload == PayloadOf(tick));
      if (!got.empty()) CHECK(got.begin()->first == after + 1);
      CHECK(report.last_tick == 9);
      CHECK_FALSE(report.truncated);
    }
  }
  SECTION("a flipped payload bit before the checkpoint is not read; after it, it is Corruption") {
    std::string bad = full;
    bad[OffsetOfTick(3) + log_format::kRecordHeaderSize + 1] ^= 0x10;  // tick 3 has 3 payload bytes
    FaultEnv env;
    env.PutFile(file, bad);
    REQUIRE(Scan(&env, &got, &report, /*after=*/5).ok());
    CHECK(got.size() == 4);
    CHECK(got.begin()->first == 6);
    core::Status s = Scan(&env, &got, &report, /*after=*/2);
    CHECK(s.code() == core::Status::Code::kCorruption);
    CHECK(s.message().find(name + " offset " + std::to_string(OffsetOfTick(3))) != std::string::npos);
    std::string after;
    REQUIRE(env.GetFile(file, &after));
    CHECK(after == bad);  // nothing was cut
  }
  SECTION("a record length before the checkpoint that breaks the walk is Corruption at its offset") {
    std::string bad = full;
    bad[OffsetOfTick(3) + 4] ^= 0x10;  // the length of tick 3's record
    FaultEnv env;
    env.PutFile(file, bad);
    core::Status s = Scan(&env, &got, &report, /*after=*/5);
    INFO(s.ToString());
    CHECK(s.code() == core::Status::Code::kCorruption);
    // The walk trusts the length and derails; the error names where it found no record, at or
    // after tick 3's, and the tool that shows the rest.
    const size_t at = s.message().find(name + " offset ");
    REQUIRE(at != std::string::npos);
    CHECK(std::stoul(s.message().substr(at + name.size() + 8)) >= OffsetOfTick(3));
    CHECK(s.message().find("aftershock-inspect /db") != std::string::npos);
    CHECK(got.empty());
    std::string after;
    REQUIRE(env.GetFile(file, &after));
    CHECK(after == bad);  // nothing was cut
  }
  SECTION("a torn tail after the checkpoint is cut at its file offset") {
    const size_t last_start = OffsetOfTick(9);
    for (uint64_t after : {5, 8}) {
      for (size_t cut = last_start + 1; cut < full.size(); ++cut) {
        INFO("after " << after << ", cut at " << cut);
        FaultEnv env;
        env.PutFile(file, full.substr(0, cut) + std::string(full.size() - cut, '\x5a'));
        REQUIRE(Scan(&env, &got, &report, after).ok());
        CHECK(got.size() == 8 - after);
        CHECK(report.truncated);
        CHECK(report.truncated_offset == last_start);
        CHECK(report.truncated_bytes == full.size() - last_start);
        CHECK(report.last_tick == 8);
        std::string after_cut;
        REQUIRE(env.GetFile(file, &after_cut));
        CHECK(after_cut == full.substr(0, last_start));
      }
    }
  }
  SECTION("a torn record at or before the checkpoint is not read, and is left as it is") {
    // The checkpoint (tick 12) is past the log, as it can be in async mode. Tick 9's header is
    // whole and its payload torn: recovery needs none of it.
    const size_t cut = OffsetOfTick(9) + log_format::kRecordHeaderSize + 1;
    const std::string torn = full.substr(0, cut) + std::string(full.size() - cut, '\x5a');
    FaultEnv env;
    env.PutFile(file, torn);
    REQUIRE(Scan(&env, &got, &report, /*after=*/12).ok());
    CHECK(got.empty());
    CHECK_FALSE(report.truncated);
    std::string after_scan;
    REQUIRE(env.GetFile(file, &after_scan));
    CHECK(after_scan == torn);
    // A scan that needs tick 9 finds the tear and cuts it.
    REQUIRE(Scan(&env, &got, &report, /*after=*/5).ok());
    CHECK(got.size() == 3);
    CHECK(report.truncated_offset == OffsetOfTick(9));
  }
}

TEST_CASE("log damage at the end of an older segment is Corruption, not a torn tail", "[log][fault]") {
  FaultEnv env;
  auto log = OpenLog(&env, SyncMode::kSync, 1, 200);
  AppendTicks(log.get(), 1, 40);
  REQUIRE(log->Close().ok());
  const std::string first = JoinPath(kDir, log_format::SegmentFileName(1));
  std::string content;
  REQUIRE(env.GetFile(first, &content));
  env.PutFile(first, content.substr(0, content.size() - 3));
  std::map<uint64_t, std::string> got;
  LogScanReport report;
  core::Status s = Scan(&env, &got, &report);
  CHECK(s.code() == core::Status::Code::kCorruption);
  CHECK(s.message().find(log_format::SegmentFileName(1)) != std::string::npos);
}

TEST_CASE("log segments are deleted only when the older backup covers them", "[log]") {
  FaultEnv env;
  auto log = OpenLog(&env, SyncMode::kSync, 1, 200);
  AppendTicks(log.get(), 1, 100);
  REQUIRE(log->WaitDurable(100).ok());
  std::vector<std::string> before;
  REQUIRE(env.ListDir(kDir, &before).ok());
  REQUIRE(log->RemoveObsoleteSegments(0).ok());
  std::vector<std::string> names;
  REQUIRE(env.ListDir(kDir, &names).ok());
  CHECK(names.size() == before.size());  // no backup: everything is needed
  REQUIRE(log->RemoveObsoleteSegments(50).ok());
  REQUIRE(env.ListDir(kDir, &names).ok());
  CHECK(names.size() < before.size());
  REQUIRE(log->Close().ok());
  // Everything after tick 50 is still there, consecutive; the records of tick <= 50 may be gone.
  std::map<uint64_t, std::string> got;
  LogScanReport report;
  REQUIRE(Scan(&env, &got, &report, 50).ok());
  CHECK(got.size() == 50);
  LogScanReport all;
  CHECK(Scan(&env, &got, &all, 0).code() == core::Status::Code::kCorruption);  // tick 1 is gone
  REQUIRE(log->RemoveObsoleteSegments(1000).ok());  // never the last (active) segment
  REQUIRE(env.ListDir(kDir, &names).ok());
  CHECK(names.size() == 1);
}

TEST_CASE("log fsync failure surfaces and is sticky", "[log][fault]") {
  FaultEnv env;
  auto log = OpenLog(&env, SyncMode::kSync);
  AppendTicks(log.get(), 1, 5);
  REQUIRE(log->WaitDurable(5).ok());
  env.InjectFault(FaultEnv::kOpSync, core::Status::IoError("EIO (injected)"), 0, 1, ".aslog");
  REQUIRE(log->Append(6, "x").ok());
  core::Status s = log->WaitDurable(6);
  CHECK(s.code() == core::Status::Code::kIoError);
  CHECK(s.message().find("EIO") != std::string::npos);
  CHECK(log->durable_tick() == 5);
  env.ClearFaults();
  CHECK(log->Append(7, "y").code() == core::Status::Code::kIoError);  // sticky: never retried
  CHECK_FALSE(log->Flush().ok());
  CHECK_FALSE(log->Close().ok());
}

TEST_CASE("log ENOSPC: clear error, acknowledged ticks survive", "[log][fault]") {
  FaultEnv env;
  auto log = OpenLog(&env, SyncMode::kSync);
  env.SetSpaceLimit(2000);
  core::Status s;
  uint64_t t = 1;
  for (; t < 1000 && s.ok(); ++t) {
    s = log->Append(t, std::string(50, 'p'));
    if (s.ok()) s = log->WaitDurable(t);
  }
  CHECK(s.code() == core::Status::Code::kNoSpace);
  CHECK(s.message().find(".aslog") != std::string::npos);
  const uint64_t acked = log->durable_tick();
  CHECK(acked > 10);
  env.Crash(FaultEnv::CrashMode::kDropUnsynced);
  log.reset();
  env.ClearFaults();
  std::map<uint64_t, std::string> got;
  LogScanReport report;
  REQUIRE(Scan(&env, &got, &report).ok());
  CHECK(report.last_tick >= acked);
}

TEST_CASE("log refuses out-of-order ticks and reports gaps between segments", "[log]") {
  FaultEnv env;
  {
    auto log = OpenLog(&env, SyncMode::kSync, 1);
    AppendTicks(log.get(), 1, 5);
    CHECK(log->Append(7, "skip").code() == core::Status::Code::kInvalidArgument);
    REQUIRE(log->Close().ok());
  }
  {
    auto log = OpenLog(&env, SyncMode::kSync, 8);  // e.g. a checkpoint at tick 7 was newer
    AppendTicks(log.get(), 8, 10);
    REQUIRE(log->Close().ok());
  }
  std::map<uint64_t, std::string> got;
  LogScanReport report;
  core::Status s = Scan(&env, &got, &report, 0);
  CHECK(s.code() == core::Status::Code::kCorruption);
  CHECK(s.message().find("no record of tick 6") != std::string::npos);
  CHECK(got.empty());
  REQUIRE(Scan(&env, &got, &report, 7).ok());
  CHECK(got.size() == 3);
}


// A segment file far longer than the writer ever writes one (here sparse, as a file system may
// leave one after a crash, or a mistaken `truncate`): before, the reader allocated the whole file
// (a 200 GiB one aborted with std::bad_alloc). Now it reads at most kMaxSegmentFileBytes, finds
// the records the writer wrote, and cuts the rest as a torn tail. On the real file system,
// since FaultEnv keeps files in memory.
TEST_CASE("log segment far past the largest size written is read only up to it, its tail cut",
          "[log]") {
  const std::string dir = MakeTempDir();
  LogOptions o;
  o.dir = dir;
  auto log = std::unique_ptr<LogWriter>();
  REQUIRE(LogWriter::Open(o, &log).ok());
  AppendTicks(log.get(), 1, 9);
  REQUIRE(log->Close().ok());
  log.reset();
  const std::string name = log_format::SegmentFileName(1);
  const std::string path = JoinPath(dir, name);
  constexpr uint64_t kHuge = 64ull << 30;
  const uint64_t end = OffsetOfTick(10);

  REQUIRE(::truncate(path.c_str(), static_cast<off_t>(kHuge)) == 0);
  SegmentInfo info;
  REQUIRE(CheckSegmentFile(Env::Posix(), dir, name, 1, &info).ok());  // aftershock-inspect's check
  CHECK(info.records == 9);
  CHECK(info.size_bytes == kHuge);
  CHECK(info.damaged);
  CHECK(info.damage_offset == end);
  CHECK(info.tail_only);

  for (uint64_t after : {0, 4}) {  // the whole file read, and the walk past the records before 4
    CAPTURE(after);
    REQUIRE(::truncate(path.c_str(), static_cast<off_t>(kHuge)) == 0);
    std::map<uint64_t, std::string> got;
    LogScanReport report;
    REQUIRE(ScanDir(Env::Posix(), dir, &got, &report, after).ok());
    CHECK(got.size() == 9 - after);
    CHECK(got.rbegin()->second == PayloadOf(9));
    CHECK(report.truncated);
    CHECK(report.truncated_offset == end);
    CHECK(report.truncated_bytes == kHuge - end);
    CHECK(std::filesystem::file_size(path) == end);
  }
  std::filesystem::remove_all(dir);
}

// The limit itself: a segment whose records fill it to exactly kMaxSegmentFileBytes (no writer
// makes one; records of 64 MiB of zeros over a sparse file) is whole at that size, and past it is
// cut right there, with every record before the limit kept.
TEST_CASE("log segment whose records end exactly at the largest size read keeps them all",
          "[log]") {
  namespace lf = log_format;
  const std::string dir = MakeTempDir();
  // 17 records, all of 64 MiB but the last, which is 256 bytes shorter: they end at the limit.
  constexpr uint64_t kRecords = 17;
  auto payload_size = [](uint64_t tick) -> uint32_t {
    return tick < kRecords ? lf::kMaxPayload : lf::kMaxPayload - 256;
  };
  std::vector<uint32_t> sizes;
  for (uint64_t tick = 1; tick <= kRecords; ++tick) sizes.push_back(payload_size(tick));
  const std::string name = lf::SegmentFileName(1);
  const std::string path = WriteZeroRecordSegment(dir, 1, sizes);
  REQUIRE(path == JoinPath(dir, name));
  REQUIRE(std::filesystem::file_size(path) == lf::kMaxSegmentFileBytes);

  for (uint64_t extra : {uint64_t{0}, uint64_t{1}, uint64_t{4096}}) {
    CAPTURE(extra);
    const uint64_t size = lf::kMaxSegmentFileBytes + extra;
    REQUIRE(::truncate(path.c_str(), static_cast<off_t>(size)) == 0);
    SegmentInfo info;
    REQUIRE(CheckSegmentFile(Env::Posix(), dir, name, 1, &info).ok());  // read whole
    CHECK(info.records == kRecords);
    CHECK(info.last_tick == kRecords);
    CHECK(info.damaged == (extra > 0));
    if (extra > 0) {
      CHECK(info.damage_offset == lf::kMaxSegmentFileBytes);
      CHECK(info.size_bytes == size);
      CHECK(info.tail_only);
    }

    // Recovery after a checkpoint at tick 16 walks the first 16 records and reads the last.
    uint64_t delivered = 0;
    bool zero_payload = false;
    LogScanOptions scan;
    scan.after_tick = kRecords - 1;
    LogScanReport report;
    REQUIRE(ScanLog(Env::Posix(), dir, scan, [&](uint64_t tick, std::string_view p) {
      delivered = tick;
      zero_payload = p.size() == payload_size(tick) &&
                     std::all_of(p.begin(), p.end(), [](char c) { return c == 0; });
      return core::Status::OK();
    }, &report).ok());
    CHECK(delivered == kRecords);
    CHECK(zero_payload);
    CHECK(report.last_tick == kRecords);
    CHECK(report.truncated == (extra > 0));
    if (extra > 0) {
      CHECK(report.truncated_offset == lf::kMaxSegmentFileBytes);
      CHECK(report.truncated_bytes == extra);
    }
    CHECK(std::filesystem::file_size(path) == lf::kMaxSegmentFileBytes);  // the tail cut
  }
  std::filesystem::remove_all(dir);
}

// The memory bound: past max_kept_bytes a recovery holds one segment's bytes at a time, however
// long the log (before 2026-11-30, a log of ten 1 GiB segments took 7.3 GB and aborted). Three
// sparse segments of 128 MiB, scanned in this process with its peak resident size reset first:
// with nothing kept the scan's peak stays under one and a half segments; keeping all three, as
// a check that the measure sees them, it passes two and a half.
TEST_CASE("log scan past max_kept_bytes holds one segment in memory at a time", "[log]") {
  constexpr uint32_t kPayload = 64u << 20;
  constexpr uint64_t kSegment = 2 * uint64_t{kPayload};
  const std::string dir = MakeTempDir();
  for (uint64_t first : {1, 3, 5}) WriteZeroRecordSegment(dir, first, {kPayload, kPayload});
  for (uint64_t keep : {uint64_t{0}, ~uint64_t{0}}) {
    CAPTURE(keep);
    LogScanOptions o;
    o.max_kept_bytes = keep;
    o.repair_tail = false;
    uint64_t delivered = 0;
    LogScanReport report;
    ResetPeakResidentBytes();
    const uint64_t before = StatusKiB("VmRSS:") << 10;
    REQUIRE(ScanLog(Env::Posix(), dir, o, [&](uint64_t tick, std::string_view p) {
      delivered += p.size() == kPayload ? tick : 0;
      return core::Status::OK();
    }, &report).ok());
    const uint64_t peak = (StatusKiB("VmHWM:") << 10) - before;
    CAPTURE(peak);
    CHECK(delivered == 1 + 2 + 3 + 4 + 5 + 6);
    if (keep == 0) {
      CHECK(peak < kSegment + kSegment / 2);
    } else {
      CHECK(peak > 2 * kSegment + kSegment / 2);
    }
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("log scan on real files reads segments of many MiB whole and after a checkpoint tick",
          "[log]") {
  // Segments this large are read into mapped buffers (ByteBuffer), the path recovery takes on
  // a real log; FaultEnv's small ones above are heap buffers.
  const std::string dir = MakeTempDir();
  auto payload = [](uint64_t tick) {
    std::string p(3000 + tick % 1500, '\0');
    for (size_t i = 0; i < p.size(); ++i) p[i] = static_cast<char>((tick * 7919 + i * 31) & 0xff);
    return p;
  };
  constexpr uint64_t kTicks = 3000;  // about 11 MB in two segments
  LogOptions o;
  o.dir = dir;
  o.segment_bytes = 6ull << 20;
  auto log = std::unique_ptr<LogWriter>();
  REQUIRE(LogWriter::Open(o, &log).ok());
  for (uint64_t t = 1; t <= kTicks; ++t) REQUIRE(log->Append(t, payload(t)).ok());
  REQUIRE(log->Close().ok());
  log.reset();
  REQUIRE(std::filesystem::file_size(JoinPath(dir, log_format::SegmentFileName(1))) >=
          2 * recovery::ByteBuffer::kMapBytes);

  for (uint64_t after : {uint64_t{0}, uint64_t{1234}, uint64_t{2990}}) {
    CAPTURE(after);
    std::map<uint64_t, std::string> got;
    LogScanReport report;
    REQUIRE(ScanDir(Env::Posix(), dir, &got, &report, after).ok());
    REQUIRE(got.size() == kTicks - after);
    bool all_equal = true;
    for (const auto& [tick, p] : got) all_equal &= p == payload(tick);
    CHECK(all_equal);
    CHECK(got.begin()->first == after + 1);
    CHECK_FALSE(report.truncated);
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("log writer refuses a segment size past the largest a reader reads", "[log]") {
  FaultEnv env;
  LogOptions o;
  o.env = &env;
  o.dir = kDir;
  o.segment_bytes = log_format::kMaxSegmentBytes + 1;
  std::unique_ptr<LogWriter> log;
  const core::Status s = LogWriter::Open(o, &log);
  CHECK(s.code() == core::Status::Code::kInvalidArgument);
  CHECK(s.message().find("segment_bytes") != std::string::npos);
}

}  // namespace recovery
