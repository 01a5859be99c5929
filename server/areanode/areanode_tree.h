// AreanodeTree: QuakeWorld's areanode tree (world.c) over a map's bounds. Each node splits the
// longer of its X/Y extents at the midpoint (Y on a tie, as SV_CreateAreaNode); Z is never split.
// Depth D gives 2^(D+1)-1 nodes and 2^D leaves (default D=4: 31 nodes, 16 leaves; 1..12 allowed).
//
// Ids: node ids are 0..node_count()-1 in breadth-first order (0 = root; node n's children are
// 2n+1 = children[0] and 2n+2 = children[1]). Leaf ids are 0..leaf_count()-1 left to right along
// the bottom level, so leaf l is node l + leaf_count() - 1. Entity ids are 0..max_entities-1 (the
// game's edict numbers). Each node keeps its linked entities in two dense arrays, their ids and
// their boxes (a query scans boxes in a row instead of chasing a list through scattered
// entities); unlinking moves the node's last entity into the hole, so the order within a node
// is not the link order. They are derived data, rebuilt by relinking every entity after a
// restore.
//
// Where a box links (SV_LinkEdict): starting at the root, go to children[0] if
// box.mins[axis] > dist, to children[1] if box.maxs[axis] < dist, else stay. So a box crossing or
// merely touching a split plane stays at that node, and a linked box lies strictly inside the
// open region of its node. The world bounds only place the split planes: a box partly or wholly
// outside them links like any other (into the leaf on whose side it falls, or the node whose
// plane it crosses).
//
// Regions for LeavesTouching/NodesTouching: a node's region is the closed box its splits cut out
// of the world, with every face that lies on the world bounds pushed out to infinity, and Z
// unbounded. A box touches a region if it intersects it (inclusive, as core::Bounds::Intersects).
// Covering property: Query(box) reads the lists of leaves in LeavesTouching(box) only, and every
// entity linked in a leaf that Query(box) can return lies in one of those leaves; Link(id, box)
// writes the list of a leaf in LeavesTouching(box) only. A caller holding the leaf locks of
// LeavesTouching(b) may therefore query, link or unlink any box inside b.
//
// Threading contract. The tree's shape is immutable. Lists change only through Link/Unlink/
// Relink. With parent locking off (the default, single-threaded use) the caller serialises
// everything. With parent locking on (set_parent_locking(true), for the parallel server), the
// tree itself takes a non-leaf node's parent lock (NodeSlot::parent_held) while reading or writing
// that node's list (one at a time, so no lock-order issues), and the caller must hold the leaf
// slot mutex of every leaf
// whose list it reads or writes (the server's region locks). A query passes a parent node whose
// list is empty (NodeSlot::entities) without its lock: by the covering property, an entity
// another thread links meanwhile lies in leaves this query does not hold, so it could not meet
// the query's box anyway (QueryUnordered). An entity's own fields (IsLinked, NodeOf, BoxOf) and its
// Link/Unlink/Relink belong to one thread at a time, the entity's owner.
// set_parent_locking, UnlinkAll and construction need exclusive access. Time spent acquiring
// parent locks is added to the calling thread's ParentLockCounters.
//
// Query results are sorted by entity id so game logic never depends on link order (which differs
// between a parallel run and its serial replay).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "server/core/bounds.h"
#include "server/core/box_columns.h"
#include "server/core/convex_xy.h"
#include "server/core/status.h"

namespace areanode {

using core::Bounds;
using core::BoxColumns;
using EntityId = int32_t;

constexpr int kMinDepth = 1;
// 4,096 leaves. Locality assignment shares fewer leaves the finer they are, and rebalances 4,096
// leaves in a few milliseconds once a second (docs/architecture.md, "Locality assignment", with
// the commands).
constexpr int kMaxDepth = 12;
constexpr int kDefaultDepth = 4;

struct Node {
  int axis = -1;      // 0 = X, 1 = Y, -1 for a leaf
  float dist = 0;     // split plane position along `axis`
  int children[2] = {-1, -1};  // [0] = the side above dist, [1] = below (QuakeWorld's order)
  int leaf = -1;      // leaf id if this node is a leaf, else -1
  int depth = 0;
  Bounds bounds;      // the node's region within the world bounds (full world height)
  // The node's region as LeavesTouching sees it: `bounds` with every face that lies on the world
  // bounds pushed out to +-kOpenFace (and Z open).
  Bounds region;
};
inline constexpr float kOpenFace = 1e30f;

// Per-node slot for the server: a lock and counters. Leaf slots' mutexes are taken by the
// server's region locking; non-leaf slots' parent_held flags by the tree when parent locking is
// on. Cache-line aligned so threads locking different slots do not share a line.
struct alignas(64) NodeSlot {
  std::mutex mutex;  // a leaf's region lock
  // A parent's lock: a flag taken by exchange and polled when busy (core::AcquireFlagPollingFirst),
  // not a mutex. It is held for one list read or write, and a parallel replay takes it for nearly
  // every query: the mutex's library calls (try_lock, unlock) cost 3-4% of a 2-thread replay.
  std::atomic<bool> parent_held{false};
  // Parent-lock acquisitions (the tree's own locking; leaves are counted per frame by the
  // server's locker instead); written only while holding `parent_held`.
  uint64_t lock_count = 0;
  // Entities linked in this node. Written with the node's list (under `parent_held` for a parent
  // with parent locking on); read without the lock by queries, which skip an empty parent's lock
  // and list (AreanodeTree::QueryUnordered says why that is exact).
  std::atomic<uint32_t> entities{0};
};

// Per-thread parent-lock accounting (thread_local inside the tree's .cc). An acquisition first
// tries the lock; only if that fails is the wait timed (polling, then yielding:
// core::AcquireFlagPollingFirst), so an uncontended acquisition costs no clock reads and adds
// nothing to wait_ns.
struct ParentLockCounters {
  uint64_t acquisitions = 0;
  uint64_t contended = 0;  // acquisitions whose try_lock failed and had to wait
  uint64_t wait_ns = 0;    // time spent waiting for busy parent slots
};
ParentLockCounters& ThisThreadParentLockCounters();

class AreanodeTree {
 public:
  // OK if the constructor would accept these arguments, else InvalidArgument naming the problem:
  // `world` finite with mins <= maxs, depth in [kMinDepth, kMaxDepth], max_entities >= 0.
  static core::Status CheckParams(const Bounds& world, int depth, int max_entities);

  // `world` is the map's bounds; `depth` in [kMinDepth, kMaxDepth]; entities 0..max_entities-1.
  // Invariant: CheckParams(world, depth, max_entities).ok() (aborts otherwise).
  AreanodeTree(const Bounds& world, int depth, int max_entities);
  AreanodeTree(const AreanodeTree&) = delete;
  AreanodeTree& operator=(const AreanodeTree&) = delete;

  int depth() const { return depth_; }
  int node_count() const { return static_cast<int>(nodes_.size()); }
  int leaf_count() const { return leaf_count_; }
  int max_entities() const { return static_cast<int>(entity_node_.size()); }
  const Node& node(int id) const { return nodes_[id]; }
  int LeafNode(int leaf) const { return leaf_nodes_[leaf]; }  // node id of leaf `leaf`
  NodeSlot& slot(int node_id) { return slots_[node_id]; }

  void set_parent_locking(bool on) { parent_locking_ = on; }
  bool parent_locking() const { return parent_locking_; }

  // The node a box would link into (deepest node that fully contains it; see the rule above).
  int NodeFor(const Bounds& box) const;
  // The leaf whose region holds point `p` (on a split plane: the side below it; outside the world
  // bounds: the leaf on whose side it falls).
  int LeafAt(core::Vec3 p) const;
  // LeafAt(p), with one box test instead of the descent when p is still in leaf `hint` (a leaf
  // id, or -1 for none): for a caller that follows a point which rarely leaves its leaf.
  int LeafAt(core::Vec3 p, int hint) const;

  // Link an unlinked entity with box `box`. Invariant: id is in range and not linked, and `box`
  // is finite with mins <= maxs (zero size allowed).
  void Link(EntityId id, const Bounds& box);
  // Unlink a linked entity. Invariant: id is in range and linked.
  void Unlink(EntityId id);
  // Unlink if linked, then link with the new box (in place if it stays in the same node).
  void Relink(EntityId id, const Bounds& box);
  bool IsLinked(EntityId id) const { return entity_node_[id] >= 0; }
  int NodeOf(EntityId id) const { return entity_node_[id]; }     // -1 if unlinked
  const Bounds& BoxOf(EntityId id) const { return entity_box_[id]; }
  void UnlinkAll();

  // Replaces *out with the linked entities whose boxes intersect `box` (inclusive), sorted by id.
  void Query(const Bounds& box, std::vector<EntityId>* out) const;
  // As Query, in tree order: for callers that rank the result themselves (snapshot interest).
  void QueryUnordered(const Bounds& box, std::vector<EntityId>* out) const;
  // Replaces *out with the linked entities whose boxes, grown by `pad` units, meet the segment
  // start..end, in tree order. Reads only the lists of nodes whose regions come within `pad` of
  // the segment (the descent clips the segment to each child's side), so a caller holding the
  // leaf locks of every leaf within `pad` of the segment may call it. Invariant: pad > 0, the
  // ends finite.
  void QuerySegment(core::Vec3 start, core::Vec3 end, float pad, std::vector<EntityId>* out) const;
  // QuerySegment(start, ends[k], pad, &outs[k]) for every k < count (1..kMaxSegments), in one
  // walk of the tree: each list the same, in the same order. A parent's lock is taken once for
  // all the segments that read its list.
  static constexpr int kMaxSegments = 8;
  void QuerySegments(core::Vec3 start, const core::Vec3* ends, int count, float pad,
                     std::vector<EntityId>* outs) const;
  // Replaces *out with the ids of leaves whose regions intersect `box`, ascending.
  void LeavesTouching(const Bounds& box, std::vector<int>* out) const;
  // As LeavesTouching(box), keeping only leaves whose regions also come within `slack` units of
  // `shape` in XY (ConvexXY::Intersects).
  void LeavesTouching(const Bounds& box, const core::ConvexXY& shape, float slack,
                      std::vector<int>* out) const;
  // Replaces *out with the ids of nodes (leaves and parents) whose regions intersect `box`,
  // in breadth-first order (ascending ids).
  void NodesTouching(const Bounds& box, std::vector<int>* out) const;

 private:
  void Build(const Bounds& world);
  void InsertInNode(int node_id, EntityId id, const Bounds& box);
  void RemoveFromNode(int node_id, EntityId id);
  void CollectTouching(int node_id, const Bounds& box, bool leaves_only,
                       std::vector<int>* out) const;
  void CollectTouchingShape(int node_id, const Bounds& box, const core::ConvexXY& shape,
                            float slack, std::vector<int>* out) const;
  struct PaddedSegment;  // QuerySegment's segment, prepared for box tests (.cc)
  // The walk of QuerySegments below node_id, for the segments whose bit is set in `active`
  // (segment k's part on this node's side within [t0[k], t1[k]]); `all` holds every segment's
  // padded box.
  void QuerySegmentsNode(int node_id, const PaddedSegment* segments, const Bounds& all,
                         unsigned active, const float* t0, const float* t1,
                         std::vector<EntityId>* outs) const;
  // The parent slot to lock for node_id's list, or nullptr (a leaf, or parent locking off).
  NodeSlot* ParentSlot(int node_id) const {
    return (parent_locking_ && nodes_[node_id].axis >= 0) ? &slots_[node_id] : nullptr;
  }
  // Whether a query reads the list of the node whose ParentSlot is `slot`: always for a leaf or
  // with parent locking off (null), and for a parent only if it holds entities (QueryUnordered says
  // why an empty one may be passed without its lock).
  static bool MustScan(const NodeSlot* slot) {
    return slot == nullptr || slot->entities.load(std::memory_order_relaxed) != 0;
  }

  int depth_ = 0;
  int leaf_count_ = 0;
  bool parent_locking_ = false;
  std::vector<Node> nodes_;
  std::vector<int> leaf_nodes_;
  mutable std::vector<NodeSlot> slots_;
  std::vector<int> entity_node_;      // node the entity is linked into, -1 if none
  std::vector<Bounds> entity_box_;
  // Per node: the linked entities and their boxes (node_ids_[n][i]'s box is box i of
  // node_boxes_[n]), and per entity its index in its node's arrays. A node's arrays and the index
  // of every entity in them are read and written under that node's lock, like the list they
  // replace.
  std::vector<std::vector<EntityId>> node_ids_;
  std::vector<BoxColumns> node_boxes_;
  std::vector<uint32_t> index_in_node_;
  // Per node: a box holding every box linked in it since its list was last empty. It grows with
  // each link and move into the node and becomes empty again when the list does. A query whose
  // box misses it reads neither the list nor, for a parent, the parent's lock: a parent's
  // entities straddle its split plane, so most queries pass far from all of them (on metropolis a
  // query scanned 35 boxes in parents, and 63 in leaves). Written under the node's lock, read
  // without it (QueryUnordered says why that is exact), one atomic per coordinate.
  struct Extent {
    std::atomic<float> lo[3];
    std::atomic<float> hi[3];
  };
  std::unique_ptr<Extent[]> extent_;
  void GrowExtent(int node_id, const Bounds& box);  // under the node's lock
  void ClearExtent(int node_id);                    // under the node's lock (or exclusive access)
  Bounds LoadExtent(int node_id) const;             // without the lock
};

}  // namespace areanode
