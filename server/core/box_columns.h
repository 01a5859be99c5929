// Box lists laid out for one test on four boxes at once: each coordinate in its own column of four
// floats (16-byte vectors: SSE on x86-64, through the compiler's generic vector extension).
//
// BoxBlock is the unit: four boxes and the one test. BoxColumns is a dense list of them. Users:
//   - an AreanodeTree node keeps its linked entities' boxes in a BoxColumns: a query scans every
//     box of every node it passes, and most miss;
//   - game::ClipBoxes keeps the solid entities a command may meet: each of the command's traces
//     scans them all, and most miss;
//   - collision::BrushGrid keeps each cell's brush bounds in BoxBlocks: a trace's cells list many
//     brushes (the grid does not split Z), and most miss it.
//
// Lanes past a list's size hold an empty box (+inf mins, -inf maxs) that no finite box
// intersects, so a scan reads whole blocks without a tail loop. Not thread-safe: the tree guards
// each node's columns with that node's lock; the grid's blocks are immutable once built.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "server/core/bounds.h"

namespace core {

// Four boxes, one coordinate per column.
struct BoxBlock {
  static constexpr size_t kLanes = 4;
  typedef float V4 __attribute__((vector_size(16)));
  typedef int32_t M4 __attribute__((vector_size(16)));

  V4 lo[3];  // mins x, y, z of the block's four boxes
  V4 hi[3];  // maxs x, y, z

  // A block of four empty boxes.
  static BoxBlock Empty() {
    BoxBlock k;
    for (int a = 0; a < 3; ++a) {
      k.lo[a] = Splat(kInf);
      k.hi[a] = Splat(-kInf);
    }
    return k;
  }
  void Set(size_t lane, const Bounds& b) {
    lo[0][lane] = b.mins.x;
    lo[1][lane] = b.mins.y;
    lo[2][lane] = b.mins.z;
    hi[0][lane] = b.maxs.x;
    hi[1][lane] = b.maxs.y;
    hi[2][lane] = b.maxs.z;
  }
  Bounds Get(size_t lane) const {
    return {{lo[0][lane], lo[1][lane], lo[2][lane]}, {hi[0][lane], hi[1][lane], hi[2][lane]}};
  }

  // A query box splatted once for many blocks.
  struct Query {
    V4 lo[3], hi[3];
    explicit Query(const Bounds& box)
        : lo{Splat(box.mins.x), Splat(box.mins.y), Splat(box.mins.z)},
          hi{Splat(box.maxs.x), Splat(box.maxs.y), Splat(box.maxs.z)} {}
  };
  // Bit l set: lane l's box intersects the query's box (inclusive, as Bounds::Intersects).
  unsigned Intersecting(const Query& q) const {
    const M4 hit = (lo[0] <= q.hi[0]) & (hi[0] >= q.lo[0]) & (lo[1] <= q.hi[1]) &
                   (hi[1] >= q.lo[1]) & (lo[2] <= q.hi[2]) & (hi[2] >= q.lo[2]);
#if defined(__SSE__)
    // Each lane is all ones or all zeros: its sign bit says which (one movmskps).
    return static_cast<unsigned>(__builtin_ia32_movmskps(reinterpret_cast<V4>(hit)));
#else
    return (hit[0] != 0 ? 1u : 0u) | (hit[1] != 0 ? 2u : 0u) | (hit[2] != 0 ? 4u : 0u) |
           (hit[3] != 0 ? 8u : 0u);
#endif
  }

  static constexpr float kInf = std::numeric_limits<float>::infinity();
  static V4 Splat(float v) { return V4{v, v, v, v}; }
};

class BoxColumns {
 public:
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  void push_back(const Bounds& b) {
    if (size_ % kLanes == 0) blocks_.push_back(BoxBlock::Empty());
    Set(size_++, b);
  }
  // Box i := b. Requires i < size().
  void Set(size_t i, const Bounds& b) { blocks_[i / kLanes].Set(i % kLanes, b); }
  Bounds Get(size_t i) const { return blocks_[i / kLanes].Get(i % kLanes); }
  // Removes the last box. Requires !empty().
  void pop_back() {
    --size_;
    if (size_ % kLanes == 0) {
      blocks_.pop_back();
    } else {
      Set(size_, kEmptyBox);
    }
  }
  void clear() {
    blocks_.clear();
    size_ = 0;
  }

  // Calls visit(i) for every box i that intersects `box` (inclusive, as
  // core::Bounds::Intersects), in increasing i.
  template <class Visit>
  void ForEachIntersecting(const Bounds& box, Visit&& visit) const {
    ForEachIntersecting(BoxBlock::Query(box), visit);
  }
  // The same, with the box splatted once by the caller (for many lists).
  template <class Visit>
  void ForEachIntersecting(const BoxBlock::Query& q, Visit&& visit) const {
    // Read once: `visit` does not change the list, but the compiler cannot know that a store it
    // makes (say, a push_back) leaves the vector alone.
    const BoxBlock* const blocks = blocks_.data();
    const size_t num_blocks = blocks_.size(), size = size_;
    for (size_t b = 0; b < num_blocks; ++b) {
      // A lane past size() can only pass against a box infinite on every side.
      for (unsigned hit = blocks[b].Intersecting(q); hit != 0; hit &= hit - 1) {
        const size_t i = b * kLanes + static_cast<size_t>(__builtin_ctz(hit));
        if (i < size) visit(i);
      }
    }
  }
  // Appends ids[i] to *out for every box i that intersects `box`, in increasing i. `ids` holds
  // size() entries.
  template <class Id>
  void AppendIntersecting(const Bounds& box, const Id* ids, std::vector<Id>* out) const {
    AppendIntersecting(BoxBlock::Query(box), ids, out);
  }
  template <class Id>
  void AppendIntersecting(const BoxBlock::Query& q, const Id* ids, std::vector<Id>* out) const {
    ForEachIntersecting(q, [&](size_t i) { out->push_back(ids[i]); });
  }

 private:
  static constexpr float kInf = BoxBlock::kInf;
  static constexpr Bounds kEmptyBox{{kInf, kInf, kInf}, {-kInf, -kInf, -kInf}};
  static constexpr size_t kLanes = BoxBlock::kLanes;
  std::vector<BoxBlock> blocks_;
  size_t size_ = 0;
};

}  // namespace core
