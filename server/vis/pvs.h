// Pvs: precomputed potential visibility over a uniform grid of cubic cells, Quake's PVS for maps
// that carry no BSP. Built by BuildPvs (pvs_build.h), stored and reused by pvs_cache.h.
//
// Threading contract: filled once by its builder or loader; afterwards immutable, and every
// query is const and safe from any number of threads.
//
// The rule (docs/maps.md, "Visibility"): Sees(a, b) is true when some point of cell b may be
// in line of sight of some point of cell a, within range_units of each other. Each cell's row
// covers only the cells within reach_cells (Chebyshev) of it; beyond that Sees() is false, so
// callers must not ask about points further apart than range_units. A cell with no open sample
// point (inside solid, or too thin to sample) has no row: it sees, and is seen by, every cell in
// reach. The set is conservative by intent: it includes some hidden cells, and the sampling
// misses a measured, small share of visible pairs (mapcheck --vis-check prints it).
#pragma once

#include <cstdint>
#include <vector>

#include "server/core/vec3.h"

namespace vis {

using core::Vec3;

struct CellCoord {
  int x = 0, y = 0, z = 0;
};

// The cells one cell's row covers: [x0, x1] x [y0, y1] x [z0, z1], reach_cells around it,
// clamped to the grid. Bit (x, y, z) of the row is ((z - z0) * sy + (y - y0)) * sx + (x - x0).
struct RowBox {
  int x0, y0, z0, x1, y1, z1;
  int sx() const { return x1 - x0 + 1; }
  int sy() const { return y1 - y0 + 1; }
  int sz() const { return z1 - z0 + 1; }
  int bits() const { return sx() * sy() * sz(); }
  bool Contains(int x, int y, int z) const {
    return x >= x0 && x <= x1 && y >= y0 && y <= y1 && z >= z0 && z <= z1;
  }
  int Bit(int x, int y, int z) const { return ((z - z0) * sy() + (y - y0)) * sx() + (x - x0); }
};

// The grid: cell (x, y, z) spans origin + cell_units * [x, x+1) x [y, y+1) x [z, z+1).
struct PvsGrid {
  Vec3 origin;
  float cell_units = 0;
  int nx = 0, ny = 0, nz = 0;
  int reach_cells = 0;    // rows cover cells at most this many cells away on each axis
  float range_units = 0;  // the largest viewer-to-target distance the rows answer for

  int cell_count() const { return nx * ny * nz; }
  int Index(int x, int y, int z) const { return (z * ny + y) * nx + x; }
  CellCoord Coord(int cell) const { return {cell % nx, (cell / nx) % ny, cell / (nx * ny)}; }
  Vec3 CellMin(CellCoord c) const {
    return origin + Vec3{c.x * cell_units, c.y * cell_units, c.z * cell_units};
  }
  // The cells c's row covers.
  RowBox RowBoxOf(CellCoord c) const;
};

inline RowBox PvsGrid::RowBoxOf(CellCoord c) const {
  const int r = reach_cells;
  auto lo = [r](int v) { return v - r < 0 ? 0 : v - r; };
  auto hi = [r](int v, int n) { return v + r > n - 1 ? n - 1 : v + r; };
  return RowBox{lo(c.x), lo(c.y), lo(c.z), hi(c.x, nx), hi(c.y, ny), hi(c.z, nz)};
}

class Pvs {
 public:
  static constexpr uint32_t kNoRow = UINT32_MAX;  // row_offset of a cell that sees everything

  // One viewer's row, resolved once: the per-candidate test of snapshot interest.
  class View {
   public:
    // True if the cell holding p is potentially visible from the viewer's cell.
    bool Sees(Vec3 p) const { return SeesCell(pvs_->CoordOf(p)); }
    bool SeesCell(CellCoord c) const;
    // Bit i set iff SeesCell({x0 + i, y, z}), for i < n; requires 0 < n <= 64.
    uint64_t SeesRun(int x0, int n, int y, int z) const;

   private:
    friend class Pvs;
    const Pvs* pvs_ = nullptr;
    const uint64_t* row_ = nullptr;  // nullptr: sees every cell in reach
    RowBox box_{};
  };

  Pvs() = default;
  // Takes the parts a builder or loader made. Requires row_offset.size() == grid.cell_count()
  // and every row inside `words` (AS_CHECK).
  Pvs(const PvsGrid& grid, std::vector<uint32_t> row_offset, std::vector<uint64_t> words);

  bool empty() const { return grid_.cell_count() == 0; }
  const PvsGrid& grid() const { return grid_; }

  // The cell holding p; points outside the grid go to the nearest cell.
  CellCoord CoordOf(Vec3 p) const;
  int CellOf(Vec3 p) const { const CellCoord c = CoordOf(p); return grid_.Index(c.x, c.y, c.z); }
  // True if cell `to` is potentially visible from cell `from` (see the rule above).
  bool Sees(int from, int to) const;
  // The row of the cell holding `eye`. Requires !empty().
  View From(Vec3 eye) const;

  // Words of `cell`'s row (BoxOf(cell).bits() bits), or nullptr if it has no row.
  const uint64_t* Row(int cell) const;

  // For the file format and tests.
  const std::vector<uint32_t>& row_offsets() const { return row_offset_; }
  const std::vector<uint64_t>& words() const { return words_; }

 private:
  View ViewOf(CellCoord c) const;

  PvsGrid grid_;
  float inv_cell_ = 0;
  std::vector<uint32_t> row_offset_;  // per cell: first word of its row, or kNoRow
  std::vector<uint64_t> words_;
};

inline CellCoord Pvs::CoordOf(Vec3 p) const {
  auto axis = [this](float v, float o, int n) {
    const float f = (v - o) * inv_cell_;
    if (!(f >= 0)) return 0;  // also NaN
    const int c = static_cast<int>(f);
    return c >= n ? n - 1 : c;
  };
  return {axis(p.x, grid_.origin.x, grid_.nx), axis(p.y, grid_.origin.y, grid_.ny),
          axis(p.z, grid_.origin.z, grid_.nz)};
}

inline bool Pvs::View::SeesCell(CellCoord c) const {
  if (!box_.Contains(c.x, c.y, c.z)) return false;
  if (row_ == nullptr) return true;
  const int bit = box_.Bit(c.x, c.y, c.z);
  return (row_[bit >> 6] >> (bit & 63)) & 1;
}

// Bits [pos, pos + len) of a bit array, as the low bits of the result; 0 < len <= 64.
inline uint64_t ExtractBits(const uint64_t* words, int pos, int len) {
  const int w = pos >> 6, off = pos & 63;
  uint64_t v = words[w] >> off;
  if (off + len > 64) v |= words[w + 1] << (64 - off);
  return len == 64 ? v : v & ((uint64_t{1} << len) - 1);
}

inline uint64_t Pvs::View::SeesRun(int x0, int n, int y, int z) const {
  if (y < box_.y0 || y > box_.y1 || z < box_.z0 || z > box_.z1) return 0;
  const int lo = x0 > box_.x0 ? x0 : box_.x0, hi = x0 + n - 1 < box_.x1 ? x0 + n - 1 : box_.x1;
  if (lo > hi) return 0;
  const int len = hi - lo + 1;
  const uint64_t run = row_ == nullptr ? (len == 64 ? ~uint64_t{0} : (uint64_t{1} << len) - 1)
                                       : ExtractBits(row_, box_.Bit(lo, y, z), len);
  return run << (lo - x0);
}

}  // namespace vis
