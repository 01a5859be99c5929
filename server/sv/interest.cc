// InterestIndex: counting sort of entities into sub-cells (each PVS cell split kSplit ways per
// axis, so a dense crowd is scanned in finer rings); nearest-first ring search that keeps the
// best max_count in a max-heap (its top is the farthest kept), so the stop test is O(1).
#include "server/sv/interest.h"

#include <algorithm>
#include <cstdlib>

#include "server/core/check.h"

namespace sv {

namespace {

constexpr int kSplit = 2;  // sub-cells per PVS cell and axis

struct Ranked {
  float d2;
  game::EntityId id;
};

// A function object, not a function pointer, so the heap operations inline it.
struct Nearer {
  bool operator()(const Ranked& a, const Ranked& b) const {
    return a.d2 < b.d2 || (!(b.d2 < a.d2) && a.id < b.id);  // as std::pair's (d2, id) order
  }
};

}  // namespace

int InterestIndex::SubOf(float v, float origin, int n) const {
  const float f = (v - origin) * inv_sub_;
  if (!(f >= 0)) return 0;  // also NaN
  const int c = static_cast<int>(f);
  return c >= n ? n - 1 : c;
}

void InterestIndex::Build(const game::World& world, const vis::Pvs& pvs) {
  AS_CHECK(!pvs.empty(), "interest needs a PVS");
  if (pvs_ != &pvs) {
    pvs_ = &pvs;
    const vis::PvsGrid& g = pvs.grid();
    nx_ = g.nx * kSplit;
    ny_ = g.ny * kSplit;
    nz_ = g.nz * kSplit;
    sub_units_ = g.cell_units / kSplit;
    inv_sub_ = 1.0f / sub_units_;
  }
  const vis::Vec3 o = pvs.grid().origin;
  cell_start_.assign(static_cast<size_t>(nx_) * ny_ * nz_ + 1, 0);
  items_.clear();
  item_cell_.clear();
  const areanode::AreanodeTree& tree = world.tree();
  for (game::EntityId id = 1; id < world.object_count(); ++id) {
    if (!tree.IsLinked(id)) continue;
    const game::Edict& e = world.Get(id);
    if (e.kind == game::EntityKind::kPickup && !(e.flags & game::kFlagAvailable)) continue;
    const core::Vec3 center = game::EdictCenter(e);
    const int cell = (SubOf(center.z, o.z, nz_) * ny_ + SubOf(center.y, o.y, ny_)) * nx_ +
                     SubOf(center.x, o.x, nx_);
    items_.push_back({center, id});
    item_cell_.push_back(cell);
    ++cell_start_[cell + 1];
  }
  for (size_t c = 1; c < cell_start_.size(); ++c) cell_start_[c] += cell_start_[c - 1];
  sorted_.resize(items_.size());
  fill_.assign(cell_start_.begin(), cell_start_.end() - 1);
  for (size_t i = 0; i < items_.size(); ++i) sorted_[fill_[item_cell_[i]]++] = items_[i];
  items_.swap(sorted_);
}

void InterestIndex::Select(const game::World& world, game::EntityId player, float radius,
                           size_t max_count, std::vector<game::EntityId>* out) const {
  out->clear();
  if (!world.IsPlayerId(player) || pvs_ == nullptr || max_count == 0) return;
  AS_CHECK(radius <= pvs_->grid().range_units, "interest radius beyond the PVS range");
  const core::Vec3 eye = game::EdictEye(world.Get(player));
  const vis::Pvs::View view = pvs_->From(eye);
  const vis::Vec3 o = pvs_->grid().origin;
  const int cx = SubOf(eye.x, o.x, nx_), cy = SubOf(eye.y, o.y, ny_), cz = SubOf(eye.z, o.z, nz_);
  static thread_local std::vector<Ranked> heap;  // max-heap by Nearer: top is the farthest kept
  heap.clear();
  const float r2 = radius * radius;
  auto take_cell = [&](int x, int y, int z) __attribute__((always_inline)) {
    if (!view.SeesCell({x / kSplit, y / kSplit, z / kSplit})) return;
    const int cell = (z * ny_ + y) * nx_ + x;
    for (uint32_t i = cell_start_[cell]; i < cell_start_[cell + 1]; ++i) {
      const Item& it = items_[i];
      if (it.id == player) continue;
      const core::Vec3 d = it.center - eye;
      const Ranked r{Dot(d, d), it.id};
      if (r.d2 > r2) continue;
      if (heap.size() < max_count) {
        heap.push_back(r);
        std::push_heap(heap.begin(), heap.end(), Nearer{});
      } else if (r.d2 <= heap.front().d2 && Nearer{}(r, heap.front())) {
        std::pop_heap(heap.begin(), heap.end(), Nearer{});
        heap.back() = r;
        std::push_heap(heap.begin(), heap.end(), Nearer{});
      }
    }
  };
  // Ring k holds the sub-cells k steps away (Chebyshev); every point of ring k + 1 is at least
  // k sub-cells' width from the eye, which lies in ring 0.
  const int max_ring = static_cast<int>(radius * inv_sub_) + 1;
  for (int k = 0; k <= max_ring; ++k) {
    for (int z = std::max(0, cz - k); z <= std::min(nz_ - 1, cz + k); ++z) {
      for (int y = std::max(0, cy - k); y <= std::min(ny_ - 1, cy + k); ++y) {
        if (std::abs(z - cz) == k || std::abs(y - cy) == k) {
          for (int x = std::max(0, cx - k); x <= std::min(nx_ - 1, cx + k); ++x) take_cell(x, y, z);
        } else {
          if (cx - k >= 0) take_cell(cx - k, y, z);
          if (k > 0 && cx + k < nx_) take_cell(cx + k, y, z);
        }
      }
    }
    const float reach = k * sub_units_;
    if (heap.size() == max_count && heap.front().d2 <= reach * reach) break;  // nothing nearer left
  }
  std::sort_heap(heap.begin(), heap.end(), Nearer{});
  for (const Ranked& r : heap) out->push_back(r.id);
}

}  // namespace sv
