// Hash64: a fast, portable 64-bit hash of bytes (word-wise multiply-xor, murmur-style finalizer),
// used for the game's StateHash(), token hashes and cache keys. Same bytes -> same value on every
// run and machine.
#pragma once

#include <cstddef>
#include <cstdint>

namespace core {

uint64_t Hash64(const void* data, size_t size, uint64_t seed);

// Finalizer of splitmix64: a good 64-bit mixer.
constexpr uint64_t Mix64(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

}  // namespace core
