// CRC-32C: the SSE4.2 crc32 instruction (x86-64 with SSE4.2, chosen at run time), or slicing-by-8
// tables built at compile time (constexpr, so no init-order issues). Both give the same values.
#include "recovery/crc32c.h"

#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <nmmintrin.h>
#define AFTERSHOCK_CRC32C_X86 1
#endif

namespace recovery::crc32c {
namespace {

constexpr uint32_t kPoly = 0x82F63B78u;  // Castagnoli, bit-reversed

using Tables = std::array<std::array<uint32_t, 256>, 8>;

constexpr Tables MakeTables() {
  Tables t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ kPoly : c >> 1;
    t[0][i] = c;
  }
  for (uint32_t i = 0; i < 256; ++i) {
    for (int s = 1; s < 8; ++s) t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xff];
  }
  return t;
}

constexpr Tables kTables = MakeTables();

inline uint32_t LoadLe32(const uint8_t* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

}  // namespace

uint32_t ExtendPortable(uint32_t crc, const void* data, size_t n) {
  const uint8_t* p = static_cast<const uint8_t*>(data);
  uint32_t c = crc ^ 0xffffffffu;
  // Byte at a time until 8 bytes remain a multiple; slicing-by-8 for the bulk.
  while (n >= 8) {
    uint32_t lo = LoadLe32(p) ^ c;
    uint32_t hi = LoadLe32(p + 4);
    c = kTables[7][lo & 0xff] ^ kTables[6][(lo >> 8) & 0xff] ^ kTables[5][(lo >> 16) & 0xff] ^
        kTables[4][lo >> 24] ^ kTables[3][hi & 0xff] ^ kTables[2][(hi >> 8) & 0xff] ^
        kTables[1][(hi >> 16) & 0xff] ^ kTables[0][hi >> 24];
    p += 8;
    n -= 8;
  }
  while (n-- > 0) c = kTables[0][(c ^ *p++) & 0xff] ^ (c >> 8);
  return c ^ 0xffffffffu;
}

#if AFTERSHOCK_CRC32C_X86

__attribute__((target("sse4.2"))) uint32_t ExtendHardware(uint32_t crc, const void* data, size_t n) {
  const uint8_t* p = static_cast<const uint8_t*>(data);
  uint64_t c = crc ^ 0xffffffffu;
  while (n >= 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);  // little-endian, as the instruction expects
    c = _mm_crc32_u64(c, word);
    p += 8;
    n -= 8;
  }
  uint32_t c32 = static_cast<uint32_t>(c);
  while (n-- > 0) c32 = _mm_crc32_u8(c32, *p++);
  return c32 ^ 0xffffffffu;
}

bool HardwareAvailable() {
  static const bool available = __builtin_cpu_supports("sse4.2");
  return available;
}

namespace {

// Four blocks at once, one crc32 chain each; the tails (block_size % 8) byte by byte.
__attribute__((target("sse4.2"))) void FourBlocksHardware(const uint8_t* p, size_t size, uint32_t* out) {
  uint64_t c0 = 0xffffffffu, c1 = 0xffffffffu, c2 = 0xffffffffu, c3 = 0xffffffffu;
  size_t at = 0;
  for (; at + 8 <= size; at += 8) {
    uint64_t w0, w1, w2, w3;
    std::memcpy(&w0, p + at, 8);
    std::memcpy(&w1, p + size + at, 8);
    std::memcpy(&w2, p + 2 * size + at, 8);
    std::memcpy(&w3, p + 3 * size + at, 8);
    c0 = _mm_crc32_u64(c0, w0);
    c1 = _mm_crc32_u64(c1, w1);
    c2 = _mm_crc32_u64(c2, w2);
    c3 = _mm_crc32_u64(c3, w3);
  }
  uint64_t c[4] = {c0, c1, c2, c3};
  for (int k = 0; k < 4; ++k) {
    uint32_t v = static_cast<uint32_t>(c[k]);
    for (size_t b = at; b < size; ++b) v = _mm_crc32_u8(v, p[k * size + b]);
    out[k] = v ^ 0xffffffffu;
  }
}

}  // namespace

#else

uint32_t ExtendHardware(uint32_t crc, const void* data, size_t n) { return ExtendPortable(crc, data, n); }
bool HardwareAvailable() { return false; }

#endif

uint32_t Extend(uint32_t crc, const void* data, size_t n) {
  return HardwareAvailable() ? ExtendHardware(crc, data, n) : ExtendPortable(crc, data, n);
}

void ValuesOfBlocks(const void* data, size_t block_size, size_t count, uint32_t* out) {
  const uint8_t* p = static_cast<const uint8_t*>(data);
  size_t k = 0;
#if AFTERSHOCK_CRC32C_X86
  if (HardwareAvailable()) {
    for (; k + 4 <= count; k += 4) FourBlocksHardware(p + k * block_size, block_size, out + k);
  }
#endif
  for (; k < count; ++k) out[k] = Extend(0, p + k * block_size, block_size);
}

}  // namespace recovery::crc32c
