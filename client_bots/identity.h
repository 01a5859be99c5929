// Persistent bot identities: bot i plays as "<prefix>-<i>" with a secret token derived from the
// run's seed and the name, so a second run with the same prefix and seed resumes the same players.
#pragma once

#include <cstdint>
#include <string>

namespace bots {

std::string IdentityName(const std::string& prefix, int index);

// Deterministic, nonzero; differs for different (seed, name) with overwhelming probability.
uint64_t IdentityToken(uint64_t seed, const std::string& name);

// SplitMix64 step: a small, fast, well-mixed generator for per-bot randomness.
inline uint64_t SplitMix64(uint64_t* state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Uniform in [0, 1).
inline double UnitRandom(uint64_t* state) {
  return static_cast<double>(SplitMix64(state) >> 11) * (1.0 / 9007199254740992.0);
}

}  // namespace bots
