// WriteFileAtomically: the file holds the new text and no temp file is left; a failure names
// its step and leaves the old file alone; writers of one path at once each leave a whole file;
// nothing but a regular file is replaced (CheckReplaceable).
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "server/core/atomic_file.h"

namespace {

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST_CASE("WriteFileAtomically replaces the file and leaves no temp file", "[atomic_file]") {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("as_atomic_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "report.json").string();
  REQUIRE(core::WriteFileAtomically(path, "old").ok());
  REQUIRE(core::WriteFileAtomically(path, "new text").ok());
  CHECK(Slurp(path) == "new text");
  CHECK(std::distance(std::filesystem::directory_iterator(dir), {}) == 1);  // no temp file

  const core::Status bad = core::WriteFileAtomically((dir / "missing" / "x.json").string(), "x");
  CHECK(bad.code() == core::Status::Code::kInvalidArgument);
  CHECK(bad.message().find("missing cannot be used") != std::string::npos);
  CHECK(Slurp(path) == "new text");
  std::filesystem::remove_all(dir);
}

// Run as root, a --stats-out naming a device replaced it: the rename put a JSON file where
// /dev/full had been. Nothing but a regular file is replaced now (a pipe and a directory stand in
// for the device here), and a tool can ask before it starts.
TEST_CASE("WriteFileAtomically replaces only a regular file", "[atomic_file]") {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("as_atomic_kind_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir / "sub");
  const std::string fifo = (dir / "pipe").string();
  REQUIRE(::mkfifo(fifo.c_str(), 0644) == 0);
  core::Status s = core::WriteFileAtomically(fifo, "x");
  CHECK(s.code() == core::Status::Code::kInvalidArgument);
  CHECK(s.message() == fifo + " exists and is not a regular file (a pipe): refusing to put a file in its place");
  CHECK(std::filesystem::is_fifo(fifo));
  s = core::WriteFileAtomically((dir / "sub").string(), "x");
  CHECK(s.message().find("(a directory)") != std::string::npos);
  CHECK(std::filesystem::is_directory(dir / "sub"));
  CHECK(std::distance(std::filesystem::directory_iterator(dir), {}) == 2);  // no temp file

  CHECK(core::CheckReplaceable((dir / "new.json").string()).ok());  // absent: fine
  REQUIRE(core::WriteFileAtomically((dir / "old.json").string(), "x").ok());
  CHECK(core::CheckReplaceable((dir / "old.json").string()).ok());
  CHECK(core::CheckReplaceable((dir / "old.json" / "x").string()).message().find("is not a directory") !=
        std::string::npos);
  CHECK(core::CheckReplaceable((dir / "sub").string() + "/").code() == core::Status::Code::kInvalidArgument);
  CHECK(core::CheckReplaceable("").code() == core::Status::Code::kInvalidArgument);
  CHECK(core::CheckReplaceable("/dev/null").message().find("(a device)") != std::string::npos);
  std::filesystem::remove_all(dir);
}

// Two servers may save the same map's PVS cache at once. With one shared temp name, one writer's
// truncate cut the other's file short and the second rename found no temp file.
TEST_CASE("WriteFileAtomically: writers of one path at once each rename a whole file",
          "[atomic_file]") {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("as_atomic_race_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "cache.pvs").string();
  const std::string texts[2] = {std::string(256 * 1024, 'a'), std::string(192 * 1024, 'b')};
  constexpr int kRounds = 40;
  int failures[2] = {0, 0};
  std::vector<std::thread> writers;
  for (int w = 0; w < 2; ++w) {
    writers.emplace_back([&, w] {
      for (int i = 0; i < kRounds; ++i) {
        if (!core::WriteFileAtomically(path, texts[w]).ok()) ++failures[w];
      }
    });
  }
  for (std::thread& t : writers) t.join();
  CHECK(failures[0] == 0);
  CHECK(failures[1] == 0);
  const std::string got = Slurp(path);
  CHECK((got == texts[0] || got == texts[1]));
  CHECK(std::distance(std::filesystem::directory_iterator(dir), {}) == 1);  // no temp file
  std::filesystem::remove_all(dir);
}
