// ScratchDir and ScratchPath: where the directory is made, that it goes with everything in it,
// that AFTERSHOCK_KEEP_TEST_FILES keeps it, and that a directory that cannot be made is an error.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>

#include "tests/support/scratch_dir.h"

namespace fs = std::filesystem;
using testing_util::ScratchDir;

namespace {

// Sets an environment variable for one scope and puts the old value back.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value != nullptr) ::setenv(name, value, 1);
    else ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_) ::setenv(name_, old_->c_str(), 1);
    else ::unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

}  // namespace

TEST_CASE("a scratch directory is made under TMPDIR and goes with everything in it") {
  const ScratchDir outer("scratch_outer");
  const ScopedEnv tmpdir("TMPDIR", outer.path().c_str());
  const ScopedEnv keep("AFTERSHOCK_KEEP_TEST_FILES", nullptr);
  std::string path;
  {
    const ScratchDir a("case"), b("case");
    path = a.path();
    CHECK(path.rfind(outer.path() + "/case_", 0) == 0);
    CHECK(fs::is_directory(path));
    CHECK(a.path() != b.path());  // two directories, even with one tag
    CHECK(a.Path("x.json") == path + "/x.json");
    fs::create_directories(a.Path("data/sub"));
    std::ofstream(a.Path("data/sub/f")) << "bytes";
  }
  CHECK_FALSE(fs::exists(path));
  CHECK(fs::is_empty(outer.path()));
}

TEST_CASE("AFTERSHOCK_KEEP_TEST_FILES=1 keeps the directory, =0 does not") {
  const ScratchDir outer("scratch_outer");
  const ScopedEnv tmpdir("TMPDIR", outer.path().c_str());
  std::string kept, gone;
  {
    const ScopedEnv keep("AFTERSHOCK_KEEP_TEST_FILES", "1");
    const ScratchDir d("kept");
    kept = d.path();
  }
  {
    const ScopedEnv keep("AFTERSHOCK_KEEP_TEST_FILES", "0");
    const ScratchDir d("gone");
    gone = d.path();
  }
  CHECK(fs::is_directory(kept));
  CHECK_FALSE(fs::exists(gone));
}

TEST_CASE("a scratch directory that cannot be made is an error naming the path") {
  const ScopedEnv tmpdir("TMPDIR", "/nonexistent/aftershock");
  CHECK_THROWS_WITH(ScratchDir("x"), Catch::Contains("/nonexistent/aftershock/x_"));
}

TEST_CASE("ScratchPath names files in one directory of this process, named after the program") {
  const std::string a = testing_util::ScratchPath("a"), b = testing_util::ScratchPath("b");
  const fs::path dir = fs::path(a).parent_path();
  CHECK(fs::path(b).parent_path() == dir);
  CHECK(fs::is_directory(dir));
  CHECK(dir.filename().string().rfind(std::string(program_invocation_short_name) + "_", 0) == 0);
}
