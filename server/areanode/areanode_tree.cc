// AreanodeTree: building the QuakeWorld areanode tree (SV_CreateAreaNode), linking entities into
// it (SV_LinkEdict / SV_UnlinkEdict) and walking it (SV_AreaEdicts), with optional parent locks.
#include "server/areanode/areanode_tree.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "server/core/check.h"
#include "server/core/spin_wait.h"

namespace areanode {
namespace {

bool IsFiniteBox(const Bounds& b) { return core::IsFinite(b.mins) && core::IsFinite(b.maxs); }

// Takes a parent slot's lock for the scope of one list read or write, and accounts for it in
// the calling thread's counters. A null slot (leaf, or parent locking off) does nothing.
class ParentLock {
 public:
  explicit ParentLock(NodeSlot* slot) : slot_(slot) {
    if (slot_ != nullptr) Acquire();
  }
  ~ParentLock() {
    if (slot_ != nullptr) slot_->parent_held.store(false, std::memory_order_release);
  }
  ParentLock(const ParentLock&) = delete;
  ParentLock& operator=(const ParentLock&) = delete;

 private:
  // One exchange first so that an uncontended acquisition needs no clock reads; a busy slot is
  // polled, then yielded to.
  void Acquire() {
    ParentLockCounters& counters = ThisThreadParentLockCounters();
    if (slot_->parent_held.exchange(true, std::memory_order_acquire)) {
      // Held for a link, an unlink or a query of the node's list: well under 1 us.
      counters.wait_ns += core::AcquireFlagPollingFirst(slot_->parent_held);
      ++counters.contended;
    }
    ++counters.acquisitions;
    ++slot_->lock_count;
  }

  NodeSlot* slot_;
};

}  // namespace

ParentLockCounters& ThisThreadParentLockCounters() {
  thread_local ParentLockCounters counters;
  return counters;
}

core::Status AreanodeTree::CheckParams(const Bounds& world, int depth, int max_entities) {
  if (!IsFiniteBox(world)) {
    return core::Status::InvalidArgument("areanode tree: world bounds are not finite");
  }
  if (world.IsEmpty()) {
    return core::Status::InvalidArgument("areanode tree: world bounds have mins > maxs");
  }
  if (depth < kMinDepth || depth > kMaxDepth) {
    return core::Status::InvalidArgument("areanode tree: depth " + std::to_string(depth) +
                                         " is outside [" + std::to_string(kMinDepth) + ", " +
                                         std::to_string(kMaxDepth) + "]");
  }
  if (max_entities < 0) {
    return core::Status::InvalidArgument("areanode tree: negative max_entities " +
                                         std::to_string(max_entities));
  }
  return core::Status::OK();
}

// Validates before any member is sized from the arguments.
static int CheckedDepth(const Bounds& world, int depth, int max_entities) {
  const core::Status status = AreanodeTree::CheckParams(world, depth, max_entities);
  AS_CHECK(status.ok(), status.message().c_str());
  return depth;
}

AreanodeTree::AreanodeTree(const Bounds& world, int depth, int max_entities)
    : depth_(CheckedDepth(world, depth, max_entities)),
      leaf_count_(1 << depth),
      nodes_((2 << depth) - 1),
      leaf_nodes_(1 << depth),
      slots_((2 << depth) - 1),
      entity_node_(max_entities, -1),
      entity_box_(max_entities),
      node_ids_((2 << depth) - 1),
      node_boxes_((2 << depth) - 1),
      index_in_node_(max_entities, 0),
      extent_(new Extent[static_cast<size_t>((2 << depth) - 1)]) {
  Build(world);
  for (int n = 0; n < node_count(); ++n) ClearExtent(n);
}

// Breadth-first version of SV_CreateAreaNode: node n splits the longer of its X/Y extents
// (Y on a tie) at the midpoint; children[0] (2n+1) is the half above the plane.
void AreanodeTree::Build(const Bounds& world) {
  nodes_[0].bounds = world;
  nodes_[0].region = Bounds{{-kOpenFace, -kOpenFace, -kOpenFace}, {kOpenFace, kOpenFace, kOpenFace}};
  for (int n = 0; n < node_count(); ++n) {
    Node& node = nodes_[n];
    if (node.depth == depth_) {
      node.leaf = n - (leaf_count_ - 1);
      leaf_nodes_[node.leaf] = n;
      continue;
    }
    const core::Vec3 size = node.bounds.Size();
    node.axis = size.x > size.y ? 0 : 1;
    node.dist = 0.5f * (node.bounds.maxs[node.axis] + node.bounds.mins[node.axis]);
    node.children[0] = 2 * n + 1;
    node.children[1] = 2 * n + 2;
    Node& above = nodes_[node.children[0]];
    Node& below = nodes_[node.children[1]];
    above.bounds = below.bounds = node.bounds;
    above.bounds.mins[node.axis] = node.dist;
    below.bounds.maxs[node.axis] = node.dist;
    above.region = below.region = node.region;
    above.region.mins[node.axis] = node.dist;
    below.region.maxs[node.axis] = node.dist;
    above.depth = below.depth = node.depth + 1;
  }
}

int AreanodeTree::NodeFor(const Bounds& box) const {
  int n = 0;
  for (;;) {
    const Node& node = nodes_[n];
    if (node.axis < 0) return n;
    if (box.mins[node.axis] > node.dist) {
      n = node.children[0];
    } else if (box.maxs[node.axis] < node.dist) {
      n = node.children[1];
    } else {
      return n;  // crosses or touches the plane
    }
  }
}

int AreanodeTree::LeafAt(core::Vec3 p) const {
  int n = 0;
  while (nodes_[n].axis >= 0) {
    const Node& node = nodes_[n];
    n = p[node.axis] > node.dist ? node.children[0] : node.children[1];
  }
  return nodes_[n].leaf;
}

int AreanodeTree::LeafAt(core::Vec3 p, int hint) const {
  if (hint >= 0 && hint < leaf_count_) {
    // The descent sends a point on a split plane to the side below it, so a leaf holds its maxs
    // faces and not its mins faces; faces on the world bounds are pushed out to kOpenFace, and
    // only X and Y are split. A NaN fails every test and takes the descent, as it would.
    const Bounds& r = nodes_[leaf_nodes_[hint]].region;
    if (p.x > r.mins.x && p.x <= r.maxs.x && p.y > r.mins.y && p.y <= r.maxs.y) return hint;
  }
  return LeafAt(p);
}

void AreanodeTree::GrowExtent(int node_id, const Bounds& box) {
  Extent& e = extent_[static_cast<size_t>(node_id)];
  for (int a = 0; a < 3; ++a) {
    // Only this thread writes them now (the node's lock): a plain load, then a store if it grows.
    if (box.mins[a] < e.lo[a].load(std::memory_order_relaxed)) e.lo[a].store(box.mins[a], std::memory_order_relaxed);
    if (box.maxs[a] > e.hi[a].load(std::memory_order_relaxed)) e.hi[a].store(box.maxs[a], std::memory_order_relaxed);
  }
}

void AreanodeTree::ClearExtent(int node_id) {
  Extent& e = extent_[static_cast<size_t>(node_id)];
  for (int a = 0; a < 3; ++a) {
    e.lo[a].store(std::numeric_limits<float>::infinity(), std::memory_order_relaxed);
    e.hi[a].store(-std::numeric_limits<float>::infinity(), std::memory_order_relaxed);
  }
}

inline Bounds AreanodeTree::LoadExtent(int node_id) const {
  const Extent& e = extent_[static_cast<size_t>(node_id)];
  Bounds b;
  for (int a = 0; a < 3; ++a) {
    b.mins[a] = e.lo[a].load(std::memory_order_relaxed);
    b.maxs[a] = e.hi[a].load(std::memory_order_relaxed);
  }
  return b;
}

void AreanodeTree::InsertInNode(int node_id, EntityId id, const Bounds& box) {
  std::vector<EntityId>& ids = node_ids_[node_id];
  index_in_node_[id] = static_cast<uint32_t>(ids.size());
  ids.push_back(id);
  node_boxes_[node_id].push_back(box);
  GrowExtent(node_id, box);
  slots_[node_id].entities.store(static_cast<uint32_t>(ids.size()), std::memory_order_relaxed);
}

// The node's last entity takes the removed one's place (its index changes: it is in this
// node, so its index is ours to write under this node's lock).
void AreanodeTree::RemoveFromNode(int node_id, EntityId id) {
  std::vector<EntityId>& ids = node_ids_[node_id];
  BoxColumns& boxes = node_boxes_[node_id];
  const uint32_t at = index_in_node_[id];
  AS_CHECK(at < ids.size() && ids[at] == id, "areanode: entity not where its index says");
  const EntityId last = ids.back();
  ids[at] = last;
  boxes.Set(at, boxes.Get(boxes.size() - 1));
  index_in_node_[last] = at;
  ids.pop_back();
  boxes.pop_back();
  if (ids.empty()) ClearExtent(node_id);
  slots_[node_id].entities.store(static_cast<uint32_t>(ids.size()), std::memory_order_relaxed);
}

// The box is stored before the entity enters a node: no other thread can reach entity_box_[id]
// until it finds `id` in a node, which it reads under the same lock as the insertion.
void AreanodeTree::Link(EntityId id, const Bounds& box) {
  AS_CHECK(id >= 0 && id < max_entities(), "entity id out of range");
  AS_CHECK(entity_node_[id] < 0, "entity is already linked");
  AS_CHECK(IsFiniteBox(box) && !box.IsEmpty(), "box must be finite with mins <= maxs");
  const int n = NodeFor(box);
  entity_box_[id] = box;
  entity_node_[id] = n;
  ParentLock lock(ParentSlot(n));
  InsertInNode(n, id, box);
}

void AreanodeTree::Unlink(EntityId id) {
  AS_CHECK(id >= 0 && id < max_entities(), "entity id out of range");
  const int n = entity_node_[id];
  AS_CHECK(n >= 0, "entity is not linked");
  {
    ParentLock lock(ParentSlot(n));
    RemoveFromNode(n, id);
  }
  entity_node_[id] = -1;
}

// A move that keeps the entity in the same node only rewrites its box, under that node's lock
// because readers of the list read the box.
void AreanodeTree::Relink(EntityId id, const Bounds& box) {
  AS_CHECK(id >= 0 && id < max_entities(), "entity id out of range");
  const int n = entity_node_[id];
  if (n >= 0 && NodeFor(box) == n) {
    AS_CHECK(IsFiniteBox(box) && !box.IsEmpty(), "box must be finite with mins <= maxs");
    ParentLock lock(ParentSlot(n));
    entity_box_[id] = box;
    node_boxes_[n].Set(index_in_node_[id], box);
    GrowExtent(n, box);
    return;
  }
  if (n >= 0) Unlink(id);
  Link(id, box);
}

void AreanodeTree::UnlinkAll() {
  for (std::vector<EntityId>& ids : node_ids_) ids.clear();
  for (BoxColumns& boxes : node_boxes_) boxes.clear();
  for (NodeSlot& slot : slots_) slot.entities.store(0, std::memory_order_relaxed);
  for (int n = 0; n < node_count(); ++n) ClearExtent(n);
  std::fill(entity_node_.begin(), entity_node_.end(), -1);
}

void AreanodeTree::Query(const Bounds& box, std::vector<EntityId>* out) const {
  QueryUnordered(box, out);
  std::sort(out->begin(), out->end());
}

// SV_AreaEdicts_r, with a stack in place of the recursion: scan a node's list, then walk its
// subtree above the plane and then the one below, each only if the box reaches its side
// strictly; the box is splatted once for every list, four boxes to a test. A box whose face lies
// on a plane cannot intersect an entity on the other side, since linked boxes lie strictly inside
// their node's open region; so Query reads only leaves that LeavesTouching (inclusive) reports.
//
// An empty parent is passed without its lock. That gives the locked scan's result: a query runs
// inside leaves its caller holds (the server's region locks, or parallel replay's leaf
// dependencies), and an entity that another thread links meanwhile lies inside that thread's
// leaves, so it cannot meet this box (boxes that touch share a leaf, LeavesTouching being
// inclusive). Whatever linked an entity this box can meet happened before the query started,
// so the count read here is not older than that link.
//
// A node whose extent the box misses is passed the same way, without its list or lock: every box
// in the list lies inside the extent, so none meets the box. Read without the lock, the extent may
// lag behind a link made meanwhile by another thread, which cannot matter by the argument above;
// the extent of a node holding an entity that was linked before the query started, and that this
// query can meet, only grows while the query runs (the entity cannot leave it: its leaves are
// held by this query's caller, so the list does not empty), so each coordinate read, old or new,
// still holds that entity's box.
void AreanodeTree::QueryUnordered(const Bounds& box, std::vector<EntityId>* out) const {
  out->clear();
  const core::BoxBlock::Query q(box);
  int pending[kMaxDepth + 1];  // subtrees below a plane, still to walk
  int num_pending = 0;
  int n = 0;
  for (;;) {
    if (NodeSlot* slot = ParentSlot(n); MustScan(slot) && LoadExtent(n).Intersects(box)) {
      ParentLock lock(slot);
      node_boxes_[n].AppendIntersecting(q, node_ids_[n].data(), out);
    }
    const Node& node = nodes_[n];
    if (node.axis >= 0) {
      const bool above = box.maxs[node.axis] > node.dist;
      const bool below = box.mins[node.axis] < node.dist;
      if (above) {
        if (below) pending[num_pending++] = node.children[1];
        n = node.children[0];
        continue;
      }
      if (below) {
        n = node.children[1];
        continue;
      }
    }
    if (num_pending == 0) return;
    n = pending[--num_pending];
  }
}

// Inclusive descent: a child's closed region (infinite beyond the world edges) meets the box
// iff the box reaches its side of every plane above it, touching allowed.
void AreanodeTree::CollectTouching(int node_id, const Bounds& box, bool leaves_only,
                                   std::vector<int>* out) const {
  const Node& node = nodes_[node_id];
  if (node.axis < 0) {
    out->push_back(leaves_only ? node.leaf : node_id);
    return;
  }
  if (!leaves_only) out->push_back(node_id);
  if (box.maxs[node.axis] >= node.dist) CollectTouching(node.children[0], box, leaves_only, out);
  if (box.mins[node.axis] <= node.dist) CollectTouching(node.children[1], box, leaves_only, out);
}

// The shape test only prunes: a child is entered when the box reaches its side (as
// CollectTouching) and its region comes within `slack` of the shape.
void AreanodeTree::CollectTouchingShape(int node_id, const Bounds& box, const core::ConvexXY& shape,
                                        float slack, std::vector<int>* out) const {
  const Node& node = nodes_[node_id];
  if (!shape.Intersects(node.region, slack)) return;
  if (node.axis < 0) {
    out->push_back(node.leaf);
    return;
  }
  if (box.maxs[node.axis] >= node.dist) CollectTouchingShape(node.children[0], box, shape, slack, out);
  if (box.mins[node.axis] <= node.dist) CollectTouchingShape(node.children[1], box, shape, slack, out);
}

void AreanodeTree::LeavesTouching(const Bounds& box, const core::ConvexXY& shape, float slack,
                                  std::vector<int>* out) const {
  out->clear();
  CollectTouchingShape(0, box, shape, slack, out);
  std::sort(out->begin(), out->end());
}

// The segment start..end for t in [0, 1], prepared for many box tests: its box grown by `pad`
// (a cheap first test) and the reciprocal of each axis' travel for the slab test.
struct AreanodeTree::PaddedSegment {
  core::Vec3 start, delta, inv;
  float pad;
  Bounds box;

  PaddedSegment() = default;
  PaddedSegment(core::Vec3 s, core::Vec3 e, float p)
      : start(s), delta(e - s), pad(p), box(Bounds::Spanning(s, e).Expanded(p)) {
    for (int a = 0; a < 3; ++a) inv[a] = delta[a] != 0 ? 1.0f / delta[a] : 0.0f;
  }

  // True if the segment meets `b` grown by `pad` (slab test).
  bool Meets(const Bounds& b) const {
    if (!box.Intersects(b)) return false;
    float t_in = 0, t_out = 1;
    for (int a = 0; a < 3; ++a) {
      const float lo = b.mins[a] - pad, hi = b.maxs[a] + pad;
      if (delta[a] == 0) {
        if (start[a] < lo || start[a] > hi) return false;
        continue;
      }
      float ta = (lo - start[a]) * inv[a], tb = (hi - start[a]) * inv[a];
      if (ta > tb) std::swap(ta, tb);
      t_in = std::max(t_in, ta);
      t_out = std::min(t_out, tb);
      if (t_in > t_out) return false;
    }
    return true;
  }

  // Narrows [*t0, *t1] to where the coordinate on `axis` reaches `side` of the plane at `dist`
  // within `pad` (side 0: >= dist - pad; side 1: <= dist + pad). False if nothing is left.
  bool ClipToSide(int axis, float dist, int side, float* t0, float* t1) const {
    const float bound = side == 0 ? dist - pad : dist + pad;
    const float s = start[axis], d = delta[axis];
    if (d == 0) return side == 0 ? s >= bound : s <= bound;
    const float t = (bound - s) * inv[axis];
    if ((side == 0) == (d > 0)) *t0 = std::max(*t0, t);  // moving toward the side
    else *t1 = std::min(*t1, t);
    return *t0 <= *t1;
  }
};

void AreanodeTree::QuerySegment(core::Vec3 start, core::Vec3 end, float pad,
                                std::vector<EntityId>* out) const {
  QuerySegments(start, &end, 1, pad, out);
}

void AreanodeTree::QuerySegments(core::Vec3 start, const core::Vec3* ends, int count, float pad,
                                 std::vector<EntityId>* outs) const {
  AS_CHECK(count >= 1 && count <= kMaxSegments, "AreanodeTree::QuerySegments: bad count");
  PaddedSegment segments[kMaxSegments];
  float t0[kMaxSegments], t1[kMaxSegments];
  Bounds all = Bounds::Empty();
  for (int k = 0; k < count; ++k) {
    AS_CHECK(pad > 0 && core::IsFinite(start) && core::IsFinite(ends[k]),
             "AreanodeTree::QuerySegments: bad input");
    outs[k].clear();
    segments[k] = PaddedSegment(start, ends[k], pad);
    all.Add(segments[k].box);
    t0[k] = 0.0f;
    t1[k] = 1.0f;
  }
  QuerySegmentsNode(0, segments, all, (1u << count) - 1, t0, t1, outs);
}

// SV_AreaEdicts_r along segments: each active segment reads this node's list, then the walk
// descends into each child with the part of each segment on its side (within the pad), so a long
// diagonal visits only the nodes it passes near instead of every node under its bounding box. A
// segment's list is what a walk of it alone would give, in the same order (the node, then side
// 0, then side 1). An empty parent, or a node whose extent a segment misses (within the pad), is
// passed by that segment without its list or lock, as in QueryUnordered. A box that meets no
// segment's padded box (`all` holds them all) is passed over four at a time.
void AreanodeTree::QuerySegmentsNode(int node_id, const PaddedSegment* segments,
                                     const Bounds& all, unsigned active, const float* t0,
                                     const float* t1, std::vector<EntityId>* outs) const {
  if (NodeSlot* slot = ParentSlot(node_id); MustScan(slot)) {
    const Bounds extent = LoadExtent(node_id);
    unsigned scan = 0;
    for (unsigned m = active; m != 0; m &= m - 1) {
      const int k = __builtin_ctz(m);
      if (segments[k].Meets(extent)) scan |= 1u << k;
    }
    if (scan != 0) {
      ParentLock lock(slot);
      const BoxColumns& boxes = node_boxes_[node_id];
      const EntityId* ids = node_ids_[node_id].data();
      boxes.ForEachIntersecting(all, [&](size_t i) {
        const Bounds b = boxes.Get(i);
        for (unsigned m = scan; m != 0; m &= m - 1) {
          const int k = __builtin_ctz(m);
          if (segments[k].Meets(b)) outs[k].push_back(ids[i]);
        }
      });
    }
  }
  const Node& node = nodes_[node_id];
  if (node.axis < 0) return;
  for (int side = 0; side < 2; ++side) {
    float a[kMaxSegments], b[kMaxSegments];
    unsigned next = 0;
    for (unsigned m = active; m != 0; m &= m - 1) {
      const int k = __builtin_ctz(m);
      a[k] = t0[k];
      b[k] = t1[k];
      if (segments[k].ClipToSide(node.axis, node.dist, side, &a[k], &b[k])) next |= 1u << k;
    }
    if (next != 0) QuerySegmentsNode(node.children[side], segments, all, next, a, b, outs);
  }
}

void AreanodeTree::LeavesTouching(const Bounds& box, std::vector<int>* out) const {
  out->clear();
  CollectTouching(0, box, /*leaves_only=*/true, out);
  std::sort(out->begin(), out->end());
}

void AreanodeTree::NodesTouching(const Bounds& box, std::vector<int>* out) const {
  out->clear();
  CollectTouching(0, box, /*leaves_only=*/false, out);
  std::sort(out->begin(), out->end());
}

}  // namespace areanode
