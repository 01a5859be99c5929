// ValidUtf8: valid text unchanged, each bad byte one U+FFFD.
#include <catch2/catch.hpp>

#include "server/core/utf8.h"

TEST_CASE("ValidUtf8 keeps valid text and replaces each bad byte with U+FFFD") {
  const std::string bad = "\xEF\xBF\xBD";
  CHECK(core::ValidUtf8("maps/dm_arena.map") == "maps/dm_arena.map");
  CHECK(core::ValidUtf8("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80") == "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80");
  CHECK(core::ValidUtf8("a\xFFz") == "a" + bad + "z");                  // never valid
  CHECK(core::ValidUtf8("\x80") == bad);                                 // stray continuation
  CHECK(core::ValidUtf8("\xC3") == bad);                                 // truncated at the end
  CHECK(core::ValidUtf8("\xE2\x82x") == bad + bad + "x");               // truncated inside
  CHECK(core::ValidUtf8("\xC0\xAF") == bad + bad);                       // overlong '/'
  CHECK(core::ValidUtf8("\xED\xA0\x80") == bad + bad + bad);             // a surrogate
  CHECK(core::ValidUtf8("\xF4\x90\x80\x80") == bad + bad + bad + bad);   // past U+10FFFF
  CHECK(core::ValidUtf8("") == "");
}
