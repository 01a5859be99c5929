// LeafPartition: the neighbour graph, and Grow/Improve keep every part connected, own every
// leaf, balance uniform and skewed loads, and move few leaves when the load shifts.
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <vector>

#include "server/areanode/areanode_tree.h"
#include "server/areanode/leaf_partition.h"

namespace {

using areanode::AreanodeTree;
using areanode::Bounds;
using areanode::LeafPartition;

uint64_t Spread(const std::vector<uint64_t>& loads) {
  const auto [lo, hi] = std::minmax_element(loads.begin(), loads.end());
  return *hi - *lo;
}

void CheckPartition(const LeafPartition& p) {
  for (int l = 0; l < p.leaf_count(); ++l) {
    REQUIRE(p.owner(l) >= 0);
    REQUIRE(p.owner(l) < p.parts());
  }
  for (int part = 0; part < p.parts(); ++part) {
    INFO("part " << part);
    CHECK(p.Connected(part));
  }
}

}  // namespace

TEST_CASE("leaf neighbours share a face, symmetric, and LeafAt finds the leaf of a point") {
  const Bounds world{{0, 0, -100}, {1024, 512, 100}};
  AreanodeTree tree(world, 4, 8);
  LeafPartition p(tree, 2);
  for (int l = 0; l < p.leaf_count(); ++l) {
    CHECK(!p.neighbours(l).empty());
    for (int n : p.neighbours(l)) {
      const std::vector<int>& back = p.neighbours(n);
      CHECK(std::find(back.begin(), back.end(), l) != back.end());
    }
    const Bounds& r = tree.node(tree.LeafNode(l)).bounds;
    const core::Vec3 centre{0.5f * (r.mins.x + r.maxs.x), 0.5f * (r.mins.y + r.maxs.y), 0};
    CHECK(tree.LeafAt(centre) == l);
  }
  // A 1024 x 512 world at depth 4 is a 4 x 4 grid of 256 x 128 leaves: corners have 2
  // neighbours, edges 3, the inside 4 (a shared corner alone does not count).
  int two = 0, three = 0, four = 0;
  for (int l = 0; l < p.leaf_count(); ++l) {
    const size_t n = p.neighbours(l).size();
    two += n == 2, three += n == 3, four += n == 4;
  }
  CHECK(two == 4);
  CHECK(three == 8);
  CHECK(four == 4);
}

TEST_CASE("Grow splits uniform load evenly into connected parts") {
  AreanodeTree tree(Bounds{{-2000, -1500, -100}, {2000, 1500, 100}}, 4, 8);
  for (int parts : {1, 2, 3, 4, 5, 8}) {
    INFO(parts << " parts");
    LeafPartition p(tree, parts);
    const std::vector<uint32_t> load(16, 10);
    p.Grow(load);
    CheckPartition(p);
    // One leaf at most for 2 to 4 parts; with more the local search may stop at two, when the
    // heaviest and the lightest part do not touch.
    CHECK(Spread(p.PartLoads(load)) <= (parts <= 4 ? 10u : 20u));
  }
}

// Leaf pairs that share a face across two parts: each such leaf is locked by both sides when a
// player stands near the border.
int BorderPairs(const LeafPartition& p) {
  int pairs = 0;
  for (int l = 0; l < p.leaf_count(); ++l) {
    for (int n : p.neighbours(l)) pairs += (n > l && p.owner(n) != p.owner(l)) ? 1 : 0;
  }
  return pairs;
}

TEST_CASE("Grow's borders start straight, along the tree's own split planes") {
  AreanodeTree tree(Bounds{{-1552, -1552, -100}, {1552, 1552, 100}}, 8, 8);  // 16 x 16 leaves
  const std::vector<uint32_t> uniform(256, 1);
  LeafPartition two(tree, 2);
  two.Grow(uniform);
  CheckPartition(two);
  CHECK(Spread(two.PartLoads(uniform)) == 0);
  CHECK(BorderPairs(two) == 16);  // one straight cut across the map
  for (int l = 0; l < two.leaf_count(); ++l) {  // the halves of the root's split
    const areanode::Node& root = tree.node(0);
    const bool above = tree.node(tree.LeafNode(l)).bounds.mins[root.axis] >= root.dist;
    CHECK(two.owner(l) == two.owner(above ? tree.LeafAt(tree.node(1).bounds.Center())
                                          : tree.LeafAt(tree.node(2).bounds.Center())));
  }
  LeafPartition four(tree, 4);
  four.Grow(uniform);
  CheckPartition(four);
  CHECK(Spread(four.PartLoads(uniform)) == 0);
  CHECK(BorderPairs(four) == 32);  // two straight cuts: quarters
}

TEST_CASE("more parts than leaves leaves some parts empty, every leaf owned") {
  AreanodeTree tree(Bounds{{0, 0, 0}, {100, 100, 10}}, 1, 8);  // 2 leaves
  LeafPartition p(tree, 4);
  p.Grow(std::vector<uint32_t>{3, 4});
  CheckPartition(p);
  CHECK(p.owner(0) != p.owner(1));
}

TEST_CASE("Improve balances a hotspot and keeps parts connected, ends, and is deterministic") {
  AreanodeTree tree(Bounds{{-2048, -2048, -100}, {2048, 2048, 100}}, 6, 8);  // 64 leaves
  std::mt19937 rng(5);
  for (int parts : {2, 3, 4, 8}) {
    INFO(parts << " parts");
    LeafPartition p(tree, parts);
    std::vector<uint32_t> uniform(64, 1);
    p.Grow(uniform);
    // Players crowd one corner: leaves 0..15 hold 20 each, the rest 0..2.
    std::vector<uint32_t> hot(64);
    for (int l = 0; l < 64; ++l) hot[l] = l < 16 ? 20 : static_cast<uint32_t>(rng() % 3);
    const uint64_t before = Spread(p.PartLoads(hot));
    LeafPartition q = p;
    const int moves = p.Improve(hot);
    CheckPartition(p);
    const uint64_t after = Spread(p.PartLoads(hot));
    CHECK(moves > 0);
    CHECK(after < before);
    CHECK(after <= 2 * 20);  // within a couple of the heaviest leaves
    q.Improve(hot);
    CHECK(q.owners() == p.owners());
    CHECK(p.Improve(hot) == 0);  // nothing left to gain
  }
}

TEST_CASE("Improve moves only a few leaves when the load shifts a little") {
  AreanodeTree tree(Bounds{{-2048, -2048, -100}, {2048, 2048, 100}}, 4, 8);
  LeafPartition p(tree, 2);
  std::vector<uint32_t> load(16, 8);
  p.Grow(load);
  load[0] += 4;  // one leaf gains a few players
  const int moves = p.Improve(load);
  CHECK(moves <= 1);
  CheckPartition(p);
}

TEST_CASE("Improve reaches load beyond empty leaves and ends smoothed") {
  AreanodeTree tree(Bounds{{-2048, -2048, -100}, {2048, 2048, 100}}, 6, 8);  // 64 leaves
  for (int parts : {2, 3, 4}) {
    INFO(parts << " parts");
    LeafPartition p(tree, parts);
    p.Grow(std::vector<uint32_t>(64, 1));
    // A few players in four leaves of one corner, the rest of the map empty: the other parts
    // must walk through empty leaves to take some.
    std::vector<uint32_t> load(64, 0);
    load[0] = 9, load[1] = 7, load[2] = 3, load[3] = 1;
    const uint64_t before = Spread(p.PartLoads(load));
    p.Improve(load);
    CheckPartition(p);
    CHECK(Spread(p.PartLoads(load)) < before);
    CHECK(p.Smooth(load) == 0);  // Improve ended smoothed
    CHECK(p.Improve(load) == 0);  // and at a fixpoint
  }
}
