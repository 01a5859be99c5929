// BrushGrid construction: size the cells, then fill the cell lists in two passes (count, place).
#include "server/collision/brush_grid.h"

#include <algorithm>
#include <cmath>

#include "server/core/check.h"

namespace collision {

void BrushGrid::Size(const std::vector<core::Bounds>& bounds, float min_cell_units,
                     int max_cells_per_axis) {
  AS_CHECK(min_cell_units > 0 && max_cells_per_axis > 0 && max_cells_per_axis <= 65535,
           "bad grid parameters");
  world_ = core::Bounds::Empty();
  for (const core::Bounds& b : bounds) world_.Add(b);
  if (bounds.empty()) {
    cells_x_ = cells_y_ = 0;
    return;
  }
  const core::Vec3 size = world_.Size();
  const float extent = std::max(size.x, size.y);
  cell_units_ = std::max(min_cell_units, extent / static_cast<float>(max_cells_per_axis));
  inv_cell_ = 1.0f / cell_units_;
  cells_x_ = std::clamp(static_cast<int>(std::ceil(size.x * inv_cell_)), 1, max_cells_per_axis);
  cells_y_ = std::clamp(static_cast<int>(std::ceil(size.y * inv_cell_)), 1, max_cells_per_axis);
}

uint64_t BrushGrid::CountEntries(const std::vector<core::Bounds>& bounds, float min_cell_units,
                                 int max_cells_per_axis) {
  BrushGrid sized;
  sized.Size(bounds, min_cell_units, max_cells_per_axis);
  uint64_t entries = 0;
  for (const core::Bounds& b : bounds) {
    const uint64_t x = static_cast<uint64_t>(sized.CellX(b.maxs.x) - sized.CellX(b.mins.x) + 1);
    const uint64_t y = static_cast<uint64_t>(sized.CellY(b.maxs.y) - sized.CellY(b.mins.y) + 1);
    entries += x * y;
  }
  return entries;
}

void BrushGrid::Build(const std::vector<core::Bounds>& bounds, float min_cell_units,
                      int max_cells_per_axis) {
  AS_CHECK(bounds.size() < UINT32_MAX, "too many brushes");
  AS_CHECK(CountEntries(bounds, min_cell_units, max_cells_per_axis) <= kMaxEntries,
           "too many grid entries: check the map with CollisionWorld::CheckMap first");
  Size(bounds, min_cell_units, max_cells_per_axis);
  cell_start_.clear();
  ids_.clear();
  block_start_.clear();
  blocks_.clear();
  first_cell_x_.assign(bounds.size(), 0);
  first_cell_y_.assign(bounds.size(), 0);
  if (bounds.empty()) return;

  std::vector<uint32_t> counts(static_cast<size_t>(cells_x_) * cells_y_ + 1, 0);
  for (size_t id = 0; id < bounds.size(); ++id) {
    const core::Bounds& b = bounds[id];
    first_cell_x_[id] = static_cast<uint16_t>(CellX(b.mins.x));
    first_cell_y_[id] = static_cast<uint16_t>(CellY(b.mins.y));
    for (int cy = CellY(b.mins.y); cy <= CellY(b.maxs.y); ++cy) {
      for (int cx = CellX(b.mins.x); cx <= CellX(b.maxs.x); ++cx) ++counts[cy * cells_x_ + cx];
    }
  }
  cell_start_.assign(counts.size(), 0);
  for (size_t c = 1; c < counts.size(); ++c) cell_start_[c] = cell_start_[c - 1] + counts[c - 1];
  ids_.resize(cell_start_.back());
  std::vector<uint32_t> fill(cell_start_.begin(), cell_start_.end() - 1);
  for (size_t id = 0; id < bounds.size(); ++id) {
    const core::Bounds& b = bounds[id];
    for (int cy = CellY(b.mins.y); cy <= CellY(b.maxs.y); ++cy) {
      for (int cx = CellX(b.mins.x); cx <= CellX(b.maxs.x); ++cx) {
        ids_[fill[cy * cells_x_ + cx]++] = static_cast<uint32_t>(id);
      }
    }
  }
  // Each cell's boxes, four to a block, in the order of its ids.
  const size_t cells = counts.size() - 1;
  block_start_.assign(cells + 1, 0);
  for (size_t c = 0; c < cells; ++c) {
    block_start_[c + 1] = block_start_[c] + (counts[c] + 3) / 4;
  }
  blocks_.assign(block_start_.back(), core::BoxBlock::Empty());
  for (size_t c = 0; c < cells; ++c) {
    for (uint32_t k = 0; k < counts[c]; ++k) {
      blocks_[block_start_[c] + k / 4].Set(k % 4, bounds[ids_[cell_start_[c] + k]]);
    }
  }
}

}  // namespace collision
