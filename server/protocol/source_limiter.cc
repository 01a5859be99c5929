// SourceLimiter: token buckets in a power-of-two table.
#include "server/protocol/source_limiter.h"

#include <algorithm>
#include <bit>

namespace proto {

uint64_t HashSource(uint32_t ipv4, uint16_t port, uint64_t seed) {
  uint64_t z = seed ^ ((static_cast<uint64_t>(ipv4) << 16) | port);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

SourceLimiter::SourceLimiter(double burst, double per_second, uint32_t slots, uint64_t seed)
    : burst_(burst),
      per_ms_(per_second / 1000.0),
      seed_(seed),
      buckets_(std::bit_ceil(std::max<uint32_t>(slots, 1))) {}

bool SourceLimiter::Allow(uint32_t ipv4, uint16_t port, uint64_t now_ms) {
  Bucket& b = buckets_[HashSource(ipv4, port, seed_) & (buckets_.size() - 1)];
  if (b.last_ms == 0) {
    b.tokens = static_cast<float>(burst_);
  } else if (now_ms > b.last_ms) {
    b.tokens = static_cast<float>(std::min(burst_, b.tokens + per_ms_ * static_cast<double>(now_ms - b.last_ms)));
  }
  b.last_ms = std::max({b.last_ms, now_ms, uint64_t{1}});  // a clock going back refills nothing
  if (b.tokens < 1.0f) return false;
  b.tokens -= 1.0f;
  return true;
}

}  // namespace proto
