// LockRegion / UnlockLeaves: see region_lock_test_util.h.
#include "server/game/region_lock_test_util.h"

#include <algorithm>
#include <iterator>

namespace game::testing {
namespace {

// Ascending leaves the region needs under the conservative or optimized scheme.
void LeavesFor(const areanode::AreanodeTree& tree, const Region& r, bool optimized,
               std::vector<int>* out) {
  out->clear();
  if (r.NeedsWholeMap(optimized)) {
    for (int l = 0; l < tree.leaf_count(); ++l) out->push_back(l);
    return;
  }
  Bounds boxes[kMaxRegionBoxes];
  const int n = r.LockBoxes(boxes);
  std::vector<int> leaves;
  for (int i = 0; i < n; ++i) {
    tree.LeavesTouching(boxes[i], &leaves);
    out->insert(out->end(), leaves.begin(), leaves.end());
  }
  std::sort(out->begin(), out->end());
  out->erase(std::unique(out->begin(), out->end()), out->end());
}

void LockLeaves(areanode::AreanodeTree& tree, const std::vector<int>& leaves) {
  for (int l : leaves) tree.slot(tree.LeafNode(l)).mutex.lock();
}

}  // namespace

void UnlockLeaves(areanode::AreanodeTree& tree, const std::vector<int>& leaves) {
  for (auto it = leaves.rbegin(); it != leaves.rend(); ++it) {
    tree.slot(tree.LeafNode(*it)).mutex.unlock();
  }
}

void LockRegion(World* w, EntityId player, const UserCmd& cmd, bool optimized,
                std::vector<int>* held) {
  auto& tree = w->tree();
  tree.LeavesTouching(w->BoxOf(player), held);
  LockLeaves(tree, *held);
  std::vector<int> region_leaves, need;
  for (;;) {
    LeavesFor(tree, w->RegionOf(player, cmd), optimized, &region_leaves);
    need.clear();
    std::set_union(held->begin(), held->end(), region_leaves.begin(), region_leaves.end(),
                   std::back_inserter(need));
    if (need == *held) return;
    UnlockLeaves(tree, *held);
    *held = need;
    LockLeaves(tree, *held);
  }
}

}  // namespace game::testing
