// Memory for large arrays that are written whole as soon as they exist (a world's state, a backup
// image read back, a log segment): an anonymous mapping aligned to 2 MiB, advised for huge pages
// (madvise MADV_HUGEPAGE) and populated by one madvise(MADV_POPULATE_WRITE), so that its pages are
// there, zeroed, before the first write.
//
// Why: written through fresh 4 KiB pages, such an array takes a page fault per page, and on our
// 2-core VM a fault is a trip through the hypervisor (about 11 us: a 5.2 MB world state took 14 ms
// to zero through a std::vector, against 2-9 ms mapped this way; docs/recovery.md, "Start-up
// memory"). Either advice may be refused (transparent huge pages off, a kernel before 5.14); the
// pages then fault in as they are first written, which is slower and the same.
#pragma once

#include <cstddef>
#include <memory>
#include <new>

namespace core {

inline constexpr size_t kHugePageBytes = size_t{2} << 20;

inline size_t RoundUpTo(size_t n, size_t unit) { return (n + unit - 1) / unit * unit; }

// Maps RoundUpTo(n, kHugePageBytes) bytes (n > 0) as above, returned in *mapped. Returns null
// (errno set) if the system refuses the mapping. Release with UnmapPopulated, also in parts
// (whole 2 MiB pages from the end).
void* MapPopulated(size_t n, size_t* mapped);
void UnmapPopulated(void* p, size_t mapped);

// A std::allocator for arrays of kHugePageBytes or more that maps them with MapPopulated; smaller
// ones come from operator new as usual. Stateless: every instance frees what any other allocated.
// Throws std::bad_alloc when the system refuses, as operator new does.
template <class T>
class PopulatedAllocator {
 public:
  using value_type = T;
  PopulatedAllocator() = default;
  template <class U>
  PopulatedAllocator(const PopulatedAllocator<U>&) noexcept {}  // NOLINT: rebinding converts

  T* allocate(size_t n) {
    const size_t bytes = n * sizeof(T);
    if (bytes < kHugePageBytes) return std::allocator<T>().allocate(n);
    size_t mapped = 0;
    void* p = MapPopulated(bytes, &mapped);
    if (p == nullptr) throw std::bad_alloc();
    return static_cast<T*>(p);
  }
  void deallocate(T* p, size_t n) noexcept {
    const size_t bytes = n * sizeof(T);
    if (bytes < kHugePageBytes) {
      std::allocator<T>().deallocate(p, n);
    } else {
      UnmapPopulated(p, RoundUpTo(bytes, kHugePageBytes));
    }
  }
  template <class U>
  bool operator==(const PopulatedAllocator<U>&) const noexcept {
    return true;
  }
};

}  // namespace core
