// Region: what a command may touch, declared before it runs so the server can lock the areanode
// leaves beneath it (the paper's region locking, sections 3.3 and 4.3). Computed by
// World::RegionOf; a plain value type.
#pragma once

#include <cstdint>
#include <vector>

#include "server/core/bounds.h"

namespace areanode {
class AreanodeTree;
}  // namespace areanode

namespace game {

using core::Bounds;

// The long-range action of a command, and with it how the optimized scheme locks it.
enum class ActionKind : uint8_t {
  kNone,            // no long-range action: the move box covers everything (incl. the axe)
  kExpandedBox,     // rocket: launched here, finished by the world phase; box grown by the
                    // in-command flight plus the splash radius
  kDirectionalBox,  // hitscan: box from the player along the aim to a wall face that stops
                    // every pellet (CollisionWorld::BoundRays), else to the end of the world
};

inline constexpr int kMaxTeleportBoxes = 4;
inline constexpr int kMaxRegionBoxes = 2 + kMaxTeleportBoxes;

struct Region {
  // Every position the player's box can take during the command, plus the melee reach, grown
  // by kMaxEntityExtent so that any entity the command touches lies fully inside.
  Bounds move_box = Bounds::Empty();
  // Teleporter destinations the move may reach (destination box + telefrag reach + margin).
  int teleport_count = 0;
  Bounds teleport_boxes[kMaxTeleportBoxes];
  // More reachable teleporters than fit above: only the whole map is safe.
  bool whole_map = false;
  ActionKind action = ActionKind::kNone;
  Bounds action_box = Bounds::Empty();  // optimized box of the action (action != kNone)

  // True if the server must lock every leaf. The conservative scheme (`optimized` false) locks
  // the whole map for every long-range action, as the paper's first version did.
  bool NeedsWholeMap(bool optimized) const {
    return whole_map || (!optimized && action != ActionKind::kNone);
  }
  // The boxes to lock when !NeedsWholeMap(optimized): fills out[0..n), returns n.
  int LockBoxes(Bounds out[kMaxRegionBoxes]) const;
  // True if `box` lies inside one declared box (optimized form), or the region is whole-map.
  bool Covers(const Bounds& box) const;
};

// The leaves a lock scheme must hold for `region`: every leaf when NeedsWholeMap(optimized), else
// the leaves touching LockBoxes(). Replaces *out with them, ascending and unique. `box_leaves`
// and `merged` are caller-owned scratch, so a caller that keeps them allocates nothing. Used by
// game::RegionLocker, the one implementation of the locking protocol.
void RegionLeaves(const Region& region, const areanode::AreanodeTree& tree, bool optimized,
                  std::vector<int>* out, std::vector<int>* box_leaves, std::vector<int>* merged);

}  // namespace game
