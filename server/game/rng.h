// Deterministic random numbers from a 64-bit state kept inside the game state (xorshift64*).
// No global generator: every draw advances an explicit state word.
#pragma once

#include <cstdint>

namespace game {

// Advances `state` and returns 64 random bits. A zero state is replaced by a fixed constant.
inline uint64_t NextRandom(uint64_t* state) {
  uint64_t x = *state ? *state : 0x9E3779B97F4A7C15ULL;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *state = x;
  return x * 0x2545F4914F6CDD1DULL;
}

// Uniform float in [-1, 1) (Quake's crandom()).
inline float RandomSigned(uint64_t* state) {
  uint32_t bits = static_cast<uint32_t>(NextRandom(state) >> 40);  // 24 bits
  return static_cast<float>(bits) * (2.0f / 16777216.0f) - 1.0f;
}

}  // namespace game
