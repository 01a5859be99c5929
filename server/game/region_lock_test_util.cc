// LockRegion / UnlockLeaves: see region_lock_test_util.h.
#include "server/game/region_lock_test_util.h"

#include <algorithm>
#include <iterator>

namespace game::testing {
namespace {

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
  std::vector<int> region_leaves, need, box_leaves, merged;
  for (;;) {
    RegionLeaves(w->RegionOf(player, cmd), tree, optimized, &region_leaves, &box_leaves, &merged);
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
