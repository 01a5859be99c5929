// Tests for DelayCreditBucket: ordinary refill and cap, the credit a silence banks, its cap, the
// shortest silence, the hold, and that credit never adds up over many silences.
#include "server/protocol/delay_credit_bucket.h"

#include <catch2/catch.hpp>

namespace proto {
namespace {

BucketShape Shape() {
  BucketShape s;
  s.capacity = 100;
  s.refill_per_ms = 1;
  s.max_delay_credit = 300;
  s.credit_hold_ms = 50;
  return s;
}

TEST_CASE("an ordinary bucket starts full, refills with time and never exceeds capacity", "[bucket]") {
  DelayCreditBucket b(Shape(), 1000);
  CHECK(b.tokens() == 100);
  CHECK(b.credit() == 0);
  b.Take(100);
  CHECK_FALSE(b.Has(1));
  b.Refill(1030);
  CHECK(b.tokens() == 30);
  CHECK(b.credit() == 0);  // nothing overflowed
  b.Refill(1200);
  CHECK(b.tokens() == 100);
  CHECK(b.credit() == 100);  // 170 refilled, 70 fit: 100 over the cap
}

TEST_CASE("a silence banks the refill a full bucket would lose, up to the cap", "[bucket]") {
  DelayCreditBucket b(Shape(), 0);
  b.Refill(200);  // full bucket, 200 ms of silence
  CHECK(b.credit() == 200);
  CHECK(b.Has(300));
  b.Take(250);  // the backlog: credit first, then tokens
  CHECK(b.credit() == 0);
  CHECK(b.tokens() == 50);

  DelayCreditBucket longer(Shape(), 0);
  longer.Refill(10'000);
  CHECK(longer.credit() == 300);  // max_delay_credit
  CHECK(longer.Has(400));
  CHECK_FALSE(longer.Has(401));
}

TEST_CASE("intervals shorter than min_silence_ms bank nothing", "[bucket]") {
  BucketShape shape = Shape();
  shape.min_silence_ms = 100;
  DelayCreditBucket b(shape, 0);
  for (uint64_t now = 50; now <= 1000; now += 50) b.Refill(now);  // full, overflow lost
  CHECK(b.credit() == 0);
  CHECK(b.tokens() == 100);
  b.Refill(1100);
  CHECK(b.credit() == 100);
  b.Take(30);
  b.Refill(1140);  // a short interval inside the hold leaves the credit alone
  CHECK(b.credit() == 70);
}

TEST_CASE("credit expires after the hold", "[bucket]") {
  DelayCreditBucket b(Shape(), 0);
  b.Refill(200);
  CHECK(b.credit() == 200);
  b.Refill(249);  // within the hold: 49 more ms overflow, less than the credit left
  CHECK(b.credit() == 200);
  b.Refill(251);  // the hold is over: only the last 2 ms overflow
  CHECK(b.credit() == 2);
  CHECK(b.tokens() == 100);
}

TEST_CASE("credit never adds up over many silences", "[bucket]") {
  DelayCreditBucket b(Shape(), 0);
  uint64_t now = 0;
  for (int i = 0; i < 100; ++i) {
    now += 40;  // silences shorter than the hold, bucket always full
    b.Refill(now);
    CHECK(b.credit() <= 40);
  }
  // A bigger silence replaces the credit; a smaller one leaves it (and its hold) alone.
  now += 200;
  b.Refill(now);
  CHECK(b.credit() == 200);
  b.Take(150);
  now += 30;
  b.Refill(now);
  CHECK(b.credit() == 50);  // 30 overflowed, less than the 50 left
}

TEST_CASE("a bucket whose clock goes backwards refills nothing", "[bucket]") {
  DelayCreditBucket b(Shape(), 1000);
  b.Take(100);
  b.Refill(900);
  CHECK(b.tokens() == 0);
  b.Refill(1010);
  CHECK(b.tokens() == 10);
}

}  // namespace
}  // namespace proto
