// LogHistogram: percentiles within the promised relative error, merging, edge cases.
#include "server/core/log_histogram.h"

#include <catch2/catch.hpp>

#include <cmath>

using core::LogHistogram;

TEST_CASE("percentiles of a uniform spread are within 1% of the exact ranks") {
  LogHistogram h;
  for (int v = 1; v <= 100000; ++v) h.Add(v);
  REQUIRE(h.count() == 100000);
  for (double q : {0.01, 0.5, 0.9, 0.99, 0.999}) {
    const double exact = q * 100000;
    CHECK(std::fabs(h.Percentile(q) - exact) / exact < 0.011);
  }
  CHECK(h.max_us() == 100000);
  CHECK(h.mean_us() == Approx(50000.5));
}

TEST_CASE("merging two histograms equals adding every sample to one") {
  LogHistogram a, b, both;
  for (int v = 1; v <= 5000; ++v) {
    a.Add(v * 3.0);
    both.Add(v * 3.0);
    b.Add(v * 50.0);
    both.Add(v * 50.0);
  }
  a.Merge(b);
  CHECK(a.count() == both.count());
  CHECK(a.max_us() == both.max_us());
  for (double q : {0.1, 0.5, 0.95}) CHECK(a.Percentile(q) == both.Percentile(q));
}

TEST_CASE("an empty histogram reports zeros, and tiny, huge and bad values stay bounded") {
  LogHistogram h;
  CHECK(h.Percentile(0.5) == 0);
  CHECK(h.mean_us() == 0);
  h.Add(0.2);
  CHECK(h.Percentile(0.5) <= 1.0);
  h.Add(-5);  // a clock hiccup counts as zero
  h.Add(NAN);
  h.Add(1e15);  // beyond the last bucket: reported as the exact max
  CHECK(h.count() == 4);
  CHECK(h.Percentile(1.0) == 1e15);
  h.Clear();
  CHECK(h.count() == 0);
}

TEST_CASE("CountAtMost gives cumulative counts at bucket edges, within the bucket width") {
  LogHistogram h;
  for (double v : {0.5, 10.0, 100.0, 1000.0, 1000.0, 50000.0}) h.Add(v);
  CHECK(h.CountAtMost(0.1) == 0);
  CHECK(h.CountAtMost(1.03) == 1);      // below kMinUs falls in bucket 0
  CHECK(h.CountAtMost(10.5) == 2);
  CHECK(h.CountAtMost(1030.0) == 5);
  CHECK(h.CountAtMost(980.0) == 3);
  CHECK(h.CountAtMost(1e9) == 6);
  CHECK(h.sum_us() == Approx(52110.5));
}
