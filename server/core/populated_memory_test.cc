// MapPopulated and PopulatedAllocator: large arrays are 2 MiB-aligned mappings that start zeroed
// and hold what is written; small ones come from the heap; vectors grow, shrink and copy as usual.
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "server/core/populated_memory.h"

namespace core {

namespace {

bool Aligned(const void* p) { return reinterpret_cast<uintptr_t>(p) % kHugePageBytes == 0; }

struct Block {  // the size of a world's object
  uint64_t words[32];
};

}  // namespace

TEST_CASE("MapPopulated maps whole 2 MiB pages, aligned and zeroed", "[memory]") {
  for (size_t n : {size_t{1}, kHugePageBytes, 3 * kHugePageBytes + 7}) {
    CAPTURE(n);
    size_t mapped = 0;
    auto* p = static_cast<unsigned char*>(MapPopulated(n, &mapped));
    REQUIRE(p != nullptr);
    CHECK(Aligned(p));
    CHECK(mapped == RoundUpTo(n, kHugePageBytes));
    bool zero = true;
    for (size_t i = 0; i < mapped; i += 4093) zero &= p[i] == 0;
    CHECK(zero);
    for (size_t i = 0; i < mapped; ++i) p[i] = static_cast<unsigned char>(i * 31);
    bool kept = true;
    for (size_t i = 0; i < mapped; ++i) kept &= p[i] == static_cast<unsigned char>(i * 31);
    CHECK(kept);
    if (mapped > kHugePageBytes) {  // whole pages from the end go back first
      UnmapPopulated(p + kHugePageBytes, mapped - kHugePageBytes);
      CHECK(p[kHugePageBytes - 1] == static_cast<unsigned char>((kHugePageBytes - 1) * 31));
      mapped = kHugePageBytes;
    }
    UnmapPopulated(p, mapped);
  }
}

TEST_CASE("PopulatedAllocator maps large vectors, which copy, grow and give their memory back",
          "[memory]") {
  constexpr size_t kLarge = 3 * kHugePageBytes / sizeof(Block) + 5;
  std::vector<Block, PopulatedAllocator<Block>> v(kLarge);
  CHECK(Aligned(v.data()));
  bool zero = true;
  for (const Block& b : v) zero &= b.words[0] == 0 && b.words[31] == 0;
  CHECK(zero);
  for (size_t i = 0; i < v.size(); ++i) v[i].words[i % 32] = i + 1;
  auto copy = v;  // another mapping, the same values
  CHECK(copy.data() != v.data());
  CHECK(Aligned(copy.data()));
  bool same = true;
  for (size_t i = 0; i < v.size(); ++i) same &= copy[i].words[i % 32] == i + 1;
  CHECK(same);
  v.resize(2 * kLarge);  // grows into a new mapping, keeping the values
  CHECK(Aligned(v.data()));
  CHECK(v[kLarge - 1].words[(kLarge - 1) % 32] == kLarge);
  std::vector<Block, PopulatedAllocator<Block>>().swap(v);  // gives the mapping back
  CHECK(v.capacity() == 0);
  // Below 2 MiB the allocator hands over to std::allocator both ways; a mismatched pair (a heap
  // block unmapped, or a mapping deleted) is what ASan and valgrind report here.
  std::vector<Block, PopulatedAllocator<Block>> small(10);
  small.resize(kLarge);  // and from the heap into a mapping
  CHECK(Aligned(small.data()));
}

}  // namespace core
