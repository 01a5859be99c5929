// ByteBuffer: anonymous mappings advised for huge pages and populated at once (byte_buffer.h).
#include "recovery/byte_buffer.h"

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

namespace recovery {

ByteBuffer::ByteBuffer(ByteBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      capacity_(std::exchange(other.capacity_, 0)),
      heap_(std::move(other.heap_)) {}

ByteBuffer& ByteBuffer::operator=(ByteBuffer&& other) noexcept {
  if (this != &other) {
    Release();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    capacity_ = std::exchange(other.capacity_, 0);
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
  size_t length = 0;
  void* memory = core::MapPopulated(n, &length);
  if (memory == nullptr) {
    return core::Status::IoError(what + ": cannot map " + std::to_string(n) +
                                 " bytes: " + std::strerror(errno));
  }
  data_ = static_cast<char*>(memory);
  size_ = n;
  capacity_ = length;
  return core::Status::OK();
}

void ByteBuffer::Truncate(size_t n) {
  if (n >= size_) return;
  size_ = n;
  if (!mapped()) return;
  const size_t keep = core::RoundUpTo(n, core::kHugePageBytes);
  if (keep == 0) {
    Release();
    return;
  }
  if (keep < capacity_) {
    core::UnmapPopulated(data_ + keep, capacity_ - keep);
    capacity_ = keep;
  }
}

void ByteBuffer::Release() {
  if (mapped()) core::UnmapPopulated(data_, capacity_);
  heap_.reset();
  data_ = nullptr;
  size_ = 0;
  capacity_ = 0;
}

}  // namespace recovery
