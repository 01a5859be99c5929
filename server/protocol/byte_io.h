// ByteWriter / ByteReader: little-endian primitives of the wire format. The writer appends to a
// vector it owns; the reader is bounds-checked and records failure instead of throwing.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace proto {

// Appends little-endian integers and IEEE-754 binary32 floats (raw bit pattern) to a buffer.
// Not thread-safe; one writer per message being built.
class ByteWriter {
 public:
  ByteWriter() = default;
  // Writes into `reuse`, emptied first: its capacity is kept, so a caller that hands the same
  // buffer back every time (Release, then this) writes without allocating.
  explicit ByteWriter(std::vector<uint8_t> reuse) : buf_(std::move(reuse)) { buf_.clear(); }

  void U8(uint8_t v) { buf_.push_back(v); }
  void U16(uint16_t v) {
    const uint8_t b[2] = {static_cast<uint8_t>(v), static_cast<uint8_t>(v >> 8)};
    buf_.insert(buf_.end(), b, b + 2);
  }
  void U32(uint32_t v) {
    const uint8_t b[4] = {static_cast<uint8_t>(v), static_cast<uint8_t>(v >> 8),
                          static_cast<uint8_t>(v >> 16), static_cast<uint8_t>(v >> 24)};
    buf_.insert(buf_.end(), b, b + 4);
  }
  void U64(uint64_t v);
  void I16(int16_t v) { U16(static_cast<uint16_t>(v)); }
  void F32(float v) { U32(std::bit_cast<uint32_t>(v)); }
  void Bytes(std::span<const uint8_t> bytes);
  void Text(std::string_view text);  // raw characters, no length prefix
  // A string as u8 length + bytes. Caller guarantees size() <= 255 (AS_CHECK).
  void String(std::string_view text);

  void Reserve(size_t bytes) { buf_.reserve(bytes); }
  size_t size() const { return buf_.size(); }
  const std::vector<uint8_t>& data() const { return buf_; }
  std::vector<uint8_t> Release() { return std::move(buf_); }

 private:
  std::vector<uint8_t> buf_;
};

// Reads from a span the caller keeps alive. A read past the end returns 0 (or an empty view),
// marks the reader failed, and every later read also fails; check ok() once at the end.
class ByteReader {
 public:
  explicit ByteReader(std::span<const uint8_t> data) : data_(data) {}

  // Inline: the decoders read every field through these.
  uint8_t U8() { return Need(1) ? data_[pos_++] : 0; }
  uint16_t U16() {
    if (!Need(2)) return 0;
    const uint16_t v = static_cast<uint16_t>(data_[pos_] | (data_[pos_ + 1] << 8));
    pos_ += 2;
    return v;
  }
  uint32_t U32() {
    if (!Need(4)) return 0;
    const uint32_t v = uint32_t{data_[pos_]} | uint32_t{data_[pos_ + 1]} << 8 |
                       uint32_t{data_[pos_ + 2]} << 16 | uint32_t{data_[pos_ + 3]} << 24;
    pos_ += 4;
    return v;
  }
  uint64_t U64();
  int16_t I16() { return static_cast<int16_t>(U16()); }
  float F32() { return std::bit_cast<float>(U32()); }  // may be NaN/inf: callers validate
  std::string_view Bytes(size_t n);  // view into the input
  std::string_view String();         // u8 length + bytes

  bool ok() const { return !failed_; }
  size_t position() const { return pos_; }
  size_t remaining() const { return data_.size() - pos_; }
  bool AtEnd() const { return pos_ == data_.size(); }

 private:
  bool Need(size_t n) {
    if (failed_ || remaining() < n) {
      failed_ = true;
      return false;
    }
    return true;
  }
  std::span<const uint8_t> data_;
  size_t pos_ = 0;
  bool failed_ = false;
};

}  // namespace proto
