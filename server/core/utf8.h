// Text that must be valid UTF-8 (JSON strings, Prometheus label values) built from bytes that need
// not be: a map's file name, a data directory's path.
#pragma once

#include <string>
#include <string_view>

namespace core {

// `s` with every byte that does not belong to a well-formed UTF-8 sequence (a stray continuation
// byte, a truncated or overlong sequence, a surrogate, a code point past U+10FFFF) replaced by
// U+FFFD. Valid text comes back unchanged.
std::string ValidUtf8(std::string_view s);

}  // namespace core
