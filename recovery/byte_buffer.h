// ByteBuffer: room for a large read, such as a whole log segment (up to 64 MiB), that costs
// neither a zero fill nor a page fault per 4 KiB page.
//
// A std::string of n bytes is zeroed first and then faults in n / 4096 pages one at a time as the
// zeroing touches them; the read then copies over the zeros. Reading the 190 MB of a 5-minute
// log of 512 players that way took 735-750 ms on our 2-core VM, where a page fault is a trip
// through the hypervisor, against 31-52 ms into a mapping advised for 2 MiB pages and populated
// by one call (docs/recovery.md, "Reading the log"). A buffer of kMapBytes or more is such a
// mapping (core::MapPopulated, server/core/populated_memory.h). A smaller buffer comes from the
// heap, unzeroed.
// Allocate reuses the buffer's memory when it has room, so a scan that reads segment after
// segment into one buffer maps and populates once.
//
// Move-only; not thread-safe (one owner at a time, as a std::string).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "server/core/populated_memory.h"
#include "server/core/status.h"

namespace recovery {

class ByteBuffer {
 public:
  // Buffers of this many bytes or more are mappings (see above); smaller ones are heap arrays.
  static constexpr size_t kMapBytes = core::kHugePageBytes;

  ByteBuffer() = default;
  ~ByteBuffer() { Release(); }
  ByteBuffer(ByteBuffer&& other) noexcept;
  ByteBuffer& operator=(ByteBuffer&& other) noexcept;
  ByteBuffer(const ByteBuffer&) = delete;
  ByteBuffer& operator=(const ByteBuffer&) = delete;

  // Drops the old contents and makes room for n bytes, whose values are unspecified until
  // written. The buffer's own memory serves if it has room for n (capacity()), so one buffer read
  // into again and again touches fresh memory once: the first touch of a page is what costs here
  // (byte_buffer.cc). Fails only when the system refuses the memory, with IoError "<what>:
  // cannot map N bytes: <strerror>"; the buffer is then empty.
  core::Status Allocate(size_t n, const std::string& what);

  // Keeps the first n bytes (n <= size()). A mapping gives the whole 2 MiB pages past them back.
  void Truncate(size_t n);

  // Gives the memory back; size() becomes 0.
  void Release();

  char* data() { return data_; }
  const char* data() const { return data_; }
  size_t size() const { return size_; }
  // The most bytes Allocate can give without new memory.
  size_t capacity() const { return capacity_; }
  std::string_view view() const { return {data_, size_}; }

 private:
  // Whether data_ is a mapping of capacity_ bytes (else the heap array, or nothing).
  bool mapped() const { return heap_ == nullptr && capacity_ != 0; }

  char* data_ = nullptr;
  size_t size_ = 0;
  size_t capacity_ = 0;              // bytes of memory at data_: mapped, or the heap array's
  std::unique_ptr<char[]> heap_;     // the storage of a small buffer
};

}  // namespace recovery
