// RegionLocker, the one implementation of the region-locking protocol: Extend's paths (higher
// leaves block, a busy lower leaf makes it release everything), LockCommandRegion's relock after
// such a release, and (label tsan) many threads locking random regions with no deadlock and no
// lost update of what the leaves guard.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <latch>
#include <random>
#include <thread>
#include <vector>

#include "server/areanode/areanode_tree.h"
#include "server/game/region_locker.h"

namespace game {
namespace {

using core::Bounds;

// Depth 3: 8 leaves in a row of 512-unit columns along X, split on X then Y then X... (the
// tree's own rule); leaf ids ascend left to right along the bottom level.
const Bounds kWorld{{-2048, -256, -64}, {2048, 256, 64}};

// A thread that holds some leaves (through its own locker) until told to let go.
class Holder {
 public:
  Holder(areanode::AreanodeTree* tree, std::vector<int> leaves)
      : thread_([this, tree, leaves] {
          RegionLocker locker(tree, /*optimized=*/true);
          locker.LockSorted(leaves);
          locked_.count_down();
          release_.wait();
          locker.UnlockAll();
        }) {
    locked_.wait();
  }
  ~Holder() {
    Release();
    thread_.join();
  }
  void Release() {
    if (!released_) release_.count_down();
    released_ = true;
  }

 private:
  std::latch locked_{1}, release_{1};
  bool released_ = false;
  std::thread thread_;
};

// True if another thread could take `leaf` now (the caller's thread must not hold it).
bool LeafFree(areanode::AreanodeTree& tree, int leaf) {
  bool free = false;
  std::thread([&] {
    std::mutex& mu = tree.slot(tree.LeafNode(leaf)).mutex;
    free = mu.try_lock();
    if (free) mu.unlock();
  }).join();
  return free;
}

TEST_CASE("region locker: Extend locks missing leaves above the held ones") {
  areanode::AreanodeTree tree(kWorld, 3, 16);
  RegionLocker locker(&tree, true);
  locker.LockSorted({2, 3});
  REQUIRE(locker.Extend({2, 3, 5, 7}));
  CHECK(locker.held() == std::vector<int>{2, 3, 5, 7});
  CHECK_FALSE(LeafFree(tree, 5));
  // A free lower leaf is taken with a try, and the held set stays ascending.
  REQUIRE(locker.Extend({0, 2, 3, 5, 7}));
  CHECK(locker.held() == std::vector<int>{0, 2, 3, 5, 7});
  locker.UnlockAll();
  CHECK(locker.held().empty());
  for (int leaf = 0; leaf < tree.leaf_count(); ++leaf) CHECK(LeafFree(tree, leaf));
  CHECK(locker.frame_counts()[2] == 1);
  CHECK(locker.frame_counts()[0] == 1);
}

TEST_CASE("region locker: Extend releases everything when a lower leaf is busy") {
  areanode::AreanodeTree tree(kWorld, 3, 16);
  Holder other(&tree, {1});
  RegionLocker locker(&tree, true);
  locker.LockSorted({4, 6});
  CHECK_FALSE(locker.Extend({1, 4, 6}));  // leaf 1 is below leaf 4: only tried, and busy
  CHECK(locker.held().empty());
  CHECK(LeafFree(tree, 4));  // released, so the holder of 1 could go on to take 4
  CHECK(LeafFree(tree, 6));
  // The caller's retry: the union in ascending order, blocking; it waits for the holder. A
  // locker lives on one thread: this one hands it over, and the retry unlocks where it locked.
  std::vector<int> held;
  std::thread retry([&] {
    locker.LockSorted({1, 4, 6});
    held = locker.held();
    locker.UnlockAll();
  });
  other.Release();
  retry.join();
  CHECK(held == std::vector<int>{1, 4, 6});
}

// A RegionSource (as World) whose player stands in one box and whose command's region is a box
// that grows each time it is read (a player pushed while it waited for its locks).
struct GrowingRegion {
  Bounds box;
  mutable Bounds region;
  mutable int reads = 0;
  Bounds BoxOf(EntityId) const { return box; }
  Region RegionOf(EntityId, const UserCmd&) const {
    if (++reads > 1) region.maxs.x += 512;  // one column further each time
    Region r;
    r.move_box = region;
    return r;
  }
};

TEST_CASE("region locker: a command's region is relocked in order after a busy lower leaf") {
  areanode::AreanodeTree tree(kWorld, 3, 16);
  RegionLocker locker(&tree, true);
  // Depth 3 over this world cuts 8 columns 512 units wide; children[0] is the side above a
  // split, so leaf ids count down along X: the player's column is leaf 7, its region first
  // reaches leaves 6 and 5 (below 7: only tried), then 4 on the next read.
  GrowingRegion source;
  source.box = Bounds{{-1800, -10, 0}, {-1780, 10, 10}};
  source.region = Bounds{{-1800, -10, 0}, {-900, 10, 10}};
  std::vector<int> leaves;
  locker.LeavesForBox(source.box, &leaves);
  REQUIRE(leaves == std::vector<int>{7});
  locker.LeavesForBox(source.region, &leaves);
  REQUIRE(leaves == std::vector<int>{5, 6, 7});
  Holder other(&tree, {6});  // busy: the first Extend must fail
  std::thread command([&] {
    RegionLock lock(&locker, source, 1, UserCmd{});
    CHECK(locker.held() == std::vector<int>{4, 5, 6, 7});
  });
  // The command holds 7 whenever it holds 5, until its Extend failed on 6 and it let go of
  // everything: once 5 was seen held and then 7 free, the retry has begun.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  bool retrying = false;
  while (!retrying && std::chrono::steady_clock::now() < deadline) {
    retrying = !LeafFree(tree, 5) && LeafFree(tree, 7);
    if (!retrying) std::this_thread::yield();
  }
  CHECK(retrying);
  other.Release();
  command.join();
  CHECK(locker.TakeRetries() == 1);
  CHECK(locker.held().empty());  // the guard unlocked
  CHECK(source.reads == 2);
  for (int leaf = 0; leaf < tree.leaf_count(); ++leaf) CHECK(LeafFree(tree, leaf));
}

// Many threads, random regions over a depth-4 tree: each command adds one to a counter per leaf
// of its region while holding it. TSan reports any access to a counter without its leaf's lock;
// the totals show that no increment was lost; finishing shows that nothing deadlocked.
struct RandomRegion {
  Bounds box;
  mutable Bounds region;
  mutable std::mt19937* rng = nullptr;
  Bounds BoxOf(EntityId) const { return box; }
  Region RegionOf(EntityId, const UserCmd&) const {
    if (std::uniform_int_distribution<int>(0, 3)(*rng) == 0) {  // sometimes grows, never shrinks
      region.mins.x -= std::uniform_real_distribution<float>(0, 600)(*rng);
      region.maxs.y += std::uniform_real_distribution<float>(0, 600)(*rng);
    }
    Region r;
    r.move_box = region;
    return r;
  }
};

TEST_CASE("tsan: region locker under many threads and random regions: no deadlock, no lost update") {
  const Bounds world{{-2048, -2048, -64}, {2048, 2048, 64}};
  areanode::AreanodeTree tree(world, 4, 16);
  constexpr int kThreads = 8, kCommands = 4000;
  std::vector<uint64_t> counters(tree.leaf_count(), 0);  // counters[l] guarded by leaf l's lock
  std::vector<std::vector<uint64_t>> expected(kThreads, std::vector<uint64_t>(tree.leaf_count(), 0));
  std::vector<uint64_t> retries(kThreads, 0), uncovered(kThreads, 0);
  std::vector<std::thread> threads;
  std::latch start(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(static_cast<uint32_t>(t + 1));
      RegionLocker locker(&tree, true);
      std::uniform_real_distribution<float> coord(-2000, 1800), size(1, 900);
      std::vector<int> leaves;
      start.arrive_and_wait();
      for (int c = 0; c < kCommands; ++c) {
        RandomRegion source;
        source.rng = &rng;
        const float x = coord(rng), y = coord(rng);
        source.box = Bounds{{x, y, 0}, {x + 32, y + 32, 56}};
        source.region = Bounds{{x - size(rng), y - size(rng), 0}, {x + 32 + size(rng), y + 32 + size(rng), 56}};
        RegionLock lock(&locker, source, t, UserCmd{});
        Region last;  // the region as LockCommandRegion last read it: the lock must cover it
        last.move_box = source.region;
        locker.LeavesFor(last, &leaves);
        if (!std::includes(locker.held().begin(), locker.held().end(), leaves.begin(), leaves.end())) {
          ++uncovered[t];
        }
        for (int leaf : locker.held()) {
          ++counters[leaf];
          ++expected[t][leaf];
        }
      }
      retries[t] = locker.TakeRetries();
    });
  }
  for (std::thread& th : threads) th.join();
  uint64_t total_retries = 0;
  for (int t = 0; t < kThreads; ++t) {
    total_retries += retries[t];
    CHECK(uncovered[t] == 0);
  }
  for (int leaf = 0; leaf < tree.leaf_count(); ++leaf) {
    uint64_t want = 0;
    for (int t = 0; t < kThreads; ++t) want += expected[t][leaf];
    INFO("leaf " << leaf);
    CHECK(counters[leaf] == want);
  }
  WARN("relocks after a busy lower leaf: " << total_retries);
}

}  // namespace
}  // namespace game
