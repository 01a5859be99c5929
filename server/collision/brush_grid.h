// BrushGrid: an immutable uniform 2D grid (X/Y) of brush ids, the broadphase of CollisionWorld.
// Z is not split: Quake maps are wide. A cell keeps its brushes' boxes beside their ids, four to a
// core::BoxBlock, so Query culls the rest (other floors, brushes beside the box) four at a time
// without touching the brush records: on dm_arena a player's trace meets about 12 listed brushes
// and clips 0.4 of them.
// Built once; Query() is const and safe from any number of threads.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "server/core/bounds.h"
#include "server/core/box_columns.h"

namespace collision {

class BrushGrid {
 public:
  // Builds the grid over `bounds` (one entry per brush, indexed by brush id). Cells are square,
  // at least `min_cell_units` wide, and at most `max_cells_per_axis` per axis.
  // Requires CountEntries(bounds, ...) <= kMaxEntries.
  void Build(const std::vector<core::Bounds>& bounds, float min_cell_units = 64.0f,
             int max_cells_per_axis = 128);

  // The cell entries Build would make for `bounds` (a brush counts once per cell it overlaps),
  // counted in 64 bits without allocating. Build's lists hold at most kMaxEntries: about 28 bytes
  // an entry (an id, and a box in a block of four), 112 MiB at the limit. The largest grid of
  // dm_arena has 12,434 entries, metropolis's 48,638 (aftershock-mapcheck prints it); a brush
  // spanning a 16384-unit map covers all 16,384 cells of its grid.
  static uint64_t CountEntries(const std::vector<core::Bounds>& bounds,
                               float min_cell_units = 64.0f, int max_cells_per_axis = 128);
  static constexpr uint64_t kMaxEntries = uint64_t{1} << 22;

  // Calls visit(id) exactly once for every brush whose box (as given to Build) intersects `box`
  // (inclusive, as core::Bounds::Intersects), cell by cell in rows of increasing Y, each row by
  // increasing X, and by increasing id within a cell. `visit` returns false to stop early. Uses the
  // reference-point rule to skip duplicates: a brush in several cells is reported only by the cell
  // holding the min corner of its X/Y overlap with `box`.
  template <class Visit>
  void Query(const core::Bounds& box, Visit&& visit) const;

  // Calls visit(id) for the brushes of every cell that the X/Y projection of segment a..b
  // crosses, cell by cell from a towards b (a 2D DDA), so a caller looking for any blocker
  // usually stops after the first few cells. A brush in several crossed cells is reported once
  // per cell. Where the segment passes through a cell corner both side cells are visited.
  // `visit` returns false to stop. Before each step to the next cell(s), go_on(t) is asked with
  // the segment parameter t (a + t(b - a)) where they begin; false stops the walk. t is
  // accumulated in float: over a walk across the whole grid it may be off by a few tenths of a
  // unit along the segment. Requires finite a and b.
  template <class Visit, class GoOn>
  void QuerySegment(core::Vec3 a, core::Vec3 b, Visit&& visit, GoOn&& go_on) const;
  template <class Visit>
  void QuerySegment(core::Vec3 a, core::Vec3 b, Visit&& visit) const {
    QuerySegment(a, b, visit, [](float) { return true; });
  }

 private:
  // Sets world_, the cell size and the cell counts for `bounds`; lists nothing.
  void Size(const std::vector<core::Bounds>& bounds, float min_cell_units, int max_cells_per_axis);
  int CellX(float x) const;
  int CellY(float y) const;

  core::Bounds world_ = core::Bounds::Empty();
  float cell_units_ = 64.0f;
  float inv_cell_ = 1.0f / 64.0f;
  int cells_x_ = 0, cells_y_ = 0;
  std::vector<uint32_t> cell_start_;  // CSR: ids of cell c are ids_[cell_start_[c]..[c+1])
  std::vector<uint32_t> ids_;
  // The boxes of cell c's ids, in the same order: the k-th id's box is lane k % 4 of block
  // block_start_[c] + k / 4; lanes past the cell's last id hold empty boxes.
  std::vector<uint32_t> block_start_;
  std::vector<core::BoxBlock> blocks_;
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
  const core::BoxBlock::Query q(box);
  for (int cy = y0; cy <= y1; ++cy) {
    for (int cx = x0; cx <= x1; ++cx) {
      const int cell = cy * cells_x_ + cx;
      const uint32_t first_id = cell_start_[cell];
      const uint32_t first_block = block_start_[cell], end_block = block_start_[cell + 1];
      for (uint32_t k = first_block; k < end_block; ++k) {
        for (unsigned hit = blocks_[k].Intersecting(q); hit != 0; hit &= hit - 1) {
          // Empty lanes never hit a finite box; an infinite one is cut to the cell's ids.
          const uint32_t lane = static_cast<uint32_t>(__builtin_ctz(hit));
          const uint32_t i = first_id + (k - first_block) * 4 + lane;
          if (i >= cell_start_[cell + 1]) break;
          const uint32_t id = ids_[i];
          // Reference point: the overlap's min corner lies in cell (max(x0, fx), max(y0, fy)).
          const int fx = first_cell_x_[id], fy = first_cell_y_[id];
          if ((fx > x0 ? fx : x0) != cx || (fy > y0 ? fy : y0) != cy) continue;
          if (!visit(id)) return;
        }
      }
    }
  }
}

template <class Visit, class GoOn>
void BrushGrid::QuerySegment(core::Vec3 a, core::Vec3 b, Visit&& visit, GoOn&& go_on) const {
  if (cells_x_ == 0) return;
  // Clip the segment's X/Y projection to the grid (slab method): t in [t0, t1] of a + t(b - a).
  const float o[2] = {a.x, a.y}, d[2] = {b.x - a.x, b.y - a.y};
  const float lo[2] = {world_.mins.x, world_.mins.y}, hi[2] = {world_.maxs.x, world_.maxs.y};
  float t0 = 0, t1 = 1;
  for (int k = 0; k < 2; ++k) {
    if (d[k] == 0) {
      if (o[k] < lo[k] || o[k] > hi[k]) return;
      continue;
    }
    float ta = (lo[k] - o[k]) / d[k], tb = (hi[k] - o[k]) / d[k];
    if (ta > tb) std::swap(ta, tb);
    t0 = ta > t0 ? ta : t0;
    t1 = tb < t1 ? tb : t1;
    if (t0 > t1) return;
  }
  auto visit_cell = [&](int cx, int cy) {
    if (cx < 0 || cy < 0 || cx >= cells_x_ || cy >= cells_y_) return true;
    const int cell = cy * cells_x_ + cx;
    for (uint32_t i = cell_start_[cell]; i < cell_start_[cell + 1]; ++i) {
      if (!visit(ids_[i])) return false;
    }
    return true;
  };
  constexpr float kInf = std::numeric_limits<float>::infinity();
  int cx = CellX(o[0] + d[0] * t0), cy = CellY(o[1] + d[1] * t0);
  const int step_x = d[0] > 0 ? 1 : -1, step_y = d[1] > 0 ? 1 : -1;
  // t of the next vertical (x) and horizontal (y) cell boundary, and t per cell.
  float next_x = d[0] == 0 ? kInf
                           : (world_.mins.x + (cx + (step_x > 0)) * cell_units_ - o[0]) / d[0];
  float next_y = d[1] == 0 ? kInf
                           : (world_.mins.y + (cy + (step_y > 0)) * cell_units_ - o[1]) / d[1];
  const float dt_x = d[0] == 0 ? kInf : cell_units_ / std::abs(d[0]);
  const float dt_y = d[1] == 0 ? kInf : cell_units_ / std::abs(d[1]);
  constexpr float kCornerT = 1e-6f;
  for (int steps = cells_x_ + cells_y_ + 2; steps > 0; --steps) {
    if (!visit_cell(cx, cy)) return;
    const float next = next_x < next_y ? next_x : next_y;
    if (next > t1 || !go_on(next)) return;
    if (std::abs(next_x - next_y) <= kCornerT) {  // through a corner: both side cells too
      if (!visit_cell(cx + step_x, cy) || !visit_cell(cx, cy + step_y)) return;
      cx += step_x;
      cy += step_y;
      next_x += dt_x;
      next_y += dt_y;
    } else if (next_x < next_y) {
      cx += step_x;
      next_x += dt_x;
    } else {
      cy += step_y;
      next_y += dt_y;
    }
    if (cx < 0 || cy < 0 || cx >= cells_x_ || cy >= cells_y_) return;
  }
}

}  // namespace collision
