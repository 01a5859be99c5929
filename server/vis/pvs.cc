// Pvs queries: row boxes, rows and the cell-to-cell test.
#include "server/vis/pvs.h"

#include "server/core/check.h"

namespace vis {

Pvs::Pvs(const PvsGrid& grid, std::vector<uint32_t> row_offset, std::vector<uint64_t> words)
    : grid_(grid), row_offset_(std::move(row_offset)), words_(std::move(words)) {
  AS_CHECK(grid_.nx > 0 && grid_.ny > 0 && grid_.nz > 0 && grid_.cell_units > 0,
           "empty or degenerate grid");
  AS_CHECK(row_offset_.size() == static_cast<size_t>(grid_.cell_count()), "one offset per cell");
  inv_cell_ = 1.0f / grid_.cell_units;
  for (int cell = 0; cell < grid_.cell_count(); ++cell) {
    if (row_offset_[cell] == kNoRow) continue;
    const size_t words_needed = (static_cast<size_t>(grid_.RowBoxOf(grid_.Coord(cell)).bits()) + 63) / 64;
    AS_CHECK(row_offset_[cell] + words_needed <= words_.size(), "row outside the word array");
  }
}

const uint64_t* Pvs::Row(int cell) const {
  const uint32_t off = row_offset_[cell];
  return off == kNoRow ? nullptr : words_.data() + off;
}

Pvs::View Pvs::ViewOf(CellCoord c) const {
  View v;
  v.pvs_ = this;
  v.box_ = grid_.RowBoxOf(c);
  v.row_ = Row(grid_.Index(c.x, c.y, c.z));
  return v;
}

bool Pvs::Sees(int from, int to) const {
  return ViewOf(grid_.Coord(from)).SeesCell(grid_.Coord(to));
}

Pvs::View Pvs::From(Vec3 eye) const {
  AS_CHECK(!empty(), "no grid");
  return ViewOf(CoordOf(eye));
}

}  // namespace vis
