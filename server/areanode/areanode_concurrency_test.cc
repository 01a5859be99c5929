// Concurrency test for AreanodeTree's parent locking (run under ThreadSanitizer): threads that own
// disjoint entities in disjoint strips relink and query while holding the leaf locks of the
// leaves their boxes touch, as the server's region locking does; parent lists are shared.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <latch>
#include <random>
#include <thread>
#include <vector>

#include "server/areanode/areanode_tree.h"

namespace {

using areanode::AreanodeTree;
using areanode::EntityId;
using core::Bounds;

constexpr int kThreads = 4;
constexpr int kPerThread = 40;
constexpr int kSteps = 20000;
const Bounds kWorld{{-1024, -1024, -64}, {1024, 1024, 64}};

// Thread t's strip: 504 units wide in X, offset from the 512-unit leaf columns so neighbouring
// threads share leaves; the outer strips reach beyond the world; Y spans the world and beyond.
Bounds Strip(int t) {
  const float x0 = -1280.0f + 512.0f * static_cast<float>(t);
  return Bounds{{x0 + 4, -1200, -64}, {x0 + 508, 1200, 64}};
}

Bounds RandomBoxIn(const Bounds& strip, std::mt19937& rng) {
  std::uniform_real_distribution<float> half(0, 40);
  Bounds b;
  for (int a = 0; a < 3; ++a) {
    const float h = std::min(half(rng), 0.5f * (strip.maxs[a] - strip.mins[a]));
    std::uniform_real_distribution<float> centre(strip.mins[a] + h, strip.maxs[a] - h);
    const float c = centre(rng);
    b.mins[a] = c - h;
    b.maxs[a] = c + h;
  }
  // Often straddle or touch the shared Y planes (root at 0, depth-2 nodes at +-512).
  if (std::uniform_int_distribution<int>(0, 2)(rng) == 0) {
    const float planes[] = {-512, 0, 512};
    const float dist = planes[std::uniform_int_distribution<int>(0, 2)(rng)];
    const float h = half(rng);
    const int mode = std::uniform_int_distribution<int>(0, 2)(rng);
    b.mins.y = mode == 1 ? dist : dist - h;
    b.maxs.y = mode == 2 ? dist : dist + h;
  }
  return b;
}

// Locks the leaf slots of `leaves` (ascending) for the scope, as the server's region locks do.
class LeafLocks {
 public:
  LeafLocks(AreanodeTree& tree, const std::vector<int>& leaves) : tree_(tree), leaves_(leaves) {
    for (int l : leaves_) tree_.slot(tree_.LeafNode(l)).mutex.lock();
  }
  ~LeafLocks() {
    for (auto it = leaves_.rbegin(); it != leaves_.rend(); ++it) {
      tree_.slot(tree_.LeafNode(*it)).mutex.unlock();
    }
  }

 private:
  AreanodeTree& tree_;
  const std::vector<int>& leaves_;
};

struct ThreadResult {
  int query_mismatches = 0;
  int queries = 0;
  int relinks = 0;
  areanode::ParentLockCounters counters;
};

void RunWorker(AreanodeTree& tree, int t, std::vector<Bounds>& boxes, std::latch* start,
               ThreadResult* result) {
  start->arrive_and_wait();  // all threads run at once, so they contend
  std::mt19937 rng(1000 + t);
  const Bounds strip = Strip(t);
  const areanode::ParentLockCounters before = areanode::ThisThreadParentLockCounters();
  std::vector<int> leaves, more;
  std::vector<EntityId> got, want;
  for (int step = 0; step < kSteps; ++step) {
    if (std::uniform_int_distribution<int>(0, 4)(rng) > 0) {
      const EntityId id =
          t * kPerThread + std::uniform_int_distribution<int>(0, kPerThread - 1)(rng);
      const Bounds box = RandomBoxIn(strip, rng);
      tree.LeavesTouching(boxes[id], &leaves);
      tree.LeavesTouching(box, &more);
      leaves.insert(leaves.end(), more.begin(), more.end());
      std::sort(leaves.begin(), leaves.end());
      leaves.erase(std::unique(leaves.begin(), leaves.end()), leaves.end());
      LeafLocks locks(tree, leaves);
      tree.Relink(id, box);
      boxes[id] = box;
      ++result->relinks;
    } else {
      const Bounds q = RandomBoxIn(strip, rng);
      want.clear();
      for (EntityId id = t * kPerThread; id < (t + 1) * kPerThread; ++id) {
        if (boxes[id].Intersects(q)) want.push_back(id);
      }
      tree.LeavesTouching(q, &leaves);
      LeafLocks locks(tree, leaves);
      tree.Query(q, &got);
      if (got != want) ++result->query_mismatches;
      ++result->queries;
    }
  }
  const areanode::ParentLockCounters& after = areanode::ThisThreadParentLockCounters();
  result->counters.acquisitions = after.acquisitions - before.acquisitions;
  result->counters.contended = after.contended - before.contended;
  result->counters.wait_ns = after.wait_ns - before.wait_ns;
}

}  // namespace

TEST_CASE("parallel relink and query under leaf locks with parent locking", "[areanode][tsan]") {
  AreanodeTree tree(kWorld, areanode::kDefaultDepth, kThreads * kPerThread);
  std::vector<Bounds> boxes(kThreads * kPerThread);
  std::mt19937 rng(7);
  for (int t = 0; t < kThreads; ++t) {
    for (int i = 0; i < kPerThread; ++i) {
      const EntityId id = t * kPerThread + i;
      boxes[id] = RandomBoxIn(Strip(t), rng);
      tree.Link(id, boxes[id]);
    }
  }
  tree.set_parent_locking(true);

  std::vector<ThreadResult> results(kThreads);
  std::vector<std::thread> threads;
  std::latch start(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back(RunWorker, std::ref(tree), t, std::ref(boxes), &start, &results[t]);
  }
  for (std::thread& th : threads) th.join();

  uint64_t acquisitions = 0;
  for (const ThreadResult& r : results) {
    CHECK(r.query_mismatches == 0);
    CHECK(r.queries > 0);
    CHECK(r.relinks > 0);
    CHECK(r.counters.acquisitions > 0);  // every query visits the root
    CHECK(r.counters.contended <= r.counters.acquisitions);
    acquisitions += r.counters.acquisitions;
    UNSCOPED_INFO("relinks " << r.relinks << " queries " << r.queries << " parent acquisitions "
                  << r.counters.acquisitions << " contended " << r.counters.contended);
  }
  // Each parent acquisition was counted once in its slot, under the slot's lock.
  uint64_t slot_count = 0;
  for (int n = 0; n < tree.node_count(); ++n) {
    if (tree.node(n).axis >= 0) slot_count += tree.slot(n).lock_count;
  }
  REQUIRE(slot_count == acquisitions);

  // Afterwards the tree agrees with brute force.
  for (EntityId id = 0; id < kThreads * kPerThread; ++id) {
    REQUIRE(tree.IsLinked(id));
    REQUIRE(tree.BoxOf(id) == boxes[id]);
    REQUIRE(tree.NodeOf(id) == tree.NodeFor(boxes[id]));
  }
  std::vector<EntityId> got, want;
  for (int k = 0; k < 500; ++k) {
    const Bounds q = RandomBoxIn(Bounds{{-1400, -1400, -100}, {1400, 1400, 100}}, rng);
    tree.Query(q, &got);
    want.clear();
    for (EntityId id = 0; id < kThreads * kPerThread; ++id) {
      if (boxes[id].Intersects(q)) want.push_back(id);
    }
    REQUIRE(got == want);
  }
}
