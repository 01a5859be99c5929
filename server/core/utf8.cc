#include "server/core/utf8.h"

namespace core {

namespace {

// The length of the well-formed sequence at s[i] (Unicode's table 3-7), or 0.
size_t SequenceAt(std::string_view s, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char b0 = byte(i);
  if (b0 < 0x80) return 1;
  size_t n;
  unsigned char lo = 0x80, hi = 0xBF;  // the second byte's range
  if (b0 >= 0xC2 && b0 <= 0xDF) n = 2;
  else if (b0 == 0xE0) n = 3, lo = 0xA0;
  else if (b0 == 0xED) n = 3, hi = 0x9F;  // no surrogates
  else if (b0 >= 0xE1 && b0 <= 0xEF) n = 3;
  else if (b0 == 0xF0) n = 4, lo = 0x90;
  else if (b0 == 0xF4) n = 4, hi = 0x8F;  // nothing past U+10FFFF
  else if (b0 >= 0xF1 && b0 <= 0xF3) n = 4;
  else return 0;
  if (i + n > s.size()) return 0;
  if (byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (size_t k = 2; k < n; ++k) {
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  }
  return n;
}

}  // namespace

std::string ValidUtf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const size_t n = SequenceAt(s, i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";  // U+FFFD
      ++i;
    } else {
      out.append(s, i, n);
      i += n;
    }
  }
  return out;
}

}  // namespace core
