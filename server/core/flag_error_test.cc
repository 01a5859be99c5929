// NameFlagOfBadValue puts the flag in front of cxxopts' "failed to parse" message.
#include <catch2/catch.hpp>

#include "server/core/flag_error.h"

TEST_CASE("a value cxxopts cannot convert is reported with its flag") {
  const std::string bad = "Argument \u2018abc\u2019 failed to parse";
  const char* spaced[] = {"prog", "--data-dir", "d", "--max-players", "abc"};
  CHECK(core::NameFlagOfBadValue(bad, 5, spaced) == "--max-players: " + bad);
  const char* joined[] = {"prog", "--from-tick=abc", "--threads", "2"};
  CHECK(core::NameFlagOfBadValue(bad, 4, joined) == "--from-tick: " + bad);
  const char* shortflag[] = {"prog", "-t", "abc"};
  CHECK(core::NameFlagOfBadValue(bad, 3, shortflag) == "-t: " + bad);
  const char* absent[] = {"prog", "--threads", "2"};
  CHECK(core::NameFlagOfBadValue(bad, 3, absent) == bad);  // not found: unchanged
  CHECK(core::NameFlagOfBadValue("Option 'x' does not exist", 5, spaced) == "Option 'x' does not exist");
}
