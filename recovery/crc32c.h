// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), written for Aftershock: the SSE4.2
// crc32 instruction where the CPU has it (checked once at run time), slicing-by-8 tables otherwise.
// Every checksum in the log and the backup files is a CRC-32C; Mask() is applied where a CRC is
// stored next to the data it covers (LevelDB's trick, so a CRC of CRCs does not look valid).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace recovery::crc32c {

// Returns the CRC-32C of data[0, n) continued from `crc` (the CRC of the bytes before them).
uint32_t Extend(uint32_t crc, const void* data, size_t n);

// out[k] = Value(data + k * block_size, block_size) for k in [0, count): the per-object CRCs of a
// run of objects. The hardware path runs four blocks' CRCs interleaved (the instruction's
// latency, not its throughput, limits one chain), about three times the speed of one at a time.
void ValuesOfBlocks(const void* data, size_t block_size, size_t count, uint32_t* out);

// The two implementations Extend chooses between, for the tests. ExtendHardware may only be
// called if HardwareAvailable().
uint32_t ExtendPortable(uint32_t crc, const void* data, size_t n);
uint32_t ExtendHardware(uint32_t crc, const void* data, size_t n);
bool HardwareAvailable();

inline uint32_t Value(const void* data, size_t n) { return Extend(0, data, n); }
inline uint32_t Value(std::string_view s) { return Extend(0, s.data(), s.size()); }

inline constexpr uint32_t kMaskDelta = 0xa282ead8u;
inline uint32_t Mask(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + kMaskDelta; }
inline uint32_t Unmask(uint32_t masked) {
  uint32_t rot = masked - kMaskDelta;
  return (rot >> 17) | (rot << 15);
}

}  // namespace recovery::crc32c
