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
// temp file is removed and `path` is left as it was.
Status WriteFileAtomically(const std::string& path, const std::string& text);

}  // namespace core
