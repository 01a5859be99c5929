// SourceLimiter: a token bucket per UDP source (IPv4 address and port) in a fixed table, for
// answers a server gives strangers (connectionless replies), so one source cannot make the
// server do unbounded work or use it as an amplifier. Sources that hash to the same slot share
// a bucket; the hash is keyed with a seed chosen by the owner. No allocation after
// construction. Not thread-safe: one owner thread.
#pragma once

#include <cstdint>
#include <vector>

namespace proto {

class SourceLimiter {
 public:
  // Each bucket holds at most `burst` tokens and gains `per_second` a second; `slots` buckets
  // (rounded up to a power of two).
  SourceLimiter(double burst, double per_second, uint32_t slots, uint64_t seed);

  // Takes one token from the bucket of (ipv4, port) at now_ms; false if it was empty.
  bool Allow(uint32_t ipv4, uint16_t port, uint64_t now_ms);

 private:
  struct Bucket {
    float tokens = 0;
    uint64_t last_ms = 0;  // 0: never used (full)
  };
  double burst_, per_ms_;
  uint64_t seed_;
  std::vector<Bucket> buckets_;
};

// Keyed 64-bit mix of a source address (SplitMix64 finaliser over addr, port and seed).
uint64_t HashSource(uint32_t ipv4, uint16_t port, uint64_t seed);

}  // namespace proto
