// OpenRegularFile / ReadRegularFile: a pipe is refused at once, for reading and for writing, as
// are a directory and a device; a file over the caller's limit is refused before it is read, so a
// huge sparse file costs nothing; a regular file is read whole.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <future>
#include <string>

#include "server/core/atomic_file.h"
#include "server/core/file_kind.h"

namespace {

struct ScratchDir {
  std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("as_file_kind_" + std::to_string(::getpid()));
  ScratchDir() {
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~ScratchDir() { std::filesystem::remove_all(path); }
  std::string operator/(const std::string& name) const { return (path / name).string(); }
};

// OpenRegularFile(path, flags) on another thread, failing the test if it has not returned
// within 10 s (before the fix it waited on a pipe for its other end for good).
core::Status OpenWithin10s(const std::string& path, int flags) {
  auto opened = std::async(std::launch::async, [&] {
    int fd;
    core::Status s = core::OpenRegularFile(path, flags, &fd, "hash log");
    if (s.ok()) ::close(fd);
    return s;
  });
  if (opened.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
    // Give the blocked open its other end, so that the thread can finish.
    const int other = ::open(path.c_str(), ((flags & O_ACCMODE) == O_RDONLY ? O_WRONLY : O_RDONLY) | O_NONBLOCK);
    opened.wait();
    if (other >= 0) ::close(other);
    FAIL("OpenRegularFile blocked on a pipe");
  }
  return opened.get();
}

}  // namespace

TEST_CASE("OpenRegularFile refuses a pipe, a directory or a device without waiting", "[file_kind]") {
  ScratchDir dir;
  const std::string fifo = dir / "hash.log";
  REQUIRE(::mkfifo(fifo.c_str(), 0644) == 0);
  for (int flags : {O_RDONLY, O_WRONLY | O_APPEND | O_CREAT, O_RDWR}) {
    const core::Status s = OpenWithin10s(fifo, flags);
    CHECK(s.code() == core::Status::Code::kIoError);
    CHECK(s.message() == "open " + fifo + ": not a hash log (a pipe)");
  }
  CHECK(OpenWithin10s(dir.path.string(), O_RDONLY).message() == "open " + dir.path.string() + ": not a hash log (a directory)");
  CHECK(OpenWithin10s(dir.path.string(), O_WRONLY).message() == "open " + dir.path.string() + ": not a hash log (a directory)");
  CHECK(OpenWithin10s("/dev/null", O_RDONLY).message() == "open /dev/null: not a hash log (a device)");
  const core::Status missing = OpenWithin10s(dir / "absent", O_RDONLY);
  CHECK(missing.code() == core::Status::Code::kNotFound);
  CHECK(missing.message() == "open " + (dir / "absent") + ": No such file or directory");

  // A regular file opens, blocking again (O_NONBLOCK was only for the open).
  int fd;
  REQUIRE(core::OpenRegularFile(dir / "made", O_WRONLY | O_CREAT, &fd).ok());
  CHECK((::fcntl(fd, F_GETFL) & O_NONBLOCK) == 0);
  CHECK((::fcntl(fd, F_GETFD) & FD_CLOEXEC) != 0);
  ::close(fd);
  CHECK(std::filesystem::is_regular_file(dir / "made"));
}

TEST_CASE("ReadRegularFile reads a file whole, and refuses one over the limit unread", "[file_kind]") {
  ScratchDir dir;
  const std::string small = dir / "small";
  REQUIRE(core::WriteFileAtomically(small, "twelve bytes").ok());
  std::string text = "old";
  REQUIRE(core::ReadRegularFile(small, 12, &text).ok());
  CHECK(text == "twelve bytes");

  core::Status s = core::ReadRegularFile(small, 11, &text, "cache file");
  CHECK(s.code() == core::Status::Code::kInvalidArgument);
  CHECK(s.message() == small + ": a cache file of 12 bytes, more than the 11 bytes one can hold");
  CHECK(text.empty());

  // 64 GiB, sparse: refused from its size, before any allocation (which would fail or swap).
  const std::string huge = dir / "huge";
  REQUIRE(core::WriteFileAtomically(huge, "").ok());
  REQUIRE(::truncate(huge.c_str(), 64ll << 30) == 0);
  s = core::ReadRegularFile(huge, 1 << 20, &text);
  CHECK(s.code() == core::Status::Code::kInvalidArgument);
  CHECK(s.message() == huge + ": a regular file of 68719476736 bytes, more than the 1048576 bytes one can hold");

  const std::string fifo = dir / "pipe";
  REQUIRE(::mkfifo(fifo.c_str(), 0644) == 0);
  s = core::ReadRegularFile(fifo, 1 << 20, &text);
  CHECK(s.message() == "open " + fifo + ": not a regular file (a pipe)");
}
