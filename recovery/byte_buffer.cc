// ByteBuffer: anonymous mappings advised for huge pages and populated at once (byte_buffer.h).
#include "recovery/byte_buffer.h"

#include <sys/mman.h>

#include <cerrno>
#include <cstring>
#include <cstdint>
#include <string>
#include <utility>

namespace recovery {

namespace {

constexpr size_t kHugePage = size_t{2} << 20;

size_t RoundUp(size_t n, size_t unit) { return (n + unit - 1) / unit * unit; }

}  // namespace

ByteBuffer::ByteBuffer(ByteBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      capacity_(std::exchange(other.capacity_, 0)),
      mapped_(std::exchange(other.mapped_, 0)),
      heap_(std::move(other.heap_)) {}

ByteBuffer& ByteBuffer::operator=(ByteBuffer&& other) noexcept {
  if (this != &other) {
    Release();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    capacity_ = std::exchange(other.capacity_, 0);
    mapped_ = std::exchange(other.mapped_, 0);
    heap_ = std::move(other.heap_);
  }
  return *this;
}

core::Status ByteBuffer::Allocate(size_t n, const std::string& what) {
  if (n <= capacity_) {
    size_ = n;
    return core::Status::OK();
  }
  Release();
  if (n < kMapBytes) {
    heap_.reset(new char[n]);  // default-initialized: not zeroed
    data_ = heap_.get();
    size_ = capacity_ = n;
    return core::Status::OK();
  }
  // Map one huge page more than needed and cut the ends off, so that the buffer starts on a
  // 2 MiB boundary: only aligned 2 MiB ranges can be huge pages.
  const size_t length = RoundUp(n, kHugePage);
  void* raw = ::mmap(nullptr, length + kHugePage, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) {
    return core::Status::IoError(what + ": cannot map " + std::to_string(n) +
                                 " bytes: " + std::strerror(errno));
  }
  char* base = static_cast<char*>(raw);
  char* aligned = reinterpret_cast<char*>(
      RoundUp(reinterpret_cast<uintptr_t>(base), kHugePage));
  if (aligned != base) ::munmap(base, static_cast<size_t>(aligned - base));
  char* end = aligned + length;
  const size_t tail = static_cast<size_t>(base + length + kHugePage - end);
  if (tail != 0) ::munmap(end, tail);
  // Advice only: refused (no transparent huge pages, an older kernel), the pages fault in as
  // they are first written, which is slower and the same.
  (void)::madvise(aligned, length, MADV_HUGEPAGE);
#ifdef MADV_POPULATE_WRITE
  (void)::madvise(aligned, length, MADV_POPULATE_WRITE);
#endif
  data_ = aligned;
  size_ = n;
  capacity_ = mapped_ = length;
  return core::Status::OK();
}

void ByteBuffer::Truncate(size_t n) {
  if (n >= size_) return;
  size_ = n;
  if (mapped_ == 0) return;
  const size_t keep = RoundUp(n, kHugePage);
  if (keep == 0) {
    Release();
    return;
  }
  if (keep < mapped_) {
    ::munmap(data_ + keep, mapped_ - keep);
    capacity_ = mapped_ = keep;
  }
}

void ByteBuffer::Release() {
  if (mapped_ != 0) ::munmap(data_, mapped_);
  heap_.reset();
  data_ = nullptr;
  size_ = 0;
  capacity_ = 0;
  mapped_ = 0;
}

}  // namespace recovery
