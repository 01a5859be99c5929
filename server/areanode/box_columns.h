// BoxColumns: a dense list of boxes stored four to a block, each coordinate in its own column of
// four floats, so that one box test runs on four boxes at once (16-byte vectors: SSE on x86-64,
// through the compiler's generic vector extension). An AreanodeTree node keeps its linked
// entities' boxes in one: a query scans every box of every node it passes, and most miss.
//
// Lanes past size() hold an empty box (+inf mins, -inf maxs) that no finite box intersects, so a
// scan reads whole blocks without a tail loop. Not thread-safe: the tree guards each node's
// columns with that node's lock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "server/core/bounds.h"

namespace areanode {

class BoxColumns {
 public:
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  void push_back(const core::Bounds& b) {
    if (size_ % kLanes == 0) blocks_.push_back(EmptyBlock());
    Set(size_++, b);
  }
  // Box i := b. Requires i < size().
  void Set(size_t i, const core::Bounds& b) {
    Block& k = blocks_[i / kLanes];
    const size_t l = i % kLanes;
    k.lo[0][l] = b.mins.x;
    k.lo[1][l] = b.mins.y;
    k.lo[2][l] = b.mins.z;
    k.hi[0][l] = b.maxs.x;
    k.hi[1][l] = b.maxs.y;
    k.hi[2][l] = b.maxs.z;
  }
  core::Bounds Get(size_t i) const {
    const Block& k = blocks_[i / kLanes];
    const size_t l = i % kLanes;
    return {{k.lo[0][l], k.lo[1][l], k.lo[2][l]}, {k.hi[0][l], k.hi[1][l], k.hi[2][l]}};
  }
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

  // Appends ids[i] to *out for every box i that intersects `box` (inclusive, as
  // core::Bounds::Intersects), in increasing i. `ids` holds size() entries.
  template <class Id>
  void AppendIntersecting(const core::Bounds& box, const Id* ids, std::vector<Id>* out) const {
    const V4 qlo[3] = {Splat(box.mins.x), Splat(box.mins.y), Splat(box.mins.z)};
    const V4 qhi[3] = {Splat(box.maxs.x), Splat(box.maxs.y), Splat(box.maxs.z)};
    for (size_t b = 0; b < blocks_.size(); ++b) {
      const Block& k = blocks_[b];
      const M4 hit = (k.lo[0] <= qhi[0]) & (k.hi[0] >= qlo[0]) & (k.lo[1] <= qhi[1]) &
                     (k.hi[1] >= qlo[1]) & (k.lo[2] <= qhi[2]) & (k.hi[2] >= qlo[2]);
      uint64_t halves[2];
      std::memcpy(halves, &hit, sizeof(halves));
      if ((halves[0] | halves[1]) == 0) continue;  // the common case: all four miss
      // A lane past size() can only pass against a box infinite on every side.
      for (size_t l = 0; l < kLanes && b * kLanes + l < size_; ++l) {
        if (hit[l] != 0) out->push_back(ids[b * kLanes + l]);
      }
    }
  }

 private:
  static constexpr size_t kLanes = 4;
  typedef float V4 __attribute__((vector_size(16)));
  typedef int32_t M4 __attribute__((vector_size(16)));
  struct Block {
    V4 lo[3];  // mins x, y, z of the block's four boxes
    V4 hi[3];  // maxs x, y, z
  };
  static constexpr float kInf = std::numeric_limits<float>::infinity();
  static constexpr core::Bounds kEmptyBox{{kInf, kInf, kInf}, {-kInf, -kInf, -kInf}};

  static V4 Splat(float v) { return V4{v, v, v, v}; }
  static Block EmptyBlock() {
    Block k;
    for (int a = 0; a < 3; ++a) {
      k.lo[a] = Splat(kInf);
      k.hi[a] = Splat(-kInf);
    }
    return k;
  }

  std::vector<Block> blocks_;
  size_t size_ = 0;
};

}  // namespace areanode
