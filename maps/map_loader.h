// LoadMap / ParseMap: read a Quake .map (standard or Valve 220 dialect) into a maps::Map.
// Never crashes or hangs on any input. A malformed file fails with a Status whose message is
// "FILE:LINE:COL: expected X, found Y". Degenerate brushes are skipped and listed in
// Map::warnings. Unknown entity classnames are kept and counted, never fatal.
// Thread-safe: no shared state.
#pragma once

#include <string>
#include <string_view>

#include "maps/map.h"
#include "server/core/status.h"

namespace maps {

// Reads and parses the file at `path`.
core::Status LoadMap(const std::string& path, Map* out);

// Parses `text`; `name` is used in messages in place of a file name.
core::Status ParseMap(std::string_view text, const std::string& name, Map* out);

}  // namespace maps
