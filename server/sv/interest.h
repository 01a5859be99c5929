// Snapshot interest: which entities a player is shown. Quake's SV_WritePacketEntities culls by
// the PVS; so do we, with no traces: a cell test and a distance test per candidate, and the
// nearest by partial selection.
//
// InterestIndex buckets the frame's entities by PVS cell once per reply phase, with one bit per
// occupied cell along each x line of the grid. Select() then walks the lines of cells nearest
// first, takes only cells both occupied and in the viewer's PVS row (a word AND per line), counts
// the candidates by distance band, and stops when no unvisited line can hold anything nearer
// than the max_count it already has; the kept ones are ordered by a counting sort over bands.
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
  // A line of cells along x, (dy, dz) from the eye's cell, and the least squared distance, in
  // cells, between a point of it and a point of the eye's cell.
  struct Line {
    int bound2;
    int dy, dz;
  };
  void BuildLines(const vis::PvsGrid& g);

  const vis::Pvs* pvs_ = nullptr;
  vis::PvsGrid lines_grid_;
  std::vector<Line> lines_;           // every line within reach, by bound2
  int words_per_line_ = 0;
  std::vector<uint64_t> occupied_;    // bit x of line (y, z): cell (x, y, z) holds an item
  std::vector<uint32_t> cell_start_;  // items of cell c: items_[cell_start_[c] .. [c + 1])
  std::vector<Item> items_;
  std::vector<int> item_cell_;        // Build scratch, kept for its capacity
  std::vector<Item> sorted_;
  std::vector<uint32_t> fill_;
};

}  // namespace sv
