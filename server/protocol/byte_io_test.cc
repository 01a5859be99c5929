// Tests for ByteWriter/ByteReader: little-endian layout and sticky failure on overrun.
#include "server/protocol/byte_io.h"

#include <catch2/catch.hpp>
#include <cmath>

namespace proto {
namespace {

TEST_CASE("ByteWriter writes little-endian", "[byte_io]") {
  ByteWriter w;
  w.U16(0x0102);
  w.U32(0x03040506);
  w.U64(0x0708090A0B0C0D0EULL);
  w.F32(1.0f);  // 0x3F800000
  w.I16(-2);
  w.String("hi");
  std::vector<uint8_t> expect = {0x02, 0x01, 0x06, 0x05, 0x04, 0x03, 0x0E, 0x0D,
                                 0x0C, 0x0B, 0x0A, 0x09, 0x08, 0x07, 0x00, 0x00,
                                 0x80, 0x3F, 0xFE, 0xFF, 0x02, 'h',  'i'};
  CHECK(w.data() == expect);
}

TEST_CASE("ByteReader reads back what ByteWriter wrote", "[byte_io]") {
  ByteWriter w;
  w.U8(200);
  w.U16(65535);
  w.U32(0xDEADBEEF);
  w.U64(0xFFFFFFFFFFFFFFFFULL);
  w.I16(-32768);
  w.F32(-0.0f);
  w.String("");
  std::vector<uint8_t> bytes = w.Release();
  ByteReader r(bytes);
  CHECK(r.U8() == 200);
  CHECK(r.U16() == 65535);
  CHECK(r.U32() == 0xDEADBEEF);
  CHECK(r.U64() == 0xFFFFFFFFFFFFFFFFULL);
  CHECK(r.I16() == -32768);
  float z = r.F32();
  CHECK(z == 0.0f);
  CHECK(std::signbit(z));
  CHECK(r.String().empty());
  CHECK(r.ok());
  CHECK(r.AtEnd());
}

TEST_CASE("ByteReader fails stickily past the end", "[byte_io]") {
  std::vector<uint8_t> bytes = {1, 2, 3};
  ByteReader r(bytes);
  CHECK(r.U16() == 0x0201);
  CHECK(r.U32() == 0);  // only one byte left
  CHECK_FALSE(r.ok());
  CHECK(r.U8() == 0);  // the remaining byte is not handed out after a failure
  CHECK_FALSE(r.ok());

  std::vector<uint8_t> str = {5, 'a', 'b'};  // claims 5 characters, has 2
  ByteReader s(str);
  CHECK(s.String().empty());
  CHECK_FALSE(s.ok());
}

}  // namespace
}  // namespace proto
