// IntRange: an inclusive range of an integer setting, so the check and its error message come
// from the same two constants ("--threads must be 1..64" cannot drift from the test).
#pragma once

#include <cstdint>
#include <string>

#include "server/core/status.h"

namespace core {

struct IntRange {
  const char* what;  // the setting, as the user wrote it ("--threads")
  int64_t lo, hi;

  constexpr bool Contains(int64_t v) const { return v >= lo && v <= hi; }
  // "<what> must be <lo>..<hi>".
  std::string Describe() const {
    return std::string(what) + " must be " + std::to_string(lo) + ".." + std::to_string(hi);
  }
  // OK, or InvalidArgument with Describe().
  Status Check(int64_t v) const { return Contains(v) ? Status::OK() : Status::InvalidArgument(Describe()); }
};

}  // namespace core
