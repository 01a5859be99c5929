// What a file that is not a regular file is, for error messages ("not a regular file (a pipe)").
#pragma once

#include <sys/types.h>

namespace core {

// "a directory", "a pipe", "a device", "a socket", or "not a file" for anything else.
const char* NonRegularKind(mode_t mode);

}  // namespace core
