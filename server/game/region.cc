// Region's box helpers and the leaves under a region.
#include "server/game/region.h"

#include <algorithm>
#include <iterator>

#include "server/areanode/areanode_tree.h"

namespace game {

int Region::LockBoxes(Bounds out[kMaxRegionBoxes]) const {
  int n = 0;
  if (!move_box.IsEmpty()) out[n++] = move_box;
  for (int i = 0; i < teleport_count; ++i) out[n++] = teleport_boxes[i];
  if (action != ActionKind::kNone && !action_box.IsEmpty()) out[n++] = action_box;
  return n;
}

bool Region::Covers(const Bounds& box) const {
  if (whole_map) return true;
  if (move_box.Contains(box)) return true;
  for (int i = 0; i < teleport_count; ++i) {
    if (teleport_boxes[i].Contains(box)) return true;
  }
  return action != ActionKind::kNone && action_box.Contains(box) &&
         (action_wedge.empty() || action_wedge.Contains(box));
}

bool Region::CoversSegment(core::Vec3 a, core::Vec3 b, float pad) const {
  const Bounds swept = Bounds::Spanning(a, b).Expanded(pad);
  if (Covers(swept)) return true;
  if (action_wedge.empty()) return false;
  // The wedge is convex: holding both ends' squares, it holds the square swept between them.
  return action_box.Contains(swept) && action_wedge.Contains(Bounds{a, a}.Expanded(pad)) &&
         action_wedge.Contains(Bounds{b, b}.Expanded(pad));
}

bool Region::Meets(const Bounds& box) const {
  if (whole_map) return true;
  if (move_box.Intersects(box)) return true;
  for (int i = 0; i < teleport_count; ++i) {
    if (teleport_boxes[i].Intersects(box)) return true;
  }
  return action != ActionKind::kNone && action_box.Intersects(box) &&
         (action_wedge.empty() || action_wedge.Intersects(box, kWedgeLockSlack));
}

void RegionLeaves(const Region& region, const areanode::AreanodeTree& tree, bool optimized,
                  std::vector<int>* out, std::vector<int>* box_leaves, std::vector<int>* merged) {
  out->clear();
  if (region.NeedsWholeMap(optimized)) {
    for (int l = 0; l < tree.leaf_count(); ++l) out->push_back(l);
    return;
  }
  // In the conservative scheme a long-range action already forced the whole map above, so the
  // boxes here are the move box and teleport boxes (plus the action box when optimized).
  Bounds boxes[kMaxRegionBoxes];
  const int n = region.LockBoxes(boxes);
  const bool wedge = region.action != ActionKind::kNone && !region.action_box.IsEmpty() &&
                     !region.action_wedge.empty();
  for (int i = 0; i < n; ++i) {
    if (wedge && i == n - 1) {  // the action box, narrowed by its wedge
      tree.LeavesTouching(boxes[i], region.action_wedge, kWedgeLockSlack, box_leaves);
    } else {
      tree.LeavesTouching(boxes[i], box_leaves);  // ascending, unique
    }
    merged->clear();
    std::set_union(out->begin(), out->end(), box_leaves->begin(), box_leaves->end(),
                   std::back_inserter(*merged));
    out->swap(*merged);
  }
}

}  // namespace game
