// LoadMap / ParseMap: read a Quake .map (standard or Valve 220 dialect) into a maps::Map.
// Never crashes or hangs on any input. A malformed file fails with a Status whose message is
// "FILE:LINE:COL: expected X, found Y". Degenerate brushes are skipped and listed in
// Map::warnings. Unknown entity classnames are kept and counted, never fatal.
// Bounded work on any input: coordinates within +-1000000, at most 256 faces per brush, quoted
// strings of at most 8192 bytes on one line, at most 32768 entities and 262,144 keys, files of
// at most 256 MiB; NaN/inf are errors. At most kMaxWarningsKept warnings are kept. docs/maps.md
// ("Limits on a map file") lists every limit, with the server's checks after loading.
// On failure *out is reset to an empty Map (only `path` set). Thread-safe: no shared state.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "maps/map.h"
#include "server/core/status.h"

namespace maps {

// LoadMap refuses a longer file unread.
inline constexpr uint64_t kMaxMapFileBytes = 256 << 20;

// Reads and parses the file at `path`: a regular file (a pipe or a directory is refused without
// waiting on it) of at most kMaxMapFileBytes.
core::Status LoadMap(const std::string& path, Map* out);

// Parses `text`; `name` is used in messages in place of a file name.
core::Status ParseMap(std::string_view text, const std::string& name, Map* out);

// InvalidArgument if a loaded map cannot be played: it has no spawn points, or no solid brushes.
// The game refuses such a map (game::World::Create); the server and aftershock-mapcheck check it
// right after loading.
core::Status CheckPlayable(const Map& map);

}  // namespace maps
