// Tests for SipHash-2-4 (reference vectors) and the ChallengeIssuer's address/time binding.
#include "server/protocol/challenge.h"

#include <catch2/catch.hpp>
#include <vector>

namespace proto {
namespace {

constexpr uint64_t kK0 = 0x0706050403020100ULL, kK1 = 0x0F0E0D0C0B0A0908ULL;

std::vector<uint8_t> Counting(size_t n) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(i);
  return v;
}

TEST_CASE("SipHash24 matches the reference vectors", "[challenge]") {
  // Key 00..0f, message 00..(n-1): vectors from the SipHash paper (checked with openssl mac).
  CHECK(SipHash24(kK0, kK1, Counting(0)) == 0x726fdb47dd0e0e31ULL);
  CHECK(SipHash24(kK0, kK1, Counting(15)) == 0xa129ca6149be45e5ULL);
  CHECK(SipHash24(kK0, kK1, Counting(63)) == 0x958a324ceb064572ULL);
}

TEST_CASE("a challenge verifies for its own address within its lifetime", "[challenge]") {
  ChallengeIssuer issuer(0x1234, 0x5678);
  const uint32_t addr = 0x7F000001;
  const uint64_t now = 1'000'000;
  uint32_t c = issuer.Issue(addr, 27015, now);
  CHECK(issuer.Verify(c, addr, 27015, now));
  // Valid for at least one bucket after issue, whatever the phase within the bucket.
  CHECK(issuer.Verify(c, addr, 27015, now + ChallengeIssuer::kBucketSeconds));
  // Expired two buckets later.
  CHECK_FALSE(issuer.Verify(c, addr, 27015, now + 2 * ChallengeIssuer::kBucketSeconds));
  // Not valid before it was issued.
  CHECK_FALSE(issuer.Verify(c, addr, 27015, now - ChallengeIssuer::kBucketSeconds));
}

TEST_CASE("a challenge fails for other addresses, ports and secrets", "[challenge]") {
  ChallengeIssuer issuer(0x1234, 0x5678);
  ChallengeIssuer other(0x1234, 0x5679);
  const uint64_t now = 777;
  uint32_t c = issuer.Issue(0x0A000001, 5000, now);
  CHECK_FALSE(issuer.Verify(c, 0x0A000002, 5000, now));
  CHECK_FALSE(issuer.Verify(c, 0x0A000001, 5001, now));
  CHECK_FALSE(other.Verify(c, 0x0A000001, 5000, now));
  // Over many addresses, no collisions with the issued value (32-bit space).
  int accepted = 0;
  for (uint32_t a = 1; a <= 100000; ++a) accepted += issuer.Verify(c, 0x0B000000 + a, 5000, now);
  CHECK(accepted == 0);
}

TEST_CASE("challenges are deterministic and bucket-bound", "[challenge]") {
  ChallengeIssuer issuer(42, 43);
  uint64_t bucket_start = 100 * ChallengeIssuer::kBucketSeconds;
  CHECK(issuer.Issue(1, 0, bucket_start) ==
        issuer.Issue(1, 0, bucket_start + ChallengeIssuer::kBucketSeconds - 1));
  CHECK(issuer.Issue(1, 0, bucket_start) !=
        issuer.Issue(1, 0, bucket_start + ChallengeIssuer::kBucketSeconds));
  // At time 0 there is no previous bucket to accept.
  CHECK(issuer.Verify(issuer.Issue(1, 0, 0), 1, 0, 0));
}

}  // namespace
}  // namespace proto
