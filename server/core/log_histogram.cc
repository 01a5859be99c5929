// LogHistogram: bucket arithmetic and percentile walk.
#include "server/core/log_histogram.h"

#include <algorithm>
#include <cmath>

namespace core {

namespace {
const double kLogGrowth = std::log(LogHistogram::kGrowth);
}

void LogHistogram::Add(double value_us) {
  if (!(value_us >= 0)) value_us = 0;  // NaN or a clock hiccup: count as zero
  int b = 0;
  if (value_us > kMinUs) {
    b = static_cast<int>(std::log(value_us / kMinUs) / kLogGrowth);
    b = std::min(b, kBuckets - 1);
  }
  ++counts_[b];
  ++count_;
  sum_us_ += value_us;
  max_us_ = std::max(max_us_, value_us);
}

void LogHistogram::Merge(const LogHistogram& other) {
  for (int b = 0; b < kBuckets; ++b) counts_[b] += other.counts_[b];
  count_ += other.count_;
  sum_us_ += other.sum_us_;
  max_us_ = std::max(max_us_, other.max_us_);
}

void LogHistogram::Clear() { *this = LogHistogram(); }

double LogHistogram::Percentile(double q) const {
  if (count_ == 0) return 0;
  q = std::clamp(q, 0.0, 1.0);
  // The rank of the sample we want, 1-based: the smallest r with r >= q * count.
  const uint64_t rank = std::max<uint64_t>(1, static_cast<uint64_t>(std::ceil(q * static_cast<double>(count_))));
  uint64_t seen = 0;
  for (int b = 0; b < kBuckets; ++b) {
    seen += counts_[b];
    if (seen >= rank) {
      if (b == 0) return std::min(max_us_, kMinUs);
      if (b == kBuckets - 1) return max_us_;  // the overflow bucket has no upper edge
      const double mid = kMinUs * std::pow(kGrowth, b + 0.5);
      return std::min(mid, max_us_);  // never report more than the largest sample
    }
  }
  return max_us_;
}

uint64_t LogHistogram::CountAtMost(double value_us) const {
  uint64_t n = 0;
  // Bucket b holds [kMinUs * g^b, kMinUs * g^(b+1)); bucket 0 also holds everything below.
  for (int b = 0; b < kBuckets - 1; ++b) {
    if (kMinUs * std::pow(kGrowth, b + 1) > value_us) break;
    n += counts_[b];
  }
  return n;
}

}  // namespace core
