// Little-endian byte writer and bounds-checked reader.
#include "server/protocol/byte_io.h"

#include <bit>

#include "server/core/check.h"

namespace proto {

void ByteWriter::U16(uint16_t v) {
  U8(static_cast<uint8_t>(v));
  U8(static_cast<uint8_t>(v >> 8));
}

void ByteWriter::U32(uint32_t v) {
  U16(static_cast<uint16_t>(v));
  U16(static_cast<uint16_t>(v >> 16));
}

void ByteWriter::U64(uint64_t v) {
  U32(static_cast<uint32_t>(v));
  U32(static_cast<uint32_t>(v >> 32));
}

void ByteWriter::F32(float v) { U32(std::bit_cast<uint32_t>(v)); }

void ByteWriter::Bytes(std::span<const uint8_t> bytes) {
  buf_.insert(buf_.end(), bytes.begin(), bytes.end());
}

void ByteWriter::Text(std::string_view text) { buf_.insert(buf_.end(), text.begin(), text.end()); }

void ByteWriter::String(std::string_view text) {
  AS_CHECK(text.size() <= 255, "string longer than a u8 length prefix");
  U8(static_cast<uint8_t>(text.size()));
  Text(text);
}

bool ByteReader::Need(size_t n) {
  if (failed_ || remaining() < n) {
    failed_ = true;
    return false;
  }
  return true;
}

uint8_t ByteReader::U8() {
  if (!Need(1)) return 0;
  return data_[pos_++];
}

uint16_t ByteReader::U16() {
  if (!Need(2)) return 0;
  uint16_t v = static_cast<uint16_t>(data_[pos_] | (data_[pos_ + 1] << 8));
  pos_ += 2;
  return v;
}

uint32_t ByteReader::U32() {
  if (!Need(4)) return 0;
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | data_[pos_ + static_cast<size_t>(i)];
  pos_ += 4;
  return v;
}

uint64_t ByteReader::U64() {
  if (!Need(8)) return 0;
  uint64_t lo = U32();
  uint64_t hi = U32();
  return lo | (hi << 32);
}

float ByteReader::F32() { return std::bit_cast<float>(U32()); }

std::string_view ByteReader::Bytes(size_t n) {
  if (!Need(n)) return {};
  std::string_view v(reinterpret_cast<const char*>(data_.data() + pos_), n);
  pos_ += n;
  return v;
}

std::string_view ByteReader::String() {
  uint8_t n = U8();
  return Bytes(n);
}

}  // namespace proto
