// FreeIds: the free slots of a contiguous id range, lowest first (the record store's free list).
#pragma once

#include <bit>
#include <cstdint>
#include <vector>

#include "server/core/check.h"

namespace game {

// A bit per id of [first, end): building it for the whole range is one pass over a few
// kilobytes, where a std::set allocated a node per id (20,000 at the default record capacity,
// at every world's creation and restore). Lowest scans the words from the start, which suits the
// few calls it gets (a player's leave).
class FreeIds {
 public:
  // Empty, over ids [first, end).
  void Reset(int first, int end) {
    AS_CHECK(first <= end, "FreeIds: first > end");
    first_ = first;
    end_ = end;
    words_.assign(static_cast<size_t>(end - first + 63) / 64, 0);
    count_ = 0;
  }
  // id in [first, end) and not free.
  void Insert(int id) {
    const size_t at = Offset(id);
    uint64_t& w = words_[at / 64];
    const uint64_t bit = uint64_t{1} << (at % 64);
    AS_CHECK(!(w & bit), "FreeIds: id already free");
    w |= bit;
    ++count_;
  }
  // id free.
  void Erase(int id) {
    const size_t at = Offset(id);
    uint64_t& w = words_[at / 64];
    const uint64_t bit = uint64_t{1} << (at % 64);
    AS_CHECK(w & bit, "FreeIds: id not free");
    w &= ~bit;
    --count_;
  }
  bool empty() const { return count_ == 0; }
  int size() const { return count_; }
  // The lowest free id; !empty().
  int Lowest() const {
    for (size_t i = 0; i < words_.size(); ++i) {
      if (words_[i] != 0) return first_ + static_cast<int>(i * 64) + std::countr_zero(words_[i]);
    }
    AS_CHECK(false, "FreeIds: empty");
    return -1;
  }

 private:
  size_t Offset(int id) const {
    AS_CHECK(id >= first_ && id < end_, "FreeIds: id out of range");
    return static_cast<size_t>(id - first_);
  }

  int first_ = 0, end_ = 0;
  std::vector<uint64_t> words_;
  int count_ = 0;
};

}  // namespace game
