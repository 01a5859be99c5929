// WriteFileAtomically: the file holds the new text and no temp file is left; a failure names
// its step and leaves the old file alone.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

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
  CHECK_FALSE(std::filesystem::exists(path + ".tmp"));

  const core::Status bad = core::WriteFileAtomically((dir / "missing" / "x.json").string(), "x");
  CHECK(bad.code() == core::Status::Code::kIoError);
  CHECK(bad.message().find("open") != std::string::npos);
  CHECK(Slurp(path) == "new text");
  std::filesystem::remove_all(dir);
}
