// Identity names and tokens (FNV-1a of the name, mixed with the seed through SplitMix64).
#include "client_bots/identity.h"

namespace bots {

std::string IdentityName(const std::string& prefix, int index) {
  return prefix + "-" + std::to_string(index);
}

uint64_t IdentityToken(uint64_t seed, const std::string& name) {
  uint64_t h = 0xCBF29CE484222325ull;  // FNV-1a 64
  for (unsigned char c : name) {
    h ^= c;
    h *= 0x100000001B3ull;
  }
  uint64_t state = h ^ (seed * 0xD1B54A32D192ED03ull);
  uint64_t token = SplitMix64(&state);
  while (token == 0) token = SplitMix64(&state);
  return token;
}

}  // namespace bots
