// LeafPartition: the leaves of an AreanodeTree split among `parts` owners (the server's frame
// threads under --assign locality), each owner holding a connected set of leaves, the sets
// balanced by a per-leaf load (players standing in the leaf).
//
// Adjacency: two leaves are neighbours when their regions share a stretch of a split plane of
// positive length (a face, not just a corner). Leaves tile the world, so the graph is connected.
//
// Two steps, both deterministic (same inputs, same owners: the live server and aftershock-replay
// agree):
//   Grow     from scratch: `parts` seeds, the leaves at the centres of the tree's nodes k levels
//            down (2^k >= parts; for fewer parts than nodes, the nodes in bit-reversed order,
//            so each next seed lands in the half the previous ones left empty), then the lightest
//            part that still has an unowned neighbour takes the one nearest its seed, until every
//            leaf is owned; then Improve (a part walled in early stays light). Every part is
//            connected by construction; with more parts than leaves some parts are empty. Seeds
//            at the centres of the tree's own halves meet along its split planes, so the borders
//            start straight: each leaf along a border is locked by both sides in most frames, and
//            a straight cut has the fewest (seeds in opposite corners met along a staircase
//            diagonal, with twice as many).
//   Improve  from the current owners, in rounds, each of
//            - balancing moves: while a loaded leaf l of part a borders a part b with
//              load(b) + load(l) < load(a), and a stays connected without l, the move that
//              lowers the heavier side most (among equals, the one that leaves the shortest
//              borders: most neighbours in b less those in a); an empty leaf changes no load
//              and is not moved for balance;
//            - walks: when no such move exists but a lighter part could take a loaded leaf of
//              the heaviest part beyond some of its empty leaves, the first empty leaf on the
//              shortest such path moves to the lighter part;
//            - then Smooth.
//            A round must lower the sum of squared part loads or it is undone (a walk that
//            reached nothing it could take) and Improve stops, so it ends; parts stay connected.
//            It is a local search: when the heaviest and the lightest part do not touch it may
//            stop with them two leaves apart (seen with 5 or 8 parts of 16 equal leaves; 2 to 4
//            parts come out within one leaf).
// A single heavy leaf cannot be split: the balance is only as fine as the leaves (the tree's
// depth).
//
// Threading: plain values and pure functions.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "server/areanode/areanode_tree.h"

namespace areanode {

class LeafPartition {
 public:
  // The neighbour graph of `tree`'s leaves; no owners yet (Grow assigns them).
  LeafPartition(const AreanodeTree& tree, int parts);

  int parts() const { return parts_; }
  int leaf_count() const { return static_cast<int>(neighbours_.size()); }
  const std::vector<int>& neighbours(int leaf) const { return neighbours_[leaf]; }

  // Assigns every leaf afresh, balancing `load` (one value per leaf, >= 0).
  void Grow(std::span<const uint32_t> load);
  // Moves boundary leaves from heavier to lighter neighbouring parts while that lowers the
  // imbalance (see above), then Smooth. Returns the number of leaves whose owner changed.
  int Improve(std::span<const uint32_t> load);
  // Moves each empty leaf (load 0) to the part that holds most of its neighbours, if that is
  // more than its own part holds and its part stays connected: loads stay as they are and the
  // borders get shorter (each move cuts fewer neighbour pairs, so it ends).
  int Smooth(std::span<const uint32_t> load);

  int owner(int leaf) const { return owner_[leaf]; }
  const std::vector<int>& owners() const { return owner_; }
  // Sum of `load` over each part's leaves.
  std::vector<uint64_t> PartLoads(std::span<const uint32_t> load) const;
  // True if part p's leaves form one connected set (an empty part counts as connected).
  bool Connected(int part) const;

 private:
  bool ConnectedWithout(int part, int removed) const;
  // Improve's steps: a move of a loaded leaf that lowers the imbalance, or else one empty leaf
  // of the heaviest part toward a loaded leaf a lighter part could take. False: none.
  bool BestBalancingMove(std::span<const uint32_t> load, const std::vector<uint64_t>& part_load,
                         int* leaf, int* to) const;
  bool WalkTowardLoad(std::span<const uint32_t> load, const std::vector<uint64_t>& part_load,
                      int* leaf, int* to) const;

  int parts_;
  std::vector<std::vector<int>> neighbours_;
  std::vector<core::Vec3> centre_;  // leaf region centres in X/Y (z = 0)
  std::vector<int> seeds_;          // Grow's seed leaf of each part (fewer if parts > leaves)
  std::vector<int> owner_;
};

}  // namespace areanode
