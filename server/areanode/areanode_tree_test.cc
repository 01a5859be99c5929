// Tests for AreanodeTree: shape, link placement, and every query checked against brute force
// over random boxes (straddling planes, outside the world, zero-size) at depths 1..12.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "server/areanode/areanode_tree.h"

namespace {

using areanode::AreanodeTree;
using areanode::EntityId;
using areanode::Node;
using core::Bounds;
using core::Vec3;

constexpr float kInf = std::numeric_limits<float>::infinity();
// Deliberately not square and not centred, so both axes get split at various depths.
const Bounds kWorld{{-1000, -600, -100}, {3000, 1400, 300}};

// A node's region with the faces on the world bounds pushed to infinity and Z unbounded.
Bounds ExtendedRegion(const AreanodeTree& tree, int n, const Bounds& world) {
  Bounds r = tree.node(n).bounds;
  for (int a = 0; a < 2; ++a) {
    if (r.mins[a] == world.mins[a]) r.mins[a] = -kInf;
    if (r.maxs[a] == world.maxs[a]) r.maxs[a] = kInf;
  }
  r.mins.z = -kInf;
  r.maxs.z = kInf;
  return r;
}

// Random boxes of every kind the game can produce, and some it should not but may.
class BoxMaker {
 public:
  BoxMaker(const AreanodeTree& tree, const Bounds& world, uint32_t seed)
      : world_(world), rng_(seed) {
    for (int n = 0; n < tree.node_count(); ++n) {
      if (tree.node(n).axis >= 0) planes_[tree.node(n).axis].push_back(tree.node(n).dist);
    }
  }

  Bounds Make() {
    const Vec3 size = world_.Size();
    Bounds b;
    for (int a = 0; a < 3; ++a) {
      // Centres range 30% beyond the world on each side.
      const float c = Uniform(world_.mins[a] - 0.3f * size[a], world_.maxs[a] + 0.3f * size[a]);
      const int kind = Int(0, 9);
      float half = 0;
      if (kind == 0) {
        half = 0;  // zero-size on this axis
      } else if (kind <= 6) {
        half = Uniform(0, 0.02f * size[a]);  // player-sized
      } else {
        half = Uniform(0, 0.3f * size[a]);  // big
      }
      b.mins[a] = c - half;
      b.maxs[a] = c + half;
      if (a < 2 && Int(0, 3) == 0 && !planes_[a].empty()) {
        // Snap a face onto a split plane, or just beside it.
        float dist = planes_[a][Int(0, static_cast<int>(planes_[a].size()) - 1)];
        const int nudge = Int(0, 4);
        if (nudge == 1) dist = std::nextafter(dist, kInf);
        if (nudge == 2) dist = std::nextafter(dist, -kInf);
        if (nudge == 3) dist += Uniform(-2, 2);
        const float extent = b.maxs[a] - b.mins[a];
        if (Int(0, 1) == 0) {
          b.mins[a] = dist;
          b.maxs[a] = dist + extent;
        } else {
          b.maxs[a] = dist;
          b.mins[a] = dist - extent;
        }
      }
    }
    return b;
  }

  int Int(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  float Uniform(float lo, float hi) { return std::uniform_real_distribution<float>(lo, hi)(rng_); }

 private:
  Bounds world_;
  std::mt19937 rng_;
  std::vector<float> planes_[2];
};

// Deepest node whose open extended region strictly contains the box in X and Y.
int BruteNodeFor(const AreanodeTree& tree, const Bounds& box, const Bounds& world) {
  int best = -1;
  for (int n = 0; n < tree.node_count(); ++n) {
    const Bounds r = ExtendedRegion(tree, n, world);
    bool inside = true;
    for (int a = 0; a < 2; ++a) {
      inside = inside && box.mins[a] > r.mins[a] && box.maxs[a] < r.maxs[a];
    }
    if (inside && (best < 0 || tree.node(n).depth > tree.node(best).depth)) best = n;
  }
  return best;
}

std::vector<int> BruteTouching(const AreanodeTree& tree, const Bounds& box, const Bounds& world,
                               bool leaves_only) {
  std::vector<int> out;
  for (int n = 0; n < tree.node_count(); ++n) {
    if (leaves_only && tree.node(n).leaf < 0) continue;
    if (ExtendedRegion(tree, n, world).Intersects(box)) {
      out.push_back(leaves_only ? tree.node(n).leaf : n);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<EntityId> BruteQuery(const std::vector<Bounds>& boxes, const std::vector<bool>& linked,
                                 const Bounds& box) {
  std::vector<EntityId> out;
  for (size_t i = 0; i < boxes.size(); ++i) {
    if (linked[i] && boxes[i].Intersects(box)) out.push_back(static_cast<EntityId>(i));
  }
  return out;
}

}  // namespace

TEST_CASE("tree shape: node and leaf counts, longer-axis midpoint splits", "[areanode]") {
  for (int depth = areanode::kMinDepth; depth <= areanode::kMaxDepth; ++depth) {
    AreanodeTree tree(kWorld, depth, 8);
    REQUIRE(tree.depth() == depth);
    REQUIRE(tree.node_count() == (1 << (depth + 1)) - 1);
    REQUIRE(tree.leaf_count() == (1 << depth));
    for (int n = 0; n < tree.node_count(); ++n) {
      const areanode::Node& node = tree.node(n);
      if (node.depth == depth) {
        REQUIRE(node.axis == -1);
        REQUIRE(node.leaf == n - (tree.leaf_count() - 1));
        REQUIRE(tree.LeafNode(node.leaf) == n);
        continue;
      }
      const Vec3 size = node.bounds.Size();
      REQUIRE(node.axis == (size.x > size.y ? 0 : 1));
      REQUIRE(node.dist == 0.5f * (node.bounds.mins[node.axis] + node.bounds.maxs[node.axis]));
      REQUIRE(node.leaf == -1);
      REQUIRE(node.children[0] == 2 * n + 1);
      REQUIRE(node.children[1] == 2 * n + 2);
      const Bounds& above = tree.node(node.children[0]).bounds;
      const Bounds& below = tree.node(node.children[1]).bounds;
      REQUIRE(above.mins[node.axis] == node.dist);
      REQUIRE(above.maxs[node.axis] == node.bounds.maxs[node.axis]);
      REQUIRE(below.maxs[node.axis] == node.dist);
      REQUIRE(below.mins[node.axis] == node.bounds.mins[node.axis]);
      REQUIRE(tree.node(node.children[0]).depth == node.depth + 1);
      // Z is never split: every region keeps the full world height.
      REQUIRE(above.mins.z == kWorld.mins.z);
      REQUIRE(below.maxs.z == kWorld.maxs.z);
    }
  }
}

TEST_CASE("tree shape: a square world splits Y first, then alternates", "[areanode]") {
  AreanodeTree tree(Bounds{{-1024, -1024, -64}, {1024, 1024, 64}}, areanode::kDefaultDepth, 1);
  REQUIRE(tree.node_count() == 31);
  REQUIRE(tree.leaf_count() == 16);
  REQUIRE(tree.node(0).axis == 1);  // tie goes to Y, as QuakeWorld's `size[0] > size[1]`
  REQUIRE(tree.node(0).dist == 0);
  REQUIRE(tree.node(1).axis == 0);
  REQUIRE(tree.node(1).bounds.mins.y == 0);  // children[0] is the half above the plane
  REQUIRE(tree.node(2).bounds.maxs.y == 0);
  REQUIRE(tree.node(3).axis == 1);
  REQUIRE(tree.node(3).dist == 512);
  REQUIRE(tree.node(tree.LeafNode(0)).bounds == Bounds{{512, 512, -64}, {1024, 1024, 64}});
}

TEST_CASE("tree shape: leaf regions tile the world", "[areanode]") {
  for (int depth = areanode::kMinDepth; depth <= areanode::kMaxDepth; ++depth) {
    AreanodeTree tree(kWorld, depth, 1);
    double area = 0;
    for (int l = 0; l < tree.leaf_count(); ++l) {
      const Vec3 s = tree.node(tree.LeafNode(l)).bounds.Size();
      REQUIRE(s.x > 0);
      REQUIRE(s.y > 0);
      area += static_cast<double>(s.x) * s.y;
    }
    const Vec3 ws = kWorld.Size();
    REQUIRE(area == Approx(static_cast<double>(ws.x) * ws.y));
    // Interiors are pairwise disjoint and every point of the world lies in some leaf.
    for (int i = 0; i < tree.leaf_count(); ++i) {
      const Bounds a = tree.node(tree.LeafNode(i)).bounds;
      for (int j = i + 1; j < tree.leaf_count(); ++j) {
        const Bounds b = tree.node(tree.LeafNode(j)).bounds;
        const bool overlap = a.mins.x < b.maxs.x && b.mins.x < a.maxs.x && a.mins.y < b.maxs.y &&
                             b.mins.y < a.maxs.y;
        REQUIRE_FALSE(overlap);
      }
    }
    std::mt19937 rng(depth);
    std::uniform_real_distribution<float> ux(kWorld.mins.x, kWorld.maxs.x);
    std::uniform_real_distribution<float> uy(kWorld.mins.y, kWorld.maxs.y);
    for (int k = 0; k < 200; ++k) {
      const Vec3 p{ux(rng), uy(rng), 0};
      int containing = 0;
      for (int l = 0; l < tree.leaf_count(); ++l) {
        containing += tree.node(tree.LeafNode(l)).bounds.Contains(p) ? 1 : 0;
      }
      REQUIRE(containing >= 1);
    }
  }
}

// The hint is a shortcut only: every point (inside, outside, on a split plane, NaN) gets the
// leaf of the plain descent, whatever the hint (none, right, wrong, out of range).
TEST_CASE("LeafAt with a hint finds the same leaf as the descent", "[areanode]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (int depth = areanode::kMinDepth; depth <= areanode::kMaxDepth; ++depth) {
    AreanodeTree tree(kWorld, depth, 1);
    std::mt19937 rng(100 + depth);
    std::uniform_real_distribution<float> ux(kWorld.mins.x - 200, kWorld.maxs.x + 200);
    std::uniform_real_distribution<float> uy(kWorld.mins.y - 200, kWorld.maxs.y + 200);
    std::uniform_int_distribution<int> leaf(0, tree.leaf_count() - 1);
    std::vector<Vec3> points = {{nan, 0, 0}, {0, nan, 0}};
    for (int k = 0; k < 300; ++k) points.push_back({ux(rng), uy(rng), 0});
    for (int n = 0; n < tree.node_count(); ++n) {  // on every split plane, and next to it
      const Node& node = tree.node(n);
      if (node.axis < 0) continue;
      Vec3 on = node.bounds.Center();
      on[node.axis] = node.dist;
      points.push_back(on);
      on[node.axis] = std::nextafter(node.dist, kInf);
      points.push_back(on);
    }
    for (const Vec3& p : points) {
      const int want = tree.LeafAt(p);
      for (int hint : {-1, want, leaf(rng), leaf(rng), tree.leaf_count()}) {
        REQUIRE(tree.LeafAt(p, hint) == want);
      }
    }
  }
}

TEST_CASE("NodeFor: deepest node that strictly contains the box", "[areanode]") {
  for (int depth = areanode::kMinDepth; depth <= areanode::kMaxDepth; ++depth) {
    AreanodeTree tree(kWorld, depth, 1);
    BoxMaker maker(tree, kWorld, 100 + depth);
    for (int k = 0; k < 2000; ++k) {
      const Bounds box = maker.Make();
      REQUIRE(tree.NodeFor(box) == BruteNodeFor(tree, box, kWorld));
    }
  }
}

TEST_CASE("NodeFor: touching a plane stays, outside the world falls to the edge", "[areanode]") {
  AreanodeTree tree(Bounds{{-1024, -1024, -64}, {1024, 1024, 64}}, 2, 1);
  // Root splits Y at 0; node 1 (y > 0) splits X at 0.
  REQUIRE(tree.NodeFor(Bounds{{10, 0, 0}, {20, 10, 0}}) == 0);      // mins.y on the plane
  REQUIRE(tree.NodeFor(Bounds{{10, -10, 0}, {20, 0, 0}}) == 0);     // maxs.y on the plane
  REQUIRE(tree.NodeFor(Bounds{{10, 0.5f, 0}, {20, 10, 0}}) == 3);   // x > 0 and y > 0: leaf 0
  REQUIRE(tree.NodeFor(Bounds{{-5, 5, 0}, {5, 6, 0}}) == 1);        // crosses x = 0 above y = 0
  REQUIRE(tree.NodeFor(Bounds{{0, 0, 0}, {0, 0, 0}}) == 0);         // a point on both planes
  REQUIRE(tree.NodeFor(Bounds{{5000, 5000, 9000}, {5001, 5001, 9001}}) == tree.LeafNode(0));
  REQUIRE(tree.NodeFor(Bounds{{-9000, -9000, 0}, {-8000, -8000, 0}}) == tree.LeafNode(3));
  REQUIRE(tree.NodeFor(Bounds{{-9000, 5000, 0}, {9000, 5001, 0}}) == 1);  // crosses x=0 far out
}

TEST_CASE("link, unlink, relink and query agree with brute force", "[areanode]") {
  constexpr int kEntities = 150;
  for (int depth = areanode::kMinDepth; depth <= areanode::kMaxDepth; ++depth) {
    AreanodeTree tree(kWorld, depth, kEntities);
    BoxMaker maker(tree, kWorld, 200 + depth);
    std::vector<Bounds> boxes(kEntities);
    std::vector<bool> linked(kEntities, false);
    std::vector<EntityId> got;
    for (int step = 0; step < 3000; ++step) {
      const EntityId id = maker.Int(0, kEntities - 1);
      const int op = maker.Int(0, 99);
      if (op < 30) {
        if (linked[id]) {
          tree.Unlink(id);
          linked[id] = false;
        } else {
          boxes[id] = maker.Make();
          tree.Link(id, boxes[id]);
          linked[id] = true;
        }
      } else if (op < 60) {
        // Relink, sometimes by a small move (often the same node), sometimes anywhere.
        if (linked[id] && maker.Int(0, 1) == 0) {
          const float dx = maker.Uniform(-8, 8), dy = maker.Uniform(-8, 8);
          boxes[id].mins += Vec3{dx, dy, 0};
          boxes[id].maxs += Vec3{dx, dy, 0};
        } else {
          boxes[id] = maker.Make();
        }
        tree.Relink(id, boxes[id]);
        linked[id] = true;
      } else if (op == 60 && maker.Int(0, 9) == 0) {
        tree.UnlinkAll();
        std::fill(linked.begin(), linked.end(), false);
      } else {
        const Bounds q = maker.Make();
        tree.Query(q, &got);
        REQUIRE(got == BruteQuery(boxes, linked, q));
      }
      REQUIRE(tree.IsLinked(id) == linked[id]);
      if (linked[id]) {
        REQUIRE(tree.NodeOf(id) == tree.NodeFor(boxes[id]));
        REQUIRE(tree.BoxOf(id) == boxes[id]);
      } else {
        REQUIRE(tree.NodeOf(id) == -1);
      }
    }
    // An all-covering query returns exactly the linked entities.
    tree.Query(Bounds{{-kInf, -kInf, -kInf}, {kInf, kInf, kInf}}, &got);
    REQUIRE(got == BruteQuery(boxes, linked, Bounds{{-kInf, -kInf, -kInf}, {kInf, kInf, kInf}}));
  }
}

TEST_CASE("LeavesTouching and NodesTouching agree with brute force and cover Query",
          "[areanode]") {
  constexpr int kEntities = 300;
  for (int depth = areanode::kMinDepth; depth <= areanode::kMaxDepth; ++depth) {
    AreanodeTree tree(kWorld, depth, kEntities);
    BoxMaker maker(tree, kWorld, 300 + depth);
    for (EntityId id = 0; id < kEntities; ++id) {
      const Bounds box = maker.Make();
      tree.Link(id, box);
      // Link writes a leaf list only inside LeavesTouching(box).
      const int leaf = tree.node(tree.NodeOf(id)).leaf;
      if (leaf >= 0) {
        std::vector<int> leaves;
        tree.LeavesTouching(box, &leaves);
        REQUIRE(std::binary_search(leaves.begin(), leaves.end(), leaf));
      }
    }
    std::vector<int> leaves, nodes;
    std::vector<EntityId> got;
    for (int k = 0; k < 600; ++k) {
      const Bounds q = maker.Make();
      tree.LeavesTouching(q, &leaves);
      tree.NodesTouching(q, &nodes);
      REQUIRE(leaves == BruteTouching(tree, q, kWorld, true));
      REQUIRE(nodes == BruteTouching(tree, q, kWorld, false));
      tree.Query(q, &got);
      for (EntityId e : got) {
        const int leaf = tree.node(tree.NodeOf(e)).leaf;
        if (leaf >= 0) REQUIRE(std::binary_search(leaves.begin(), leaves.end(), leaf));
      }
    }
  }
}

TEST_CASE("a box far outside the world still touches the edge leaves", "[areanode]") {
  AreanodeTree tree(Bounds{{-1024, -1024, -64}, {1024, 1024, 64}}, 2, 1);
  std::vector<int> leaves;
  tree.LeavesTouching(Bounds{{5000, 5000, 5000}, {5100, 5100, 5100}}, &leaves);
  REQUIRE(leaves == std::vector<int>{0});
  tree.LeavesTouching(Bounds{{-5000, 100, 0}, {5000, 200, 0}}, &leaves);
  REQUIRE(leaves == std::vector<int>{0, 1});
  tree.LeavesTouching(Bounds{{0, 0, 0}, {0, 0, 0}}, &leaves);  // a point on both planes
  REQUIRE(leaves == std::vector<int>{0, 1, 2, 3});
}

TEST_CASE("parent locking counts one acquisition per parent list touched", "[areanode]") {
  AreanodeTree tree(Bounds{{-1024, -1024, -64}, {1024, 1024, 64}}, 3, 4);
  areanode::ParentLockCounters& counters = areanode::ThisThreadParentLockCounters();
  const areanode::ParentLockCounters before = counters;
  tree.Link(0, Bounds{{-10, -10, 0}, {10, 10, 0}});  // root: locking off, not counted
  REQUIRE(counters.acquisitions == before.acquisitions);

  tree.set_parent_locking(true);
  tree.Link(1, Bounds{{-10, -10, 0}, {10, 10, 0}});      // root list: 1
  tree.Link(2, Bounds{{100, 100, 0}, {110, 110, 0}});    // a leaf: 0
  REQUIRE(tree.node(tree.NodeOf(2)).leaf >= 0);
  REQUIRE(counters.acquisitions == before.acquisitions + 1);
  REQUIRE(tree.slot(0).lock_count == 1);
  tree.Relink(1, Bounds{{-11, -11, 0}, {11, 11, 0}});    // same node, in place: 1
  REQUIRE(counters.acquisitions == before.acquisitions + 2);
  std::vector<EntityId> got;
  // Every parent list: only the root holds entities; the 6 empty parents are passed unlocked.
  tree.Query(Bounds{{-2000, -2000, -100}, {2000, 2000, 100}}, &got);
  REQUIRE(got == std::vector<EntityId>{0, 1, 2});
  REQUIRE(counters.acquisitions == before.acquisitions + 2 + 1);
  // A box across the split of the root's first child (and inside that child): a parent below
  // the root.
  const areanode::Node& child = tree.node(tree.node(0).children[0]);
  REQUIRE(child.axis >= 0);
  Bounds across = child.bounds;
  across.mins.z = across.maxs.z = 0;
  across.mins[child.axis] = child.dist - 5;
  across.maxs[child.axis] = child.dist + 5;
  const int other = 1 - child.axis;
  across.mins[other] += 10;
  across.maxs[other] = across.mins[other] + 10;
  tree.Link(3, across);                                   // 1
  const int parent = tree.NodeOf(3);
  REQUIRE(parent == tree.node(0).children[0]);
  REQUIRE(tree.node(parent).leaf < 0);
  tree.Query(Bounds{{-2000, -2000, -100}, {2000, 2000, 100}}, &got);  // root and that parent: 2
  REQUIRE(got == std::vector<EntityId>{0, 1, 2, 3});
  REQUIRE(counters.acquisitions == before.acquisitions + 3 + 1 + 2);
  tree.Unlink(3);                                         // that parent: 1
  tree.Unlink(1);                                         // root list: 1
  REQUIRE(counters.acquisitions == before.acquisitions + 8);
  REQUIRE(tree.slot(0).lock_count == 5);  // link, relink, two queries, unlink
  REQUIRE(tree.slot(parent).lock_count == 3);  // link, one query, unlink
  tree.Query(Bounds{{-2000, -2000, -100}, {2000, 2000, 100}}, &got);  // the root only: 1
  REQUIRE(got == std::vector<EntityId>{0, 2});
  REQUIRE(counters.acquisitions == before.acquisitions + 9);
  REQUIRE(counters.contended >= before.contended);
}

TEST_CASE("CheckParams rejects bad worlds, depths and entity counts", "[areanode]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  REQUIRE(AreanodeTree::CheckParams(kWorld, 4, 512).ok());
  REQUIRE(AreanodeTree::CheckParams(kWorld, 1, 0).ok());
  REQUIRE(AreanodeTree::CheckParams(kWorld, 12, 512).ok());
  REQUIRE_FALSE(AreanodeTree::CheckParams(kWorld, 0, 512).ok());
  REQUIRE_FALSE(AreanodeTree::CheckParams(kWorld, 13, 512).ok());
  REQUIRE_FALSE(AreanodeTree::CheckParams(kWorld, 4, -1).ok());
  REQUIRE_FALSE(AreanodeTree::CheckParams(Bounds::Empty(), 4, 512).ok());
  REQUIRE_FALSE(AreanodeTree::CheckParams(Bounds{{nan, 0, 0}, {1, 1, 1}}, 4, 512).ok());
  REQUIRE_FALSE(AreanodeTree::CheckParams(Bounds{{0, 0, 0}, {kInf, 1, 1}}, 4, 512).ok());
  const core::Status s = AreanodeTree::CheckParams(kWorld, 13, 512);
  REQUIRE(s.code() == core::Status::Code::kInvalidArgument);
  REQUIRE(s.message().find("depth 13") != std::string::npos);
}

namespace {

// Double-precision reference: does start..end meet `b` grown by `pad`?
bool BruteSegmentMeets(Vec3 start, Vec3 end, const Bounds& b, double pad) {
  double t_in = 0, t_out = 1;
  for (int a = 0; a < 3; ++a) {
    const double lo = double(b.mins[a]) - pad, hi = double(b.maxs[a]) + pad;
    const double s = start[a], d = double(end[a]) - s;
    if (d == 0) {
      if (s < lo || s > hi) return false;
      continue;
    }
    double ta = (lo - s) / d, tb = (hi - s) / d;
    if (ta > tb) std::swap(ta, tb);
    t_in = std::max(t_in, ta);
    t_out = std::min(t_out, tb);
    if (t_in > t_out) return false;
  }
  return true;
}

// A tree of `entities` random boxes (BoxMaker), parent locking on, for the segment queries.
struct SegmentWorld {
  SegmentWorld(int depth, int entities, uint32_t seed)
      : tree(kWorld, depth, entities), maker(tree, kWorld, seed), boxes(entities) {
    for (EntityId id = 0; id < entities; ++id) tree.Link(id, boxes[id] = maker.Make());
    tree.set_parent_locking(true);
  }
  std::vector<uint64_t> LockCounts() {
    std::vector<uint64_t> counts(tree.node_count());
    for (int n = 0; n < tree.node_count(); ++n) counts[n] = tree.slot(n).lock_count;
    return counts;
  }
  // `got` (in any order) holds each entity once, every one whose box start..end meets within
  // `pad`, and none farther (double-precision slack of 0.1% either way).
  void RequireSegmentList(Vec3 start, Vec3 end, float pad, std::vector<EntityId> got) const {
    std::sort(got.begin(), got.end());
    REQUIRE(std::adjacent_find(got.begin(), got.end()) == got.end());
    for (EntityId id = 0; id < static_cast<EntityId>(boxes.size()); ++id) {
      const bool found = std::binary_search(got.begin(), got.end(), id);
      if (BruteSegmentMeets(start, end, boxes[id], pad * 0.999)) REQUIRE(found);
      if (found) REQUIRE(BruteSegmentMeets(start, end, boxes[id], pad * 1.001));
    }
  }
  // Every parent list read since `counts` (LockCounts) belongs to a node whose region comes
  // within `pad` of one of the segments start..ends[k].
  void RequireReadsNear(const std::vector<uint64_t>& counts, Vec3 start, const Vec3* ends,
                        int count, float pad) {
    for (int n = 0; n < tree.node_count(); ++n) {
      if (tree.slot(n).lock_count == counts[n]) continue;
      bool near = false;
      for (int k = 0; k < count && !near; ++k) {
        near = BruteSegmentMeets(start, ends[k], ExtendedRegion(tree, n, kWorld), pad * 1.001);
      }
      REQUIRE(near);
    }
  }

  AreanodeTree tree;
  BoxMaker maker;
  std::vector<Bounds> boxes;
};

}  // namespace

TEST_CASE("QuerySegment finds what the segment meets and reads only nodes near it", "[areanode]") {
  constexpr int kEntities = 300;
  constexpr float kPad = 1;
  for (int depth = areanode::kMinDepth; depth <= areanode::kMaxDepth; ++depth) {
    SegmentWorld w(depth, kEntities, 500 + depth);
    std::vector<EntityId> got;
    for (int k = 0; k < 600; ++k) {
      const Bounds a = w.maker.Make(), b = w.maker.Make();
      const Vec3 start = a.Center();
      Vec3 end = b.Center();
      if (k % 5 == 0) end.x = start.x;  // parallel to a plane
      if (k % 7 == 0) end = start;      // a point
      const std::vector<uint64_t> counts = w.LockCounts();
      w.tree.QuerySegment(start, end, kPad, &got);
      w.RequireSegmentList(start, end, kPad, got);
      w.RequireReadsNear(counts, start, &end, 1, kPad);
    }
  }
}

// The shotgun's query: up to kMaxSegments segments from one start in one walk. Each list is what
// the segment alone meets, and every parent list read comes within the pad of some segment.
TEST_CASE("QuerySegments finds what each segment meets, in one walk", "[areanode]") {
  constexpr int kEntities = 300;
  constexpr float kPad = 1;
  for (int depth = areanode::kMinDepth; depth <= areanode::kMaxDepth; ++depth) {
    SegmentWorld w(depth, kEntities, 700 + depth);
    std::vector<EntityId> got[AreanodeTree::kMaxSegments], alone;
    int found_any = 0;
    for (int k = 0; k < 200; ++k) {
      const int count = 1 + k % AreanodeTree::kMaxSegments;
      const Vec3 start = w.maker.Make().Center();
      Vec3 ends[AreanodeTree::kMaxSegments];
      const Vec3 aim = w.maker.Make().Center();
      for (int j = 0; j < count; ++j) {  // a fan around one aim, as pellets spread
        ends[j] = aim + Vec3{30.0f * j, -20.0f * j, 5.0f * (j % 3)};
        if (k % 9 == 0 && j == 1) ends[j] = start;  // a point
      }
      const std::vector<uint64_t> counts = w.LockCounts();
      w.tree.QuerySegments(start, ends, count, kPad, got);
      w.RequireReadsNear(counts, start, ends, count, kPad);
      for (int j = 0; j < count; ++j) {
        w.RequireSegmentList(start, ends[j], kPad, got[j]);
        found_any += got[j].empty() ? 0 : 1;
        w.tree.QuerySegment(start, ends[j], kPad, &alone);  // the same list, in the same order
        REQUIRE(alone == got[j]);
      }
    }
    CHECK(found_any > 100);
  }
}

TEST_CASE("LeavesTouching with a shape keeps the box's leaves that meet the shape", "[areanode]") {
  for (int depth = areanode::kMinDepth; depth <= areanode::kMaxDepth; ++depth) {
    AreanodeTree tree(kWorld, depth, 1);
    for (int n = 0; n < tree.node_count(); ++n) {  // Node::region is the extended region in XY
      const Bounds want = ExtendedRegion(tree, n, kWorld);
      const Bounds& got = tree.node(n).region;
      for (int a = 0; a < 2; ++a) {
        REQUIRE(got.mins[a] == (std::isinf(want.mins[a]) ? -areanode::kOpenFace : want.mins[a]));
        REQUIRE(got.maxs[a] == (std::isinf(want.maxs[a]) ? areanode::kOpenFace : want.maxs[a]));
      }
    }
    BoxMaker maker(tree, kWorld, 700 + depth);
    std::vector<int> leaves;
    for (int k = 0; k < 300; ++k) {
      const Bounds q = maker.Make();
      Bounds rect = maker.Make();
      rect.maxs.x = std::max(rect.maxs.x, rect.mins.x + 1);
      rect.maxs.y = std::max(rect.maxs.y, rect.mins.y + 1);
      const Vec3 offsets[2] = {{0, 0, 0}, maker.Make().Center() - rect.Center()};
      const core::ConvexXY shape = core::ConvexXY::SweptRect(rect, offsets);
      const float slack = k % 2 == 0 ? 0.0f : 1.0f;
      tree.LeavesTouching(q, shape, slack, &leaves);
      std::vector<int> want;
      for (int leaf : BruteTouching(tree, q, kWorld, true)) {
        if (shape.Intersects(tree.node(tree.LeafNode(leaf)).region, slack)) want.push_back(leaf);
      }
      REQUIRE(leaves == want);
    }
  }
}

TEST_CASE("a query that misses the boxes a parent has held since it was empty skips its list and lock",
          "[areanode]") {
  AreanodeTree tree(Bounds{{-1024, -1024, -64}, {1024, 1024, 64}}, 3, 4);
  tree.set_parent_locking(true);
  const areanode::Node& root = tree.node(0);
  REQUIRE(root.axis >= 0);
  const int along = 1 - root.axis;
  // A box across the root's plane near one end of it, and query boxes near the other end.
  auto across_at = [&](float at) {
    Bounds b{{0, 0, 0}, {0, 0, 0}};
    b.mins[root.axis] = root.dist - 8;
    b.maxs[root.axis] = root.dist + 8;
    b.mins[along] = at;
    b.maxs[along] = at + 16;
    return b;
  };
  tree.Link(0, across_at(-900));
  REQUIRE(tree.NodeOf(0) == 0);
  const uint64_t locks = tree.slot(0).lock_count;
  std::vector<EntityId> got;
  tree.Query(across_at(800), &got);  // across the same plane, far along it: no lock, nothing
  REQUIRE(got.empty());
  REQUIRE(tree.slot(0).lock_count == locks);
  tree.Query(across_at(-890), &got);  // overlapping it
  REQUIRE(got == std::vector<EntityId>{0});
  REQUIRE(tree.slot(0).lock_count == locks + 1);
  // A move along the plane grows the extent: the far query now scans the list, and finds it.
  tree.Relink(0, across_at(790));
  REQUIRE(tree.NodeOf(0) == 0);
  tree.Query(across_at(800), &got);
  REQUIRE(got == std::vector<EntityId>{0});
  // Emptied, the list forgets its extent; a new entity at the near end leaves the far end unread.
  tree.Unlink(0);
  tree.Link(1, across_at(-900));
  const uint64_t after = tree.slot(0).lock_count;
  tree.Query(across_at(800), &got);
  REQUIRE(got.empty());
  REQUIRE(tree.slot(0).lock_count == after);
  // Parent locking off: the same answers.
  tree.set_parent_locking(false);
  tree.Query(across_at(800), &got);
  REQUIRE(got.empty());
  tree.Query(across_at(-900), &got);
  REQUIRE(got == std::vector<EntityId>{1});
}
