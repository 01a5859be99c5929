// MapPopulated: anonymous mappings aligned to 2 MiB, advised for huge pages and populated at once.
#include "server/core/populated_memory.h"

#include <sys/mman.h>

#include <cstdint>

namespace core {

void* MapPopulated(size_t n, size_t* mapped) {
  // Map one huge page more than needed and cut the ends off, so that the memory starts on a
  // 2 MiB boundary: only aligned 2 MiB ranges can be huge pages.
  const size_t length = RoundUpTo(n, kHugePageBytes);
  void* raw = ::mmap(nullptr, length + kHugePageBytes, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return nullptr;
  char* base = static_cast<char*>(raw);
  char* aligned =
      reinterpret_cast<char*>(RoundUpTo(reinterpret_cast<uintptr_t>(base), kHugePageBytes));
  if (aligned != base) ::munmap(base, static_cast<size_t>(aligned - base));
  char* end = aligned + length;
  const size_t tail = static_cast<size_t>(base + length + kHugePageBytes - end);
  if (tail != 0) ::munmap(end, tail);
  // Advice only: refused, the pages fault in as they are first written.
  (void)::madvise(aligned, length, MADV_HUGEPAGE);
#ifdef MADV_POPULATE_WRITE
  (void)::madvise(aligned, length, MADV_POPULATE_WRITE);
#endif
  *mapped = length;
  return aligned;
}

void UnmapPopulated(void* p, size_t mapped) {
  if (p != nullptr && mapped != 0) ::munmap(p, mapped);
}

}  // namespace core
