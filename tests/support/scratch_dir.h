// ScratchDir: a directory of a test's own for the files it and the programs it starts write (data
// directories, stats files, captured output). It is made fresh (mkdtemp) under $TMPDIR, or /tmp
// when that is unset, and removed with everything in it when the object goes, so a test run
// leaves nothing behind and two runs never share a path. Set AFTERSHOCK_KEEP_TEST_FILES=1 to keep
// it for reading after a failure: the destructor then prints where it is. Not thread-safe.
#pragma once

#include <string>

namespace testing_util {

class ScratchDir {
 public:
  // `tag` starts the directory's name (letters, digits, '_' and '-'). Throws std::runtime_error
  // when the directory cannot be made.
  explicit ScratchDir(const std::string& tag);
  ~ScratchDir();  // removes path() and all in it, unless AFTERSHOCK_KEEP_TEST_FILES is set
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::string& path() const { return path_; }
  // path() + "/" + name. Creates nothing: the caller or its program writes there.
  std::string Path(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// A path in this process's scratch directory: a ScratchDir named after the program, made on
// the first call and removed when the process exits normally. For tests whose helpers name their
// files (ctest runs each case in a process of its own). Not thread-safe on the first call.
std::string ScratchPath(const std::string& name);

}  // namespace testing_util
