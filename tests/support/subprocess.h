// Subprocess: runs a binary as a child with stdout and stderr sent to files, for tests that drive
// the real server and bot binaries. The destructor kills (SIGKILL) and reaps a child still
// running, so a failing test leaves no process behind. Not thread-safe.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace testing_util {

class Subprocess {
 public:
  // Starts `argv` (argv[0] is the executable path); output goes to out_path / err_path.
  Subprocess(const std::vector<std::string>& argv, const std::string& out_path, const std::string& err_path);
  ~Subprocess();
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;

  bool started() const { return pid_ > 0; }
  // Waits up to timeout_s for the exit; returns the exit code, 128+signal, or -1 on timeout
  // (the child is then killed).
  int Wait(double timeout_s);
  // Sends `sig` (SIGKILL to simulate a crash, SIGTERM for a clean stop) and reaps the child.
  void Kill(int sig);
  // Sends `sig` only; Wait() then reports how the child ended.
  void Signal(int sig);

 private:
  pid_t pid_ = -1;
  int status_ = -1;
};

// The whole content of a file ("" if missing).
std::string ReadFile(const std::string& path);

}  // namespace testing_util
