// LogHistogram: bucket arithmetic and quantile walk.
#include "server/sv/log_histogram.h"

#include <algorithm>
#include <cmath>

namespace sv {

namespace {
const double kLogRatio = std::log(LogHistogram::kRatio);

void StoreRelaxed(std::atomic<uint64_t>& a, uint64_t v) { a.store(v, std::memory_order_relaxed); }
uint64_t LoadRelaxed(const std::atomic<uint64_t>& a) { return a.load(std::memory_order_relaxed); }
}  // namespace

int LogHistogram::BucketOf(uint64_t ns) {
  if (ns <= kMinNs) return 0;
  const int b = static_cast<int>(std::log(static_cast<double>(ns) / kMinNs) / kLogRatio);
  return std::clamp(b, 0, kBuckets - 1);
}

double LogHistogram::BucketMidNs(int bucket) {
  return kMinNs * std::pow(kRatio, bucket + 0.5);
}

void LogHistogram::Record(uint64_t ns) {
  // Single writer: load + store keeps each field race-free without locked instructions.
  auto& c = counts_[BucketOf(ns)];
  StoreRelaxed(c, LoadRelaxed(c) + 1);
  StoreRelaxed(count_, LoadRelaxed(count_) + 1);
  StoreRelaxed(sum_ns_, LoadRelaxed(sum_ns_) + ns);
  if (ns > LoadRelaxed(max_ns_)) StoreRelaxed(max_ns_, ns);
  if (ns < LoadRelaxed(min_ns_)) StoreRelaxed(min_ns_, ns);
}

double LogHistogram::QuantileMs(double q) const {
  uint64_t total = 0;
  for (const auto& c : counts_) total += LoadRelaxed(c);
  if (total == 0) return 0;
  // Rank of the q-quantile, 1-based (nearest-rank definition).
  const uint64_t rank = std::max<uint64_t>(1, static_cast<uint64_t>(std::ceil(q * total)));
  uint64_t seen = 0;
  for (int b = 0; b < kBuckets; ++b) {
    seen += LoadRelaxed(counts_[b]);
    if (seen >= rank) {
      const double lo = static_cast<double>(LoadRelaxed(min_ns_));
      const double hi = static_cast<double>(LoadRelaxed(max_ns_));
      return std::clamp(BucketMidNs(b), std::min(lo, hi), hi) / 1e6;
    }
  }
  return static_cast<double>(LoadRelaxed(max_ns_)) / 1e6;
}

LogHistogram::Summary LogHistogram::Summarize() const {
  Summary s;
  s.count = LoadRelaxed(count_);
  if (s.count == 0) return s;
  s.mean_ms = static_cast<double>(LoadRelaxed(sum_ns_)) / static_cast<double>(s.count) / 1e6;
  s.p50_ms = QuantileMs(0.50);
  s.p99_ms = QuantileMs(0.99);
  s.max_ms = static_cast<double>(LoadRelaxed(max_ns_)) / 1e6;
  return s;
}

}  // namespace sv
