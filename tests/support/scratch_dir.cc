// ScratchDir: mkdtemp on the way in, remove_all on the way out.
#include "tests/support/scratch_dir.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <system_error>

namespace testing_util {

ScratchDir::ScratchDir(const std::string& tag) {
  const char* tmpdir = std::getenv("TMPDIR");
  std::string templ = std::string(tmpdir != nullptr && *tmpdir != '\0' ? tmpdir : "/tmp") + "/" + tag + "_XXXXXX";
  if (::mkdtemp(templ.data()) == nullptr) {
    throw std::runtime_error("ScratchDir: mkdtemp " + templ + ": " + std::strerror(errno));
  }
  path_ = templ;
}

ScratchDir::~ScratchDir() {
  const char* keep = std::getenv("AFTERSHOCK_KEEP_TEST_FILES");
  if (keep != nullptr && *keep != '\0' && std::strcmp(keep, "0") != 0) {
    std::fprintf(stderr, "test files kept in %s\n", path_.c_str());
    return;
  }
  std::error_code ec;  // a destructor must not throw; what cannot go is left
  std::filesystem::remove_all(path_, ec);
}

std::string ScratchPath(const std::string& name) {
  static const ScratchDir dir(program_invocation_short_name);
  return dir.Path(name);
}

}  // namespace testing_util
