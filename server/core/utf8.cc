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
  // Valid text is copied in runs, and ASCII is checked eight bytes at a time: a label or JSON
  // string can be megabytes (a map's file name is any bytes the operator gave), and under
  // ThreadSanitizer a byte at a time cost about a second for 4 MB.
  std::string out;
  out.reserve(s.size());
  size_t run = 0;  // where the valid run not yet copied begins
  for (size_t i = 0; i < s.size();) {
    if (i + 8 <= s.size() && !HasByteAbove7F(Word8At(s.data() + i))) {  // eight ASCII bytes
      i += 8;
      continue;
    }
    const size_t n = SequenceAt(s, i);
    if (n != 0) {
      i += n;
      continue;
    }
    out.append(s.substr(run, i - run));
    out += "\xEF\xBF\xBD";  // U+FFFD
    run = ++i;
  }
  out.append(s.substr(run));
  return out;
}

}  // namespace core
