// RegionLocker: ordered leaf locking with try, then poll, then block acquisition.
#include "server/game/region_locker.h"

#include <algorithm>
#include <iterator>

#include "server/core/check.h"
#include "server/core/spin_wait.h"

namespace game {

RegionLocker::RegionLocker(areanode::AreanodeTree* tree, bool optimized)
    : tree_(tree), optimized_(optimized), frame_counts_(tree->leaf_count(), 0) {}

void RegionLocker::UnionInto(const std::vector<int>& a, const std::vector<int>& b,
                             std::vector<int>* out) {
  out->clear();
  std::set_union(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(*out));
}

void RegionLocker::LeavesFor(const Region& region, std::vector<int>* out) {
  RegionLeaves(region, *tree_, optimized_, out, &scratch_, &merged_);
}

void RegionLocker::Acquire(int leaf, bool blocking_ok, bool* ok) {
  std::mutex& mu = tree_->slot(tree_->LeafNode(leaf)).mutex;
  if (!mu.try_lock()) {
    if (!blocking_ok) {
      *ok = false;
      return;
    }
    blocked_ = true;
    wait_ns_ += core::LockPollingFirst(mu);
  }
  ++frame_counts_[leaf];
  held_.push_back(leaf);
  *ok = true;
}

void RegionLocker::LockSorted(const std::vector<int>& leaves) {
  AS_CHECK(held_.empty(), "LockSorted with leaves already held");
  bool ok = true;
  for (int leaf : leaves) Acquire(leaf, /*blocking_ok=*/true, &ok);
}

bool RegionLocker::Extend(const std::vector<int>& leaves) {
  if (held_.empty()) {
    LockSorted(leaves);
    return true;
  }
  // held_ stays ascending: collect the missing leaves, try the low ones, block on the high ones.
  scratch_.clear();
  std::set_difference(leaves.begin(), leaves.end(), held_.begin(), held_.end(),
                      std::back_inserter(scratch_));
  if (scratch_.empty()) return true;
  const int top = held_.back();
  bool ok = true;
  for (int leaf : scratch_) {
    Acquire(leaf, /*blocking_ok=*/leaf > top, &ok);
    if (!ok) {
      UnlockAll();
      return false;
    }
  }
  std::sort(held_.begin(), held_.end());
  return true;
}

void RegionLocker::UnlockAll() {
  for (auto it = held_.rbegin(); it != held_.rend(); ++it) {
    tree_->slot(tree_->LeafNode(*it)).mutex.unlock();
  }
  held_.clear();
}

void RegionLocker::ResetFrame() {
  std::fill(frame_counts_.begin(), frame_counts_.end(), 0);
}

}  // namespace game
