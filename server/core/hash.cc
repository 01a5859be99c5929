// Hash64: four independent word lanes so the multiply chains overlap, then a final mix.
#include "server/core/hash.h"

#include <cstring>

namespace core {

namespace {
constexpr uint64_t kPrime1 = 0x9E3779B185EBCA87ULL;
constexpr uint64_t kPrime2 = 0xC2B2AE3D27D4EB4FULL;

inline uint64_t Round(uint64_t acc, uint64_t word) {
  acc += word * kPrime2;
  acc = (acc << 31) | (acc >> 33);
  return acc * kPrime1;
}
}  // namespace

uint64_t Hash64(const void* data, size_t size, uint64_t seed) {
  const auto* p = static_cast<const unsigned char*>(data);
  uint64_t lane[4] = {seed + kPrime1, seed ^ kPrime2, seed + 1, seed - kPrime1};
  size_t i = 0;
  for (; i + 32 <= size; i += 32) {
    for (int k = 0; k < 4; ++k) {
      uint64_t w;
      std::memcpy(&w, p + i + 8 * k, 8);
      lane[k] = Round(lane[k], w);
    }
  }
  uint64_t h = size * kPrime1;
  for (int k = 0; k < 4; ++k) h = Round(h ^ Mix64(lane[k]), lane[k]);
  for (; i + 8 <= size; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    h = Round(h, w);
  }
  for (; i < size; ++i) h = Round(h, p[i]);
  return Mix64(h);
}

}  // namespace core
