// SipHash-2-4 and the challenge issuer built on it.
#include "server/protocol/challenge.h"

#include <array>
#include <bit>

namespace proto {
namespace {

struct SipState {
  uint64_t v0, v1, v2, v3;
  void Round() {
    v0 += v1;
    v1 = std::rotl(v1, 13);
    v1 ^= v0;
    v0 = std::rotl(v0, 32);
    v2 += v3;
    v3 = std::rotl(v3, 16);
    v3 ^= v2;
    v0 += v3;
    v3 = std::rotl(v3, 21);
    v3 ^= v0;
    v2 += v1;
    v1 = std::rotl(v1, 17);
    v1 ^= v2;
    v2 = std::rotl(v2, 32);
  }
  void Absorb(uint64_t m) {
    v3 ^= m;
    Round();
    Round();
    v0 ^= m;
  }
};

uint64_t LoadLe(const uint8_t* p, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

}  // namespace

uint64_t SipHash24(uint64_t k0, uint64_t k1, std::span<const uint8_t> data) {
  SipState s{k0 ^ 0x736f6d6570736575ULL, k1 ^ 0x646f72616e646f6dULL, k0 ^ 0x6c7967656e657261ULL,
             k1 ^ 0x7465646279746573ULL};
  const size_t whole = data.size() / 8 * 8;
  for (size_t i = 0; i < whole; i += 8) s.Absorb(LoadLe(data.data() + i, 8));
  uint64_t last = LoadLe(data.data() + whole, data.size() - whole) |
                  (static_cast<uint64_t>(data.size() & 0xFF) << 56);
  s.Absorb(last);
  s.v2 ^= 0xFF;
  for (int i = 0; i < 4; ++i) s.Round();
  return s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
}

uint32_t ChallengeIssuer::ForBucket(uint32_t addr, uint16_t port, uint64_t bucket) const {
  std::array<uint8_t, 14> msg{};
  for (size_t i = 0; i < 4; ++i) msg[i] = static_cast<uint8_t>(addr >> (8 * i));
  for (size_t i = 0; i < 2; ++i) msg[4 + i] = static_cast<uint8_t>(port >> (8 * i));
  for (size_t i = 0; i < 8; ++i) msg[6 + i] = static_cast<uint8_t>(bucket >> (8 * i));
  return static_cast<uint32_t>(SipHash24(k0_, k1_, msg));
}

uint32_t ChallengeIssuer::Issue(uint32_t addr, uint16_t port, uint64_t now_s) const {
  return ForBucket(addr, port, now_s / kBucketSeconds);
}

bool ChallengeIssuer::Verify(uint32_t challenge, uint32_t addr, uint16_t port,
                             uint64_t now_s) const {
  const uint64_t bucket = now_s / kBucketSeconds;
  if (ForBucket(addr, port, bucket) == challenge) return true;
  return bucket > 0 && ForBucket(addr, port, bucket - 1) == challenge;
}

}  // namespace proto
