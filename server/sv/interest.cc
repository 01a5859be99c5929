// InterestIndex: counting sort of entities into PVS cells; nearest-first ring search.
#include "server/sv/interest.h"

#include <algorithm>
#include <cstdlib>

#include "server/core/check.h"

namespace sv {

namespace {

struct Ranked {
  float d2;
  game::EntityId id;
};

bool Nearer(const Ranked& a, const Ranked& b) {
  return a.d2 < b.d2 || (!(b.d2 < a.d2) && a.id < b.id);  // as std::pair's (d2, id) order
}

}  // namespace

void InterestIndex::Build(const game::World& world, const vis::Pvs& pvs) {
  AS_CHECK(!pvs.empty(), "interest needs a PVS");
  pvs_ = &pvs;
  const int cells = pvs.grid().cell_count();
  cell_start_.assign(static_cast<size_t>(cells) + 1, 0);
  items_.clear();
  item_cell_.clear();
  const areanode::AreanodeTree& tree = world.tree();
  for (game::EntityId id = 1; id < world.object_count(); ++id) {
    if (!tree.IsLinked(id)) continue;
    const game::Edict& e = world.Get(id);
    if (e.kind == game::EntityKind::kPickup && !(e.flags & game::kFlagAvailable)) continue;
    const core::Vec3 center = game::EdictCenter(e);
    const int cell = pvs.CellOf(center);
    items_.push_back({center, id});
    item_cell_.push_back(cell);
    ++cell_start_[cell + 1];
  }
  for (int c = 0; c < cells; ++c) cell_start_[c + 1] += cell_start_[c];
  std::vector<Item> sorted(items_.size());
  std::vector<uint32_t> fill(cell_start_.begin(), cell_start_.end() - 1);
  for (size_t i = 0; i < items_.size(); ++i) sorted[fill[item_cell_[i]]++] = items_[i];
  items_.swap(sorted);
}

void InterestIndex::Select(const game::World& world, game::EntityId player, float radius,
                           size_t max_count, std::vector<game::EntityId>* out) const {
  out->clear();
  if (!world.IsPlayerId(player) || pvs_ == nullptr) return;
  const vis::PvsGrid& g = pvs_->grid();
  AS_CHECK(radius <= g.range_units, "interest radius beyond the PVS range");
  const core::Vec3 eye = game::EdictEye(world.Get(player));
  const vis::Pvs::View view = pvs_->From(eye);
  const vis::CellCoord c = pvs_->CoordOf(eye);
  static thread_local std::vector<Ranked> ranked;
  ranked.clear();
  const float r2 = radius * radius;
  auto take_cell = [&](int x, int y, int z) {
    if (!view.SeesCell({x, y, z})) return;
    const int cell = g.Index(x, y, z);
    for (uint32_t i = cell_start_[cell]; i < cell_start_[cell + 1]; ++i) {
      const Item& it = items_[i];
      if (it.id == player) continue;
      const core::Vec3 d = it.center - eye;
      const float d2 = Dot(d, d);
      if (d2 <= r2) ranked.push_back({d2, it.id});
    }
  };
  // Ring k holds the cells k steps away (Chebyshev); every point of ring k + 1 is at least
  // k cells' width from the eye, which lies in ring 0.
  const int max_ring = std::min(g.reach_cells, static_cast<int>(radius / g.cell_units) + 1);
  for (int k = 0; k <= max_ring; ++k) {
    for (int z = std::max(0, c.z - k); z <= std::min(g.nz - 1, c.z + k); ++z) {
      for (int y = std::max(0, c.y - k); y <= std::min(g.ny - 1, c.y + k); ++y) {
        const bool face = std::abs(z - c.z) == k || std::abs(y - c.y) == k;
        if (face) {
          for (int x = std::max(0, c.x - k); x <= std::min(g.nx - 1, c.x + k); ++x) take_cell(x, y, z);
        } else {
          if (c.x - k >= 0) take_cell(c.x - k, y, z);
          if (k > 0 && c.x + k < g.nx) take_cell(c.x + k, y, z);
        }
      }
    }
    if (ranked.size() >= max_count && max_count > 0) {
      std::nth_element(ranked.begin(), ranked.begin() + static_cast<ptrdiff_t>(max_count - 1),
                       ranked.end(), Nearer);
      ranked.resize(max_count);
      const float reach = k * g.cell_units;
      if (ranked.back().d2 <= reach * reach) break;  // nothing unvisited is nearer
    }
  }
  if (ranked.size() > max_count) ranked.resize(max_count);
  std::sort(ranked.begin(), ranked.end(), Nearer);
  for (const Ranked& r : ranked) out->push_back(r.id);
}

}  // namespace sv
