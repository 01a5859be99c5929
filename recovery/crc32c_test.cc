// CRC-32C against the published test vectors (RFC 3720 B.4, the "123456789" check value).
#include "recovery/crc32c.h"

#include <catch2/catch.hpp>
#include <cstring>
#include <string>
#include <vector>

namespace recovery {

TEST_CASE("crc32c matches the standard check value and RFC 3720 vectors", "[crc32c]") {
  CHECK(crc32c::Value(std::string_view("123456789")) == 0xE3069283u);
  char buf[32];
  std::memset(buf, 0, sizeof(buf));
  CHECK(crc32c::Value(buf, sizeof(buf)) == 0x8A9136AAu);
  std::memset(buf, 0xff, sizeof(buf));
  CHECK(crc32c::Value(buf, sizeof(buf)) == 0x62A8AB43u);
  for (int i = 0; i < 32; ++i) buf[i] = static_cast<char>(i);
  CHECK(crc32c::Value(buf, sizeof(buf)) == 0x46DD794Eu);
  for (int i = 0; i < 32; ++i) buf[i] = static_cast<char>(31 - i);
  CHECK(crc32c::Value(buf, sizeof(buf)) == 0x113FDB5Cu);
  CHECK(crc32c::Value(buf, 0) == 0u);
}

TEST_CASE("crc32c Extend over any split equals the whole", "[crc32c]") {
  std::string data;
  for (int i = 0; i < 100; ++i) data.push_back(static_cast<char>(i * 37 + 11));
  const uint32_t whole = crc32c::Value(data);
  for (size_t cut = 0; cut <= data.size(); ++cut) {
    uint32_t c = crc32c::Extend(crc32c::Value(data.data(), cut), data.data() + cut, data.size() - cut);
    REQUIRE(c == whole);
  }
}

TEST_CASE("crc32c hardware and table implementations agree at every length and alignment", "[crc32c]") {
  if (!crc32c::HardwareAvailable()) {
    WARN("no SSE4.2 on this CPU: only the table implementation is in use");
    return;
  }
  std::string data;
  for (int i = 0; i < 600; ++i) data.push_back(static_cast<char>(i * 131 + (i >> 3)));
  for (size_t start = 0; start < 9; ++start) {
    for (size_t len = 0; start + len <= data.size(); len += (len < 70 ? 1 : 37)) {
      const uint32_t seed = static_cast<uint32_t>(start * 2654435761u);
      REQUIRE(crc32c::ExtendHardware(seed, data.data() + start, len) ==
              crc32c::ExtendPortable(seed, data.data() + start, len));
    }
  }
  CHECK(crc32c::ExtendHardware(0, "123456789", 9) == 0xE3069283u);
}

TEST_CASE("crc32c of consecutive blocks equals the CRC of each block", "[crc32c]") {
  std::string data;
  for (int i = 0; i < 9 * 203; ++i) data.push_back(static_cast<char>(i * 89 + (i >> 4)));
  for (size_t block : {1, 7, 8, 64, 203}) {
    for (size_t count = 0; count <= 9 && count * block <= data.size(); ++count) {
      std::vector<uint32_t> crcs(count + 1, 12345);
      crc32c::ValuesOfBlocks(data.data(), block, count, crcs.data());
      for (size_t k = 0; k < count; ++k) REQUIRE(crcs[k] == crc32c::Value(data.data() + k * block, block));
      CHECK(crcs[count] == 12345u);  // nothing written past the last block
    }
  }
}

TEST_CASE("crc32c mask is invertible and changes the value", "[crc32c]") {
  for (uint32_t v : {0u, 1u, 0xE3069283u, 0xffffffffu}) {
    CHECK(crc32c::Unmask(crc32c::Mask(v)) == v);
    CHECK(crc32c::Mask(v) != v);
  }
}

}  // namespace recovery
