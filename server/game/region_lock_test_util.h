// The leaf-locking protocol of World::RegionOf, for tests that run commands on several threads
// (the server's own implementation is sv::RegionLocker; both take their leaves from
// game::RegionLeaves). Test support only (as_game_test_util).
#pragma once

#include <vector>

#include "server/game/world.h"

namespace game::testing {

// Locks, in ascending order, the leaves under the player's box, reads its region under them, and
// grows the held set (relocking in ascending order) until it covers RegionOf(player, cmd); with
// `optimized` false, a long-range action locks the whole map. *held ends as the locked leaves.
void LockRegion(World* w, EntityId player, const UserCmd& cmd, bool optimized,
                std::vector<int>* held);
// Unlocks what LockRegion locked.
void UnlockLeaves(areanode::AreanodeTree& tree, const std::vector<int>& leaves);

}  // namespace game::testing
