// Snapshot interest: which entities a player is shown. Quake's SV_WritePacketEntities culls by
// the PVS; so do we, with no traces: a distance test and a PVS cell test per candidate, and the
// nearest by partial selection.
//
// InterestIndex buckets the frame's entities once per reply phase into vertical columns on the
// x-y plane (a few per PVS cell: columns stay small where players crowd), with one occupancy
// bit per column along each x line. Select() walks the lines nearest first, takes the occupied
// columns within the current cut, tests distance and then the viewer's PVS row per entity,
// counts the candidates by distance band, and stops when no unvisited line can hold anything
// nearer than the max_count it already has; the kept ones are ordered by a counting sort over
// bands. A per-player hint (the distance that held max_count last frame) starts the cut tight;
// when it turns out too tight the search runs again to the full radius, so the result never
// depends on it.
//
// Threading: one index per worker thread (Build and Select on that thread); it reads the
// world, which must not change between Build and the last Select (the reply phase).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "server/game/world.h"
#include "server/vis/pvs.h"

namespace sv {

class InterestIndex {
 public:
  // Buckets every linked entity (available pickups only) by the column of its centre. `pvs`
  // must be non-empty and outlive the index.
  void Build(const game::World& world, const vis::Pvs& pvs);

  // Fills *out with the entities (not `player`) whose centre is within `radius` of the player's
  // eye and in a cell the PVS marks potentially visible from the eye's cell: the nearest
  // `max_count` of them, nearest first, ties by id. Requires Build on the current world and
  // radius <= pvs.grid().range_units. Updates the player's hint (a speed-up only).
  void Select(const game::World& world, game::EntityId player, float radius, size_t max_count,
              std::vector<game::EntityId>* out);

  // Side lengths of the columns, in units (after Build).
  float column_units() const { return column_units_; }

 private:
  struct Item {
    core::Vec3 center;
    game::EntityId id;
    vis::CellCoord cell;  // the PVS cell of the centre
  };
  // Gathers the candidates within `reach` of `eye` into found_/count_; returns how many lie
  // under the final cut (at least max_count, unless fewer are within reach).
  size_t Gather(core::Vec3 eye, const vis::Pvs::View& view, game::EntityId player, float reach,
                size_t max_count);

  const vis::Pvs* pvs_ = nullptr;
  core::Vec3 origin_;           // the PVS grid's origin: column (0, 0) starts there
  float column_units_ = 0, inv_column_ = 0;
  float band_scale_ = 0;        // distance bands per unit
  int cols_x_ = 0, cols_y_ = 0, words_per_line_ = 0;
  std::vector<uint64_t> occupied_;    // bit x of line y: column (x, y) holds an item
  std::vector<uint32_t> col_start_;   // items of column c: items_[col_start_[c] .. [c + 1])
  std::vector<Item> items_;
  std::vector<Item> unsorted_;        // Build scratch, kept for its capacity
  std::vector<uint32_t> item_col_;
  std::vector<uint64_t> found_;       // Select scratch: RankKey of each candidate
  std::vector<uint32_t> count_;       // candidates per distance band
  std::vector<uint64_t> by_band_;
  std::vector<uint32_t> order_band_;  // per found_ entry: its fine (ordering) distance band
  std::vector<uint32_t> band_start_;
  size_t cut_band_ = 0;               // Gather's result: no band at or past it is kept
  std::vector<float> hint_;           // per player: a distance that held max_count last frame
};

}  // namespace sv
