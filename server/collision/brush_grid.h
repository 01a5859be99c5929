// BrushGrid: an immutable uniform 2D grid (X/Y) of brush ids, the broadphase of CollisionWorld.
// Z is not split: Quake maps are wide, and a per-candidate AABB test culls the rest cheaply.
// Built once; Query() is const and safe from any number of threads.
#pragma once

#include <cstdint>
#include <vector>

#include "server/core/bounds.h"

namespace collision {

class BrushGrid {
 public:
  // Builds the grid over `bounds` (one entry per brush, indexed by brush id). Cells are square,
  // at least `min_cell_units` wide, and at most `max_cells_per_axis` per axis.
  void Build(const std::vector<core::Bounds>& bounds, float min_cell_units = 64.0f,
             int max_cells_per_axis = 128);

  // Calls visit(id) exactly once for every brush whose X/Y extent overlaps `box` (inclusive).
  // `visit` returns false to stop early. Uses the reference-point rule to skip duplicates: a
  // brush in several cells is reported only by the cell holding the min corner of its overlap
  // with `box`.
  template <class Visit>
  void Query(const core::Bounds& box, Visit&& visit) const;

 private:
  int CellX(float x) const;
  int CellY(float y) const;

  core::Bounds world_ = core::Bounds::Empty();
  float cell_units_ = 64.0f;
  float inv_cell_ = 1.0f / 64.0f;
  int cells_x_ = 0, cells_y_ = 0;
  std::vector<uint32_t> cell_start_;  // CSR: ids of cell c are ids_[cell_start_[c]..[c+1])
  std::vector<uint32_t> ids_;
  std::vector<uint16_t> first_cell_x_, first_cell_y_;  // per brush: its lowest cell
};

inline int BrushGrid::CellX(float x) const {
  int c = static_cast<int>((x - world_.mins.x) * inv_cell_);
  return c < 0 ? 0 : (c >= cells_x_ ? cells_x_ - 1 : c);
}

inline int BrushGrid::CellY(float y) const {
  int c = static_cast<int>((y - world_.mins.y) * inv_cell_);
  return c < 0 ? 0 : (c >= cells_y_ ? cells_y_ - 1 : c);
}

template <class Visit>
void BrushGrid::Query(const core::Bounds& box, Visit&& visit) const {
  if (cells_x_ == 0 || !box.Intersects(world_)) return;
  const int x0 = CellX(box.mins.x), x1 = CellX(box.maxs.x);
  const int y0 = CellY(box.mins.y), y1 = CellY(box.maxs.y);
  for (int cy = y0; cy <= y1; ++cy) {
    for (int cx = x0; cx <= x1; ++cx) {
      const int cell = cy * cells_x_ + cx;
      for (uint32_t i = cell_start_[cell]; i < cell_start_[cell + 1]; ++i) {
        const uint32_t id = ids_[i];
        // Reference point: the overlap's min corner lies in cell (max(x0, fx), max(y0, fy)).
        const int fx = first_cell_x_[id], fy = first_cell_y_[id];
        if ((fx > x0 ? fx : x0) != cx || (fy > y0 ? fy : y0) != cy) continue;
        if (!visit(id)) return;
      }
    }
  }
}

}  // namespace collision
