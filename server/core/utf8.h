// Text that must be valid UTF-8 (JSON strings, Prometheus label values) built from bytes that need
// not be: a map's file name, a data directory's path.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace core {

// For scanning long text eight bytes at a time (ValidUtf8, the metrics' label escaping).

// The eight bytes at `p`, at any alignment.
inline uint64_t Word8At(const char* p) {
  uint64_t w;
  std::memcpy(&w, p, sizeof w);
  return w;
}
// Whether any of the eight bytes of `w` is 0x80 or above.
inline bool HasByteAbove7F(uint64_t w) { return (w & 0x8080808080808080ull) != 0; }
// Whether any of the eight bytes of `w` equals `c`. Exact: a byte of x = w ^ (c repeated) is zero
// where w holds c, and (x - 0x01..01) & ~x & 0x80..80 is nonzero if and only if x has a zero byte.
inline bool WordHasByte(uint64_t w, unsigned char c) {
  const uint64_t x = w ^ (0x0101010101010101ull * c);
  return ((x - 0x0101010101010101ull) & ~x & 0x8080808080808080ull) != 0;
}

// `s` with every byte that does not belong to a well-formed UTF-8 sequence (a stray continuation
// byte, a truncated or overlong sequence, a surrogate, a code point past U+10FFFF) replaced by
// U+FFFD. Valid text comes back unchanged.
std::string ValidUtf8(std::string_view s);

}  // namespace core
