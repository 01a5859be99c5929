// Whole-file replacement that readers never see half-written: for reports tools poll (the
// server's --stats-out, the bots' --out). Durable state does not use this: it goes through
// recovery::Env, which tests can fail on purpose.
#pragma once

#include <string>

#include "server/core/status.h"

namespace core {

// Writes `text` to path + ".tmp", fsyncs it and renames it over `path`: a reader sees the old
// file or the new one. IoError naming the failing step (open, write, fsync, rename).
Status WriteFileAtomically(const std::string& path, const std::string& text);

}  // namespace core
