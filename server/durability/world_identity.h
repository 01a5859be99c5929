// WorldIdentity: which world a data directory belongs to (map, layout, tick length, seed), kept
// in `world.id` beside the log and the backups, so a directory written for another map or
// configuration is refused with a clear message instead of being restored into the wrong world.
// The file is a few "key value" text lines; see docs/recovery.md ("The data directory").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "recovery/env.h"
#include "server/core/status.h"
#include "server/game/entity.h"

namespace durability {

inline constexpr char kIdentityFileName[] = "world.id";
// FormatIdentity's text is a few hundred bytes; a longer world.id is damage, refused unread.
inline constexpr uint64_t kMaxIdentityBytes = 4096;

struct WorldIdentity {
  uint64_t map_hash = 0;
  uint32_t object_count = 0;
  uint32_t object_size = 0;
  uint32_t max_players = 0;
  uint32_t first_pickup = 0;
  uint32_t tick_ms = 0;
  uint64_t seed = 0;
  friend bool operator==(const WorldIdentity&, const WorldIdentity&) = default;
};

WorldIdentity IdentityOf(const game::Globals& globals);
std::string FormatIdentity(const WorldIdentity& id);
// Parses FormatIdentity's text; anything else is Corruption naming `file`.
core::Status ParseIdentity(std::string_view text, const std::string& file, WorldIdentity* out);

// True if `names` (a directory's listing) holds a log segment or a backup: what recovery reads.
bool HoldsState(const std::vector<std::string>& names);

// Reads dir/world.id without writing anything. NotFound-like InvalidArgument if it is missing
// (the directory is not a data directory a server wrote), Corruption if it does not parse or is
// longer than kMaxIdentityBytes.
core::Status ReadIdentity(recovery::Env* env, const std::string& dir, WorldIdentity* out);
// dir/world.id must exist and equal `mine`, else InvalidArgument saying what differs. Read only
// (aftershock-replay); the server's start-up uses CheckOrCreateIdentity.
core::Status CheckIdentity(recovery::Env* env, const std::string& dir, const WorldIdentity& mine);

// If dir/world.id exists it must equal `mine` (else InvalidArgument saying what differs). If it
// is missing and the directory holds log or backup files, the directory is refused (not ours, or
// damaged). Otherwise world.id is written (temp file, fsync, rename, directory fsync).
core::Status CheckOrCreateIdentity(recovery::Env* env, const std::string& dir,
                                   const WorldIdentity& mine);

}  // namespace durability
