// PosixEnv on a real temp directory, and FaultEnv's crash and fault-injection model.
#include <catch2/catch.hpp>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <string>

#include "recovery/env.h"
#include "recovery/fault_env.h"

namespace recovery {

namespace {

std::string MakeTempDir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "aftershock-env-XXXXXX").string();
  REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
  return tmpl;
}

// Exercises the Env contract on any implementation.
void CheckBasicFileOps(Env* env, const std::string& dir) {
  std::unique_ptr<File> f;
  REQUIRE(env->Open(JoinPath(dir, "a"), OpenMode::kCreateTrunc, &f).ok());
  REQUIRE(f->Append("hello ").ok());
  REQUIRE(f->Append("world").ok());
  REQUIRE(f->PWrite(0, "J").ok());
  REQUIRE(f->DataSync().ok());
  uint64_t size = 0;
  REQUIRE(f->Size(&size).ok());
  CHECK(size == 11);
  std::string got;
  REQUIRE(f->Read(6, 100, &got).ok());
  CHECK(got == "world");
  // ReadInto: into the caller's memory, short only at the end of the file.
  char buf[16];
  size_t n = 99;
  REQUIRE(f->ReadInto(1, 4, buf, &n).ok());
  CHECK(std::string(buf, n) == "ello");
  REQUIRE(f->ReadInto(6, sizeof(buf), buf, &n).ok());
  CHECK(std::string(buf, n) == "world");
  REQUIRE(f->ReadInto(11, 4, buf, &n).ok());
  CHECK(n == 0);
  REQUIRE(f->ReadInto(500, 4, buf, &n).ok());
  CHECK(n == 0);
  REQUIRE(f->Truncate(5).ok());
  REQUIRE(f->Sync().ok());
  f.reset();
  REQUIRE(ReadWholeFile(env, JoinPath(dir, "a"), 5, &got).ok());
  CHECK(got == "Jello");
  core::Status too_long = ReadWholeFile(env, JoinPath(dir, "a"), 4, &got);
  CHECK(too_long.code() == core::Status::Code::kCorruption);
  CHECK(too_long.message() == JoinPath(dir, "a") + " is 5 bytes, more than the 4 it can be");
  CHECK(got.empty());
  REQUIRE(env->Rename(JoinPath(dir, "a"), JoinPath(dir, "b")).ok());
  REQUIRE(env->SyncDir(dir).ok());
  CHECK_FALSE(env->FileExists(JoinPath(dir, "a")));
  CHECK(env->FileExists(JoinPath(dir, "b")));
  std::vector<std::string> names;
  REQUIRE(env->ListDir(dir, &names).ok());
  CHECK(names == std::vector<std::string>{"b"});
  core::Status missing = env->Open(JoinPath(dir, "nope"), OpenMode::kRead, &f);
  CHECK(missing.code() == core::Status::Code::kNotFound);
  CHECK(missing.message().find("nope") != std::string::npos);
  REQUIRE(env->Unlink(JoinPath(dir, "b")).ok());
  CHECK_FALSE(env->FileExists(JoinPath(dir, "b")));
}

}  // namespace

TEST_CASE("PosixEnv performs real file operations", "[env]") {
  const std::string dir = MakeTempDir();
  CheckBasicFileOps(Env::Posix(), dir);
  std::filesystem::remove_all(dir);
}

// A pipe, a directory or a device where a log, a backup or world.id should be is refused at once:
// before, opening a pipe for reading waited for a writer, and the server's start-up hung there.
TEST_CASE("PosixEnv refuses what is not a regular file, without waiting on a pipe", "[env]") {
  const std::string dir = MakeTempDir();
  const std::string fifo = JoinPath(dir, "log-000001.aslog");
  REQUIRE(::mkfifo(fifo.c_str(), 0644) == 0);
  for (OpenMode mode : {OpenMode::kRead, OpenMode::kReadWrite, OpenMode::kCreate}) {
    auto opened = std::async(std::launch::async, [&] {
      std::unique_ptr<File> f;
      return Env::Posix()->Open(fifo, mode, &f);
    });
    if (opened.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
      const int writer = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);  // lets the open return
      opened.wait();
      if (writer >= 0) ::close(writer);
      FAIL("Env::Open blocked on a pipe");
    }
    const core::Status s = opened.get();
    CHECK(s.code() == core::Status::Code::kIoError);
    CHECK(s.message() == "open " + fifo + ": not a regular file (a pipe)");
  }
  std::unique_ptr<File> f;
  core::Status s = Env::Posix()->Open(dir, OpenMode::kRead, &f);
  CHECK(s.message() == "open " + dir + ": not a regular file (a directory)");
  s = Env::Posix()->Open("/dev/null", OpenMode::kRead, &f);
  CHECK(s.message() == "open /dev/null: not a regular file (a device)");
  std::string text;
  CHECK(ReadWholeFile(Env::Posix(), fifo, 1 << 20, &text).code() == core::Status::Code::kIoError);
  std::filesystem::remove_all(dir);
}

TEST_CASE("FaultEnv behaves like a file system until a crash", "[env][fault]") {
  FaultEnv env;
  CheckBasicFileOps(&env, "/db");
}

TEST_CASE("FaultEnv crash keeps synced data and drops unsynced data", "[env][fault]") {
  FaultEnv env;
  std::unique_ptr<File> f;
  REQUIRE(env.Open("/db/x", OpenMode::kCreateTrunc, &f).ok());
  REQUIRE(env.SyncDir("/db").ok());
  REQUIRE(f->Append("synced").ok());
  REQUIRE(f->DataSync().ok());
  REQUIRE(f->Append("-lost").ok());
  env.Crash(FaultEnv::CrashMode::kDropUnsynced);
  std::string got;
  REQUIRE(env.GetFile("/db/x", &got));
  CHECK(got == "synced");
  CHECK_FALSE(f->Append("more").ok());  // handles from before the crash are dead
}

TEST_CASE("FaultEnv forgets creates and renames not made durable by SyncDir", "[env][fault]") {
  FaultEnv env;
  std::unique_ptr<File> f;
  REQUIRE(env.Open("/db/new", OpenMode::kCreateTrunc, &f).ok());
  REQUIRE(f->Append("data").ok());
  REQUIRE(f->Sync().ok());
  env.PutFile("/db/old", "old");
  REQUIRE(env.Rename("/db/old", "/db/renamed").ok());
  env.Crash(FaultEnv::CrashMode::kDropUnsynced);
  CHECK_FALSE(env.FileExists("/db/new"));
  CHECK(env.FileExists("/db/old"));
  CHECK_FALSE(env.FileExists("/db/renamed"));
}

TEST_CASE("FaultEnv crash modes keep a prefix, reorder or garble unsynced writes", "[env][fault]") {
  int prefix_partial = 0, reorder_partial = 0, garbled = 0;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    for (auto mode : {FaultEnv::CrashMode::kKeepPrefix, FaultEnv::CrashMode::kReorder,
                      FaultEnv::CrashMode::kGarble}) {
      FaultEnv env(seed);
      env.PutFile("/db/f", "");
      std::unique_ptr<File> f;
      REQUIRE(env.Open("/db/f", OpenMode::kReadWrite, &f).ok());
      for (char c = 'a'; c <= 'h'; ++c) REQUIRE(f->Append(std::string(8, c)).ok());
      env.Crash(mode);
      std::string got;
      REQUIRE(env.GetFile("/db/f", &got));
      const std::string full = "aaaaaaaabbbbbbbbccccccccddddddddeeeeeeeeffffffffgggggggghhhhhhhh";
      if (mode == FaultEnv::CrashMode::kKeepPrefix) {
        REQUIRE(full.substr(0, got.size()) == got);  // always a prefix
        prefix_partial += got.size() > 0 && got.size() < full.size();
      } else if (mode == FaultEnv::CrashMode::kReorder) {
        for (size_t i = 0; i < got.size(); ++i) REQUIRE((got[i] == full[i] || got[i] == '\0'));
        reorder_partial += got.find('\0') != std::string::npos;
      } else {
        REQUIRE(got.size() == full.size());
        garbled += got != full;
      }
    }
  }
  CHECK(prefix_partial > 0);
  CHECK(reorder_partial > 0);  // a hole: a later write survived, an earlier one did not
  CHECK(garbled == 40);
}

TEST_CASE("FaultEnv injects EIO and ENOSPC on demand", "[env][fault]") {
  FaultEnv env;
  std::unique_ptr<File> f;
  REQUIRE(env.Open("/db/f", OpenMode::kCreateTrunc, &f).ok());
  env.InjectFault(FaultEnv::kOpSync, core::Status::IoError("EIO"), /*skip=*/1, /*count=*/1);
  CHECK(f->Sync().ok());
  core::Status s = f->Sync();
  CHECK(s.code() == core::Status::Code::kIoError);
  CHECK(s.message().find("/db/f") != std::string::npos);
  CHECK(f->Sync().ok());  // count was 1
  REQUIRE(f->Append("abc").ok());
  env.InjectFault(FaultEnv::kOpRead, core::Status::IoError("EIO"), /*skip=*/0, /*count=*/1);
  char buf[4];
  size_t n = 99;
  core::Status read = f->ReadInto(0, 3, buf, &n);
  CHECK(read.code() == core::Status::Code::kIoError);
  CHECK(read.message().find("/db/f") != std::string::npos);
  CHECK(n == 0);
  REQUIRE(f->ReadInto(0, 3, buf, &n).ok());
  CHECK(std::string(buf, n) == "abc");
  REQUIRE(f->Truncate(0).ok());
  env.SetSpaceLimit(10);
  CHECK(f->Append("12345678").ok());
  core::Status full = f->Append("too much");
  CHECK(full.code() == core::Status::Code::kNoSpace);
  std::string got;
  REQUIRE(env.GetFile("/db/f", &got));
  CHECK(got == "12345678");  // a failed write applies nothing
  CHECK(env.injected_failures() == 3);
}

}  // namespace recovery
