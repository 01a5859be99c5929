// Whole-file replacement that readers never see half-written: for reports tools poll (the
// server's --stats-out, the bots' --out). Durable state does not use this: it goes through
// recovery::Env, which tests can fail on purpose.
#pragma once

#include <string>

#include "server/core/status.h"

namespace core {

// Writes `text` to a temp file of its own beside `path` (path + ".tmp.XXXXXX", mode 0644), fsyncs
// it and renames it over `path`: a reader sees the old file or a new one, whole, and writers of
// the same path at once (two servers saving one map's PVS cache) each rename a complete file.
// IoError naming the failing step (open, chmod, write, fsync, close, rename); on failure the
// temp file is removed and `path` is left as it was. It never replaces anything but a regular
// file: if CheckReplaceable(path) fails, so does the write, with its status, writing nothing.
Status WriteFileAtomically(const std::string& path, const std::string& text);

// OK if a file can be put at `path` by WriteFileAtomically as far as can be told now: its
// directory exists, and `path` is absent or a regular file (a symlink is judged by what it names).
// Else InvalidArgument naming the path and the reason, e.g. "... exists and is not a regular file
// (a device)": the rename would put a file in place of a directory, a pipe or a device such as
// /dev/full. Tools call it at start-up, so that a bad --stats-out is refused before any work.
// Permissions are left to the write itself.
Status CheckReplaceable(const std::string& path);

}  // namespace core
