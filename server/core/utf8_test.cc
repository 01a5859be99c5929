// ValidUtf8: valid text unchanged, each bad byte one U+FFFD.
#include <catch2/catch.hpp>

#include <cstring>

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

// ValidUtf8 checks ASCII eight bytes at a time: a bad byte or a multi-byte sequence at every
// offset of a word, and across the boundary between two words, is found as at any other place.
TEST_CASE("ValidUtf8 finds a bad byte at every offset of a long string") {
  const std::string bad = "\xEF\xBF\xBD";
  for (size_t at = 0; at < 24; ++at) {
    const std::string before(at, 'a'), after(23 - at, 'z');
    CHECK(core::ValidUtf8(before + "\xFF" + after) == before + bad + after);
    CHECK(core::ValidUtf8(before + "\xC3\xA9" + after) == before + "\xC3\xA9" + after);
    CHECK(core::ValidUtf8(before + "\xE2\x82" + after) == before + bad + bad + after);
  }
}

TEST_CASE("the word-at-a-time tests see each of the eight bytes") {
  for (int at = 0; at < 8; ++at) {
    char bytes[8];
    std::memset(bytes, 'a', sizeof bytes);
    CHECK_FALSE(core::HasByteAbove7F(core::Word8At(bytes)));
    CHECK_FALSE(core::WordHasByte(core::Word8At(bytes), '"'));
    bytes[at] = '"';
    CHECK(core::WordHasByte(core::Word8At(bytes), '"'));
    CHECK_FALSE(core::WordHasByte(core::Word8At(bytes), '\\'));
    bytes[at] = static_cast<char>(0x80);
    CHECK(core::HasByteAbove7F(core::Word8At(bytes)));
    // A byte whose XOR with the one sought has its high bit set (0xFF ^ '\n') is no match: the
    // test's `& ~x` is what rules it out.
    bytes[at] = static_cast<char>(0xFF);
    CHECK_FALSE(core::WordHasByte(core::Word8At(bytes), '\n'));
  }
}
