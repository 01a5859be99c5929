// Naming the flag in cxxopts' conversion errors: a value it cannot convert is reported as
// "Argument ‘V’ failed to parse", which says neither the flag nor what it takes.
#pragma once

#include <string>

namespace core {

// If `what` is cxxopts' "Argument ‘V’ failed to parse", returns it with the flag that was given V
// in front ("--max-players: Argument ‘abc’ failed to parse"), the flag found in argv as "--flag V"
// or "--flag=V" (the first such). Otherwise, or if V is not found so, returns `what` unchanged.
std::string NameFlagOfBadValue(const std::string& what, int argc, const char* const* argv);

}  // namespace core
