// Segment file names.
#include "recovery/log_format.h"

#include <cstdio>

namespace recovery::log_format {

std::string SegmentFileName(uint64_t number) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "log-%06llu.aslog", static_cast<unsigned long long>(number));
  return buf;
}

bool ParseSegmentFileName(const std::string& name, uint64_t* number) {
  constexpr std::string_view kPrefix = "log-", kSuffix = ".aslog";
  if (name.size() <= kPrefix.size() + kSuffix.size() || !name.starts_with(kPrefix) ||
      !name.ends_with(kSuffix)) {
    return false;
  }
  std::string digits = name.substr(kPrefix.size(), name.size() - kPrefix.size() - kSuffix.size());
  if (digits.empty() || digits.size() > 18) return false;
  uint64_t n = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return false;
    n = n * 10 + static_cast<uint64_t>(c - '0');
  }
  *number = n;
  return true;
}

}  // namespace recovery::log_format
