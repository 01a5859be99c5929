#include "server/core/flag_error.h"

#include <string_view>

namespace core {

std::string NameFlagOfBadValue(const std::string& what, int argc, const char* const* argv) {
  static constexpr std::string_view kOpen = "Argument \u2018", kClose = "\u2019 failed to parse";
  const size_t open = what.find(kOpen);
  if (open == std::string::npos) return what;
  const size_t from = open + kOpen.size();
  const size_t close = what.find(kClose, from);
  if (close == std::string::npos) return what;
  const std::string_view value(what.data() + from, close - from);
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == value && i > 1 && argv[i - 1][0] == '-') return std::string(argv[i - 1]) + ": " + what;
    const size_t eq = arg.find('=');
    if (arg.starts_with("--") && eq != std::string_view::npos && arg.substr(eq + 1) == value) {
      return std::string(arg.substr(0, eq)) + ": " + what;
    }
  }
  return what;
}

}  // namespace core
