// Failure path of AS_CHECK: print and abort (abort, not exit, so a core dump and gdb see it).
#include "server/core/check.h"

#include <cstdio>
#include <cstdlib>

namespace core {

void CheckFailed(const char* cond, const char* func, const char* file, int line, const char* msg) {
  std::fprintf(stderr, "invariant broken in %s (%s:%d): %s: %s\n", func, file, line, cond, msg);
  std::fflush(stderr);
  std::abort();
}

}  // namespace core
