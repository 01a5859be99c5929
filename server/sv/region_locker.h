// RegionLocker: one worker thread's side of the paper's region locking (section 3.3). It takes the
// areanode leaf locks of a command's region in ascending leaf order (no deadlock), holds them for
// the whole command, and counts what it did for the per-frame lock statistics. Parent-node locks
// are taken by the tree itself (AreanodeTree::set_parent_locking(true)).
//
// Threading: one per worker thread, used only by that thread. The per-frame leaf counts are read
// and reset by the master at a phase boundary (ResetFrame), never while the owner runs commands.
#pragma once

#include <cstdint>
#include <vector>

#include "server/areanode/areanode_tree.h"
#include "server/game/region.h"

namespace sv {

class RegionLocker {
 public:
  // `tree` must outlive the locker. `optimized`: areanode-opt (expanded / directional boxes)
  // rather than the conservative areanode scheme (whole map for every long-range action).
  RegionLocker(areanode::AreanodeTree* tree, bool optimized);

  // The leaves the scheme locks for `region`, ascending, into *out (game::RegionLeaves).
  void LeavesFor(const game::Region& region, std::vector<int>* out);
  // The leaves a box touches, ascending.
  void LeavesForBox(const core::Bounds& box, std::vector<int>* out) const {
    tree_->LeavesTouching(box, out);
  }

  // Locks `leaves` (ascending, unique) when nothing is held.
  void LockSorted(const std::vector<int>& leaves);
  // Makes the held set include `leaves` (ascending, unique). Leaves above everything held are
  // locked blocking in order; leaves below are only tried. Returns false (holding nothing) if a
  // try failed: the caller relocks the union with LockSorted and recomputes its region.
  bool Extend(const std::vector<int>& leaves);
  void UnlockAll();
  const std::vector<int>& held() const { return held_; }  // ascending

  // Time spent blocked on leaf locks since the last call (try_lock first: uncontended
  // acquisitions cost no clock reads).
  uint64_t TakeWaitNs() { uint64_t v = wait_ns_; wait_ns_ = 0; return v; }

  // Acquisitions per leaf in the current frame (for relock / shared-leaf statistics).
  const std::vector<uint32_t>& frame_counts() const { return frame_counts_; }
  void ResetFrame();

  int leaf_count() const { return tree_->leaf_count(); }

 private:
  void Acquire(int leaf, bool blocking_ok, bool* ok);

  areanode::AreanodeTree* tree_;
  bool optimized_;
  std::vector<int> held_;
  std::vector<int> scratch_, merged_;
  std::vector<uint32_t> frame_counts_;
  uint64_t wait_ns_ = 0;
};

}  // namespace sv
