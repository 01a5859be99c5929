// Invariant checks that stay on in release builds. A broken invariant is a bug, not an expected
// failure: AS_CHECK aborts with the condition, the function, the file and line, and a message.
#pragma once

namespace core {
[[noreturn]] void CheckFailed(const char* cond, const char* func, const char* file, int line,
                              const char* msg);
}  // namespace core

#define AS_CHECK(cond, msg)                                                   \
  do {                                                                        \
    if (!(cond)) [[unlikely]]                                                 \
      ::core::CheckFailed(#cond, __func__, __FILE__, __LINE__, (msg));        \
  } while (0)
