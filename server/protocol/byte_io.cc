// Little-endian byte writer and bounds-checked reader.
#include "server/protocol/byte_io.h"

#include <bit>

#include "server/core/check.h"

namespace proto {

void ByteWriter::U64(uint64_t v) {
  U32(static_cast<uint32_t>(v));
  U32(static_cast<uint32_t>(v >> 32));
}

void ByteWriter::Bytes(std::span<const uint8_t> bytes) {
  buf_.insert(buf_.end(), bytes.begin(), bytes.end());
}

void ByteWriter::Text(std::string_view text) { buf_.insert(buf_.end(), text.begin(), text.end()); }

void ByteWriter::String(std::string_view text) {
  AS_CHECK(text.size() <= 255, "string longer than a u8 length prefix");
  U8(static_cast<uint8_t>(text.size()));
  Text(text);
}

uint64_t ByteReader::U64() {
  if (!Need(8)) return 0;
  uint64_t lo = U32();
  uint64_t hi = U32();
  return lo | (hi << 32);
}

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
