// SourceLimiter: a burst, then the refill rate, per source; a clock going back refills nothing.
#include <catch2/catch.hpp>

#include "server/protocol/source_limiter.h"

TEST_CASE("source limiter: burst, refill, and sources apart") {
  proto::SourceLimiter limiter(/*burst=*/4, /*per_second=*/2, /*slots=*/4096, /*seed=*/99);
  const uint32_t ip = 0x7F000001;
  int allowed = 0;
  for (int i = 0; i < 10; ++i) allowed += limiter.Allow(ip, 5000, 1000) ? 1 : 0;
  CHECK(allowed == 4);
  CHECK(limiter.Allow(ip, 5001, 1000));  // another source port: its own bucket (no collision here)
  CHECK(!limiter.Allow(ip, 5000, 1400));
  CHECK(limiter.Allow(ip, 5000, 1500));  // 0.5 s at 2/s: one token
  CHECK(!limiter.Allow(ip, 5000, 1500));
  CHECK(!limiter.Allow(ip, 5000, 500));  // the clock went back: nothing refilled
  CHECK(!limiter.Allow(ip, 5000, 1700));  // and nothing was refilled for the jump back either
  CHECK(limiter.Allow(ip, 5000, 2000));
}
