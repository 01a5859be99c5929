// LeafPartition: connected, balanced ownership of an areanode tree's leaves.
#include "server/areanode/leaf_partition.h"

#include <algorithm>

#include "server/core/check.h"

namespace areanode {

namespace {

// Length of the overlap of [a0, a1] and [b0, b1] (negative: apart).
float Overlap(float a0, float a1, float b0, float b1) { return std::min(a1, b1) - std::max(a0, b0); }

// True if the regions share a face: they touch on one axis and overlap with positive length on
// the other (Z is never split, so every region spans the same height).
bool ShareFace(const Bounds& a, const Bounds& b) {
  for (int axis = 0; axis < 2; ++axis) {
    const int other = 1 - axis;
    const bool touch = a.maxs[axis] == b.mins[axis] || b.maxs[axis] == a.mins[axis];
    if (touch && Overlap(a.mins[other], a.maxs[other], b.mins[other], b.maxs[other]) > 0) {
      return true;
    }
  }
  return false;
}

float Distance2(core::Vec3 a, core::Vec3 b) {
  const float dx = a.x - b.x, dy = a.y - b.y;
  return dx * dx + dy * dy;
}

}  // namespace

LeafPartition::LeafPartition(const AreanodeTree& tree, int parts) : parts_(parts) {
  AS_CHECK(parts >= 1, "LeafPartition: at least one part");
  const int leaves = tree.leaf_count();
  neighbours_.resize(static_cast<size_t>(leaves));
  centre_.resize(static_cast<size_t>(leaves));
  owner_.assign(static_cast<size_t>(leaves), 0);
  for (int a = 0; a < leaves; ++a) {
    const Bounds& ra = tree.node(tree.LeafNode(a)).bounds;
    centre_[a] = {0.5f * (ra.mins.x + ra.maxs.x), 0.5f * (ra.mins.y + ra.maxs.y), 0};
    for (int b = 0; b < leaves; ++b) {
      if (b != a && ShareFace(ra, tree.node(tree.LeafNode(b)).bounds)) neighbours_[a].push_back(b);
    }
  }
  // Seeds: the leaf at the centre of each node k levels down, in bit-reversed order of the
  // nodes on that level (level k's nodes are ids 2^k - 1 .. 2^(k+1) - 2, breadth first).
  int k = 0;
  while ((1 << k) < parts && k < tree.depth()) ++k;
  for (int i = 0; i < (1 << k) && static_cast<int>(seeds_.size()) < parts; ++i) {
    int reversed = 0;
    for (int bit = 0; bit < k; ++bit) reversed |= ((i >> bit) & 1) << (k - 1 - bit);
    const Bounds& r = tree.node((1 << k) - 1 + reversed).bounds;
    seeds_.push_back(tree.LeafAt(r.Center()));
  }
}

void LeafPartition::Grow(std::span<const uint32_t> load) {
  const int leaves = leaf_count();
  AS_CHECK(static_cast<int>(load.size()) == leaves, "LeafPartition::Grow: one load per leaf");
  owner_.assign(static_cast<size_t>(leaves), -1);
  std::vector<uint64_t> part_load(static_cast<size_t>(parts_), 0);
  for (int p = 0; p < static_cast<int>(seeds_.size()); ++p) {
    owner_[seeds_[p]] = p;
    part_load[p] += load[seeds_[p]];
  }
  // Growth: the lightest part with an unowned neighbour takes the one nearest its seed.
  std::vector<bool> stuck(static_cast<size_t>(parts_), false);
  for (int owned = static_cast<int>(seeds_.size()); owned < leaves;) {
    int part = -1;
    for (int p = 0; p < static_cast<int>(seeds_.size()); ++p) {
      if (!stuck[p] && (part < 0 || part_load[p] < part_load[part])) part = p;
    }
    AS_CHECK(part >= 0, "LeafPartition::Grow: the leaf graph is not connected");
    int take = -1;
    float take_d = 0;
    for (int l = 0; l < leaves; ++l) {
      if (owner_[l] != part) continue;
      for (int n : neighbours_[l]) {
        if (owner_[n] >= 0) continue;
        const float d = Distance2(centre_[n], centre_[seeds_[part]]);
        if (take < 0 || d < take_d || (d == take_d && n < take)) take = n, take_d = d;
      }
    }
    if (take < 0) {
      stuck[part] = true;
      continue;
    }
    owner_[take] = part;
    part_load[part] += load[take];
    ++owned;
  }
  // A part walled in by others stops early and stays light: even it out.
  Improve(load);
}

std::vector<uint64_t> LeafPartition::PartLoads(std::span<const uint32_t> load) const {
  std::vector<uint64_t> out(static_cast<size_t>(parts_), 0);
  for (int l = 0; l < leaf_count(); ++l) out[owner_[l]] += load[l];
  return out;
}

int LeafPartition::Improve(std::span<const uint32_t> load) {
  AS_CHECK(static_cast<int>(load.size()) == leaf_count(), "LeafPartition::Improve: one load per leaf");
  auto sum_sq = [](const std::vector<uint64_t>& v) {
    uint64_t s = 0;
    for (uint64_t x : v) s += x * x;
    return s;
  };
  std::vector<uint64_t> part_load = PartLoads(load);
  const std::vector<int> start = owner_;
  // Rounds of balancing and walking, then smoothing. A round must lower the sum of squared part
  // loads, or it is undone and Improve stops: so it ends, and walks that lead nowhere (the leaf
  // they reach cannot be taken after all) leave no trace.
  for (;;) {
    const std::vector<int> before = owner_;
    const uint64_t before_sq = sum_sq(part_load);
    for (;;) {
      int leaf = -1, to = -1;
      if (!BestBalancingMove(load, part_load, &leaf, &to) &&
          !WalkTowardLoad(load, part_load, &leaf, &to)) {
        break;
      }
      part_load[owner_[leaf]] -= load[leaf];
      part_load[to] += load[leaf];
      owner_[leaf] = to;
    }
    if (sum_sq(part_load) >= before_sq) {
      owner_ = before;
      part_load = PartLoads(load);
      Smooth(load);
      break;
    }
    Smooth(load);
  }
  int moved = 0;
  for (int l = 0; l < leaf_count(); ++l) moved += owner_[l] != start[l] ? 1 : 0;
  return moved;
}

bool LeafPartition::BestBalancingMove(std::span<const uint32_t> load,
                                      const std::vector<uint64_t>& part_load, int* leaf,
                                      int* to) const {
  // The move that lowers max(load(a), load(b)) the most; among equals the one that leaves the
  // borders shortest (the leaf with the most neighbours in b less those in a: a thread's leaves
  // on a border are the ones the other thread's players lock too); then the smaller leaf id. An
  // empty leaf changes no load, so it is not moved here (WalkTowardLoad and Smooth place those).
  int best_leaf = -1, best_to = -1, best_compact = 0;
  uint64_t best_max = 0;
  for (int l = 0; l < leaf_count(); ++l) {
    const int a = owner_[l];
    if (load[l] == 0) continue;
    for (int n : neighbours_[l]) {
      const int b = owner_[n];
      if (b == a || part_load[b] + load[l] >= part_load[a]) continue;
      const uint64_t new_max = std::max(part_load[a] - load[l], part_load[b] + load[l]);
      if (best_leaf >= 0 && new_max > best_max) continue;
      int compact = 0;
      for (int m : neighbours_[l]) compact += owner_[m] == b ? 1 : owner_[m] == a ? -1 : 0;
      if (best_leaf >= 0 && new_max == best_max && compact <= best_compact) continue;
      if (!ConnectedWithout(a, l)) continue;
      best_leaf = l, best_to = b, best_max = new_max, best_compact = compact;
    }
  }
  *leaf = best_leaf, *to = best_to;
  return best_leaf >= 0;
}

bool LeafPartition::WalkTowardLoad(std::span<const uint32_t> load,
                                   const std::vector<uint64_t>& part_load, int* leaf,
                                   int* to) const {
  // The heaviest part a, and a lighter part b that could take one of a's loaded leaves t
  // (load(b) + load(t) < load(a)) but does not touch one: the first empty leaf of a on the
  // shortest path from b through a's empty leaves to such a t moves to b.
  int a = 0;
  for (int p = 1; p < parts_; ++p) a = part_load[p] > part_load[a] ? p : a;
  std::vector<int> parent(static_cast<size_t>(leaf_count()), -2);  // -2 unseen, -1 start
  std::vector<int> queue;
  for (int b = 0; b < parts_; ++b) {  // lightest first would be better; ids keep it simple
    if (b == a || part_load[b] >= part_load[a]) continue;
    std::fill(parent.begin(), parent.end(), -2);
    queue.clear();
    for (int l = 0; l < leaf_count(); ++l) {
      if (owner_[l] != a || load[l] != 0) continue;
      for (int n : neighbours_[l]) {
        if (owner_[n] == b) {
          parent[l] = -1;
          queue.push_back(l);
          break;
        }
      }
    }
    for (size_t i = 0; i < queue.size(); ++i) {
      const int l = queue[i];
      for (int n : neighbours_[l]) {
        if (owner_[n] != a || parent[n] != -2) continue;
        parent[n] = l;
        if (load[n] == 0) {
          queue.push_back(n);
          continue;
        }
        if (part_load[b] + load[n] >= part_load[a]) continue;  // b could not take it
        if (!ConnectedWithout(a, n)) continue;                  // nor could a give it
        int first = l;
        while (parent[first] != -1) first = parent[first];
        if (!ConnectedWithout(a, first)) continue;
        *leaf = first, *to = b;
        return true;
      }
    }
  }
  return false;
}

int LeafPartition::Smooth(std::span<const uint32_t> load) {
  int moves = 0;
  for (bool moved = true; moved;) {
    moved = false;
    for (int l = 0; l < leaf_count(); ++l) {
      if (load[l] != 0) continue;
      const int a = owner_[l];
      // The part holding most of l's neighbours; l moves there if that is more than a holds.
      int best = a, best_count = 0, own = 0;
      for (int n : neighbours_[l]) own += owner_[n] == a ? 1 : 0;
      for (int n : neighbours_[l]) {
        const int b = owner_[n];
        if (b == a) continue;
        int count = 0;
        for (int m : neighbours_[l]) count += owner_[m] == b ? 1 : 0;
        if (count > best_count || (count == best_count && b < best)) best = b, best_count = count;
      }
      if (best == a || best_count <= own || !ConnectedWithout(a, l)) continue;
      owner_[l] = best;
      ++moves;
      moved = true;
    }
  }
  return moves;
}

bool LeafPartition::Connected(int part) const { return ConnectedWithout(part, -1); }

bool LeafPartition::ConnectedWithout(int part, int removed) const {
  std::vector<int> stack;
  std::vector<bool> seen(static_cast<size_t>(leaf_count()), false);
  int members = 0;
  for (int l = 0; l < leaf_count(); ++l) {
    if (owner_[l] != part || l == removed) continue;
    ++members;
    if (stack.empty() && !seen[l]) {
      seen[l] = true;
      stack.push_back(l);
    }
  }
  if (members == 0) return removed < 0;  // taking a part's last leaf would empty it
  int reached = 0;
  while (!stack.empty()) {
    const int l = stack.back();
    stack.pop_back();
    ++reached;
    for (int n : neighbours_[l]) {
      if (owner_[n] == part && n != removed && !seen[n]) {
        seen[n] = true;
        stack.push_back(n);
      }
    }
  }
  return reached == members;
}

}  // namespace areanode
