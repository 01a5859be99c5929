// RegionLocker: one thread's side of the paper's region locking (section 3.3). It takes the
// areanode leaf locks of a command's region in ascending leaf order (no deadlock), holds them for
// the whole command, and counts what it did for the per-frame lock statistics. Parent-node locks
// are taken by the tree itself (AreanodeTree::set_parent_locking(true)). The server's workers and
// the parallel tests lock through it alike, a command at a time, with a RegionLock guard.
//
// Threading: one per thread that runs commands, used only by that thread. The per-frame leaf
// counts are read and reset by the server's master at a phase boundary (ResetFrame), never while
// the owner runs commands.
#pragma once

#include <cstdint>
#include <vector>

#include "server/areanode/areanode_tree.h"
#include "server/game/entity.h"
#include "server/game/region.h"
#include "server/game/user_cmd.h"

namespace game {

class RegionLocker {
 public:
  // `tree` must outlive the locker. `optimized`: areanode-opt (expanded / directional boxes)
  // rather than the conservative areanode scheme (whole map for every long-range action).
  RegionLocker(areanode::AreanodeTree* tree, bool optimized);
  RegionLocker(const RegionLocker&) = delete;
  RegionLocker& operator=(const RegionLocker&) = delete;

  // Locks what World::ExecuteCommand(player, cmd) may touch (World::RegionOf's protocol): the
  // leaves under the player's box first, so its edict may be read; then the region's leaves,
  // grown with Extend and, when a lower leaf is busy, released and relocked in ascending order
  // until the held set covers the region computed under them. Invariant: nothing held.
  // `world` is the World whose tree this locker locks; anything with World's BoxOf(player) and
  // RegionOf(player, cmd) will do (the locker's own tests feed it random regions).
  template <class RegionSource>
  void LockCommandRegion(const RegionSource& world, EntityId player, const UserCmd& cmd);

  // The leaves the scheme locks for `region`, ascending, into *out (game::RegionLeaves).
  void LeavesFor(const Region& region, std::vector<int>* out);
  // The leaves a box touches, ascending.
  void LeavesForBox(const core::Bounds& box, std::vector<int>* out) const {
    tree_->LeavesTouching(box, out);
  }

  // Locks `leaves` (ascending, unique), blocking. Invariant: nothing held.
  void LockSorted(const std::vector<int>& leaves);
  // Makes the held set include `leaves` (ascending, unique). Leaves above everything held are
  // locked blocking in order; leaves below are only tried. Returns false (holding nothing) if a
  // try failed: the caller relocks the union with LockSorted and recomputes its region.
  bool Extend(const std::vector<int>& leaves);
  void UnlockAll();
  const std::vector<int>& held() const { return held_; }  // ascending

  // Time spent waiting for busy leaf locks since the last call: polling one for up to 30 us,
  // then blocking on it (try_lock first: uncontended acquisitions cost no clock reads).
  uint64_t TakeWaitNs() { uint64_t v = wait_ns_; wait_ns_ = 0; return v; }
  // LockCommandRegion's releases and relocks (a lower leaf was busy) since the last call.
  uint32_t TakeRetries() { uint32_t v = retries_; retries_ = 0; return v; }
  // True if a leaf lock was busy (this thread had to block on it) since the last call: a command
  // that waited for another thread's command.
  bool TakeBlocked() { bool v = blocked_; blocked_ = false; return v; }

  // Acquisitions per leaf in the current frame (for relock / shared-leaf statistics).
  const std::vector<uint32_t>& frame_counts() const { return frame_counts_; }
  void ResetFrame();

  int leaf_count() const { return tree_->leaf_count(); }

 private:
  void Acquire(int leaf, bool blocking_ok, bool* ok);
  static void UnionInto(const std::vector<int>& a, const std::vector<int>& b, std::vector<int>* out);

  areanode::AreanodeTree* tree_;
  bool optimized_;
  std::vector<int> held_;
  std::vector<int> scratch_, merged_;                     // LeavesFor and Extend
  std::vector<int> region_leaves_, box_leaves_, union_;   // LockCommandRegion
  std::vector<uint32_t> frame_counts_;
  uint64_t wait_ns_ = 0;
  uint32_t retries_ = 0;
  bool blocked_ = false;
};

template <class RegionSource>
void RegionLocker::LockCommandRegion(const RegionSource& world, EntityId player, const UserCmd& cmd) {
  // The leaves under the player's box first: while one of them is held, no other command can
  // write this player, so its edict may be read to compute the region. The box itself may be
  // read unlocked: only the player's own commands (this thread) and the world phase move it.
  LeavesForBox(world.BoxOf(player), &box_leaves_);
  LockSorted(box_leaves_);
  for (;;) {
    LeavesFor(world.RegionOf(player, cmd), &region_leaves_);
    if (Extend(region_leaves_)) return;
    // A lower leaf was busy and everything was released: take the union in order, then
    // recompute the region (the player may have been pushed meanwhile).
    ++retries_;
    LeavesForBox(world.BoxOf(player), &box_leaves_);
    UnionInto(region_leaves_, box_leaves_, &union_);
    LockSorted(union_);
  }
}

// Holds one command's region locked for its scope: RegionLocker::LockCommandRegion on
// construction, UnlockAll on destruction. Lives on the locker's thread.
class RegionLock {
 public:
  template <class RegionSource>
  RegionLock(RegionLocker* locker, const RegionSource& world, EntityId player, const UserCmd& cmd)
      : locker_(locker) {
    locker_->LockCommandRegion(world, player, cmd);
  }
  ~RegionLock() { locker_->UnlockAll(); }
  RegionLock(const RegionLock&) = delete;
  RegionLock& operator=(const RegionLock&) = delete;

 private:
  RegionLocker* locker_;
};

}  // namespace game
