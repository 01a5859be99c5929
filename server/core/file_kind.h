// Regular files only: what a path that is not one is ("not a regular file (a pipe)"), and opening
// or reading a path only when it is one, without waiting on a pipe and without reading more than
// the caller can hold. Every reader of a file named from outside (a data directory, a map, a
// cache) goes through these, so a FIFO, a directory, a device or a huge sparse file in its place
// gets a clear error instead of a hang or an allocation failure.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "server/core/status.h"

namespace core {

// "<op> <path>: <strerror(err)>": NotFound for ENOENT, NoSpace for ENOSPC and EDQUOT (a full
// disk, which callers tell apart), else IoError.
Status ErrnoStatus(const std::string& op, const std::string& path, int err);

// "a directory", "a pipe", "a device", "a socket", or "not a file" for anything else.
const char* NonRegularKind(mode_t mode);

// Opens `path` with open(2)'s `flags` (O_CLOEXEC is added; with O_CREAT the mode is 0644) and
// refuses anything but a regular file. The open itself does not wait: a FIFO is opened with
// O_NONBLOCK, found to be one and closed, where a plain open would block until its other end
// came (and a server blocked there ignores SIGTERM). O_NONBLOCK is cleared again before return;
// it changes nothing for a regular file. On success *fd is the caller's to close.
// Errors: "open <path>: not a <what> (a pipe)" (IoError) for a non-regular file, else ErrnoStatus.
Status OpenRegularFile(const std::string& path, int flags, int* fd, const char* what = "regular file");

// Reads the regular file at `path` whole into *out (OpenRegularFile, O_RDONLY). A file larger
// than max_bytes is refused before anything is allocated: InvalidArgument "<path>: a <what> of N
// bytes, more than the M bytes one can hold". A failed read is IoError "read <path>: ...".
Status ReadRegularFile(const std::string& path, uint64_t max_bytes, std::string* out,
                       const char* what = "regular file");

}  // namespace core
