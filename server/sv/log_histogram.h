// LogHistogram: a fixed-relative-error histogram of durations (HdrHistogram's idea, log buckets):
// recording is O(1), quantiles need no sorting, and every quantile is within ~1% of the truth.
// One writer thread; any thread may read at the same time (relaxed atomics; a reader may see a
// record half-applied across fields, which only blurs a live report by one sample).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>

namespace sv {

class LogHistogram {
 public:
  // Buckets grow by kRatio from kMinNs; values below kMinNs land in bucket 0, above the range
  // in the last bucket (the exact max is kept apart).
  static constexpr double kMinNs = 1000.0;  // 1 microsecond
  static constexpr double kRatio = 1.02;    // bucket width 2%: midpoint error <= 1%
  static constexpr int kBuckets = 1100;     // 1 us * 1.02^1100 ~ 2.8e9 s

  void Record(uint64_t ns);

  struct Summary {
    uint64_t count = 0;
    double mean_ms = 0, p50_ms = 0, p99_ms = 0, max_ms = 0;
  };
  Summary Summarize() const;
  // The value at quantile q in [0, 1], in ms (0 if empty).
  double QuantileMs(double q) const;

 private:
  static int BucketOf(uint64_t ns);
  static double BucketMidNs(int bucket);

  std::array<std::atomic<uint64_t>, kBuckets> counts_{};
  std::atomic<uint64_t> count_{0};
  std::atomic<uint64_t> sum_ns_{0};
  std::atomic<uint64_t> max_ns_{0};
  std::atomic<uint64_t> min_ns_{UINT64_MAX};
};

}  // namespace sv
