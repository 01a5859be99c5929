// Region: what a command may touch, declared before it runs so the server can lock the areanode
// leaves beneath it (the paper's region locking, sections 3.3 and 4.3). Computed by
// World::RegionOf; a plain value type.
#pragma once

#include <cstdint>
#include <vector>

#include "server/core/bounds.h"
#include "server/core/convex_xy.h"

namespace areanode {
class AreanodeTree;
}  // namespace areanode

namespace game {

using core::Bounds;

// The long-range action of a command, and with it how the optimized scheme locks it.
enum class ActionKind : uint8_t {
  kNone,            // no long-range action: the move box covers everything (incl. the axe)
  kExpandedBox,     // rocket: launched here, finished by the world phase; the eyes' box swept
                    // along the aim by the in-command flight, grown by the splash radius
  kDirectionalBox,  // hitscan: box from the player along the aim to a wall face that stops
                    // every pellet (CollisionWorld::BoundRays), else to the end of the world,
                    // narrowed by the pellets' wedge in XY
};

// A leaf is locked for a wedge if its region comes within this many units of it (float slack
// between the lock test and Covers' containment test).
inline constexpr float kWedgeLockSlack = 1;

inline constexpr int kMaxTeleportBoxes = 4;
inline constexpr int kMaxRegionBoxes = 2 + kMaxTeleportBoxes;

struct Region {
  // Every position the player's box can take during the command, plus the melee reach, grown
  // by kMaxEntitySize so that any entity the command touches lies fully inside.
  Bounds move_box = Bounds::Empty();
  // Teleporter destinations the move may reach (destination box + telefrag reach + margin).
  int teleport_count = 0;
  Bounds teleport_boxes[kMaxTeleportBoxes];
  // More reachable teleporters than fit above: only the whole map is safe.
  bool whole_map = false;
  ActionKind action = ActionKind::kNone;
  Bounds action_box = Bounds::Empty();  // optimized box of the action (action != kNone)
  // kDirectionalBox: the XY footprint of every pellet path, grown so that any entity box a
  // pellet's query can return lies inside it. The action covers action_box AND this wedge (a
  // diagonal shot holds a strip of leaves, not the rectangle around it). Empty: the box alone.
  core::ConvexXY action_wedge;

  // True if the server must lock every leaf. The conservative scheme (`optimized` false) locks
  // the whole map for every long-range action, as the paper's first version did.
  bool NeedsWholeMap(bool optimized) const {
    return whole_map || (!optimized && action != ActionKind::kNone);
  }
  // The boxes to lock when !NeedsWholeMap(optimized): fills out[0..n), returns n. The action's
  // box is last; its leaves are narrowed by action_wedge (RegionLeaves), so the boxes bound the
  // region rather than equal it.
  int LockBoxes(Bounds out[kMaxRegionBoxes]) const;
  // True if `box` lies inside one declared box, or inside both the action box and the action's
  // wedge (optimized form), or the region is whole-map. Everything a command touches must pass.
  bool Covers(const Bounds& box) const;
  // True if every point within `pad` of the segment a..b (a box of half-size `pad` swept along
  // it) is covered: the check for AreanodeTree::QuerySegment.
  bool CoversSegment(core::Vec3 a, core::Vec3 b, float pad) const;
  // True if some box that Covers() accepts could overlap `box`: `box` meets a declared box, or
  // the action box where it also comes within kWedgeLockSlack of the wedge, or the region is
  // whole-map (optimized form). False means the command cannot touch an entity inside `box`.
  bool Meets(const Bounds& box) const;
};

// The leaves a lock scheme must hold for `region`: every leaf when NeedsWholeMap(optimized), else
// the leaves touching LockBoxes(), the action box's only where they also come within
// kWedgeLockSlack of a non-empty action_wedge. So every leaf touching a box that Covers() accepts
// is among them. Replaces *out with them, ascending and unique. `box_leaves`
// and `merged` are caller-owned scratch, so a caller that keeps them allocates nothing. Used by
// game::RegionLocker, the one implementation of the locking protocol.
void RegionLeaves(const Region& region, const areanode::AreanodeTree& tree, bool optimized,
                  std::vector<int>* out, std::vector<int>* box_leaves, std::vector<int>* merged);

}  // namespace game
