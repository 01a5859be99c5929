// ChallengeIssuer: stateless anti-spoofing challenges for the connectionless "getchallenge"
// exchange. A challenge is a keyed hash (SipHash-2-4 under a server secret) of the client's
// address, port and a time bucket, so only a client that receives packets at that address can
// present it. Pure functions of their arguments: the caller supplies the clock.
#pragma once

#include <cstdint>
#include <span>

namespace proto {

// SipHash-2-4 (Aumasson & Bernstein) of `data` under the 128-bit key (k0, k1), k0 holding key
// bytes 0..7 little-endian.
uint64_t SipHash24(uint64_t k0, uint64_t k1, std::span<const uint8_t> data);

// Immutable after construction; safe to share between threads.
class ChallengeIssuer {
 public:
  // Challenges are valid from issue for at least kBucketSeconds, at most 2 * kBucketSeconds.
  static constexpr uint64_t kBucketSeconds = 15;

  // The secret must come from a random source at server start (e.g. std::random_device);
  // challenges do not survive a restart, clients simply ask again.
  ChallengeIssuer(uint64_t secret_k0, uint64_t secret_k1) : k0_(secret_k0), k1_(secret_k1) {}

  // addr is the IPv4 address in host order; pass port 0 to bind to the address only.
  uint32_t Issue(uint32_t addr, uint16_t port, uint64_t now_s) const;
  // True if `challenge` was issued for (addr, port) in the current or the previous bucket.
  bool Verify(uint32_t challenge, uint32_t addr, uint16_t port, uint64_t now_s) const;

 private:
  uint32_t ForBucket(uint32_t addr, uint16_t port, uint64_t bucket) const;
  uint64_t k0_, k1_;
};

}  // namespace proto
