// CheckPvs: measures a PVS against exact line of sight on random point pairs, the figure that
// says how conservative the sampled build is (aftershock-mapcheck --vis prints it).
#pragma once

#include <cstdint>

#include "maps/map.h"
#include "server/collision/collision_world.h"
#include "server/vis/pvs.h"

namespace vis {

struct PvsCheckResult {
  uint64_t pairs = 0;         // pairs of open points within range that were tested
  uint64_t visible = 0;       // of those, in exact line of sight
  uint64_t false_hidden = 0;  // visible, yet the PVS says the target's cell is hidden
  uint64_t pvs_visible = 0;   // pairs the PVS calls visible (visible or not)
  double false_hidden_rate() const { return visible == 0 ? 0.0 : double(false_hidden) / visible; }
};

// Draws `pairs` pairs (a, b): a uniform over the points where an entity can be (inside the map,
// as InsideVolume floods it, and not in solid), b uniform over such points within
// pvs.grid().range_units of a; tests CollisionWorld::LineOfSight(a, b) and Pvs::Sees.
// Deterministic for a seed.
PvsCheckResult CheckPvs(const Pvs& pvs, const maps::Map& map,
                        const collision::CollisionWorld& collision, int pairs, uint64_t seed);

}  // namespace vis
