// LogHistogram: a log-bucketed histogram of durations in microseconds with a fixed relative error (~1%), so
// percentiles of millions of samples cost no sorting and histograms merge by adding counts.
#pragma once

#include <array>
#include <cstdint>

namespace core {

// Buckets grow by kGrowth: bucket b holds values in [kMinUs * g^b, kMinUs * g^(b+1)). A
// percentile reports the bucket's geometric middle, within ~1% of any value in it. Values below
// kMinUs fall in bucket 0, above the top in the last bucket (max() stays exact either way).
// Not thread-safe: one per thread, merged on one thread.
class LogHistogram {
 public:
  static constexpr double kGrowth = 1.02;
  static constexpr double kMinUs = 1.0;    // 1 microsecond
  static constexpr int kBuckets = 1024;    // up to ~1.0e6 s: every duration that matters

  void Add(double value_us);
  void Merge(const LogHistogram& other);
  void Clear();

  uint64_t count() const { return count_; }
  double mean_us() const { return count_ ? sum_us_ / static_cast<double>(count_) : 0; }
  double max_us() const { return max_us_; }
  double sum_us() const { return sum_us_; }
  // Samples in buckets that lie wholly at or below value_us: a cumulative count for a
  // Prometheus bucket edge, exact to the 2% bucket width (a sample within 2% below the edge may
  // be counted in the next edge up).
  uint64_t CountAtMost(double value_us) const;
  // The value below which a fraction q (0..1) of the samples lie; 0 when empty.
  double Percentile(double q) const;

 private:
  std::array<uint64_t, kBuckets> counts_{};
  uint64_t count_ = 0;
  double sum_us_ = 0;
  double max_us_ = 0;
};

}  // namespace core
