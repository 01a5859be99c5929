// Snapshot interest: which entities a player is shown. Quake's SV_WritePacketEntities culls by
// the PVS; so do we, with no traces: a cell test and a distance test per candidate, and the
// nearest by partial selection.
//
// InterestIndex buckets the frame's entities by PVS cell once per reply phase; Select() then
// visits the viewer's potentially visible cells ring by ring outwards and stops as soon as no
// unvisited cell can hold anything nearer than what it has, so a crowd
// costs only its nearest part; where entities are sparse it scans them all instead, so a select
// never costs more than about twice the frame's entity count.
//
// Threading: one index per worker thread (Build and Select on that thread); it reads the
// world, which must not change between Build and the last Select (the reply phase).
#pragma once

#include <cstddef>
#include <vector>

#include "server/game/world.h"
#include "server/vis/pvs.h"

namespace sv {

class InterestIndex {
 public:
  // Buckets every linked entity (available pickups only) by the cell of its centre. `pvs` must
  // be non-empty and outlive the index.
  void Build(const game::World& world, const vis::Pvs& pvs);

  // Fills *out with the entities (not `player`) whose centre is within `radius` of the player's
  // eye and in a cell the PVS marks potentially visible from the eye's cell: the nearest
  // `max_count` of them, nearest first, ties by id. Requires Build on the current world and
  // radius <= pvs.grid().range_units.
  void Select(const game::World& world, game::EntityId player, float radius, size_t max_count,
              std::vector<game::EntityId>* out) const;

 private:
  struct Item {
    core::Vec3 center;
    game::EntityId id;
  };
  const vis::Pvs* pvs_ = nullptr;
  std::vector<uint32_t> cell_start_;  // items of cell c: items_[cell_start_[c] .. [c + 1])
  std::vector<Item> items_;
  std::vector<int> item_cell_;        // Build scratch, kept for its capacity
  std::vector<Item> sorted_;
  std::vector<uint32_t> fill_;
};

}  // namespace sv
