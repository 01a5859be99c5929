// Token bucket with delay credit: refill, the overflow a silence banks, credit-first spending.
#include "server/protocol/delay_credit_bucket.h"

#include <algorithm>

#include "server/core/check.h"

namespace proto {

namespace {

// Elapsed time is capped so the products below cannot overflow; every bucket is full, and every
// credit at its cap, long before an hour of silence.
constexpr uint64_t kMaxElapsedMs = 3'600'000;

}  // namespace

DelayCreditBucket::DelayCreditBucket(const BucketShape& shape, uint64_t now_ms)
    : shape_(shape), last_refill_ms_(now_ms), tokens_(shape.capacity) {
  AS_CHECK(shape.capacity >= 0 && shape.refill_per_ms >= 0 && shape.max_delay_credit >= 0,
           "DelayCreditBucket: negative shape");
}

void DelayCreditBucket::Refill(uint64_t now_ms) {
  if (now_ms <= last_refill_ms_) return;
  const int64_t elapsed_ms =
      static_cast<int64_t>(std::min<uint64_t>(now_ms - last_refill_ms_, kMaxElapsedMs));
  last_refill_ms_ = now_ms;
  if (credit_ > 0 && now_ms >= credit_expiry_ms_) credit_ = 0;
  const int64_t added = elapsed_ms * shape_.refill_per_ms;
  const int64_t into_bucket = std::min(added, shape_.capacity - tokens_);
  tokens_ += into_bucket;
  // After a silence, what a full bucket would throw away is the real time the backlog covers.
  const int64_t overflow = std::min(added - into_bucket, shape_.max_delay_credit);
  if (static_cast<uint64_t>(elapsed_ms) >= shape_.min_silence_ms && overflow > credit_) {
    credit_ = overflow;
    credit_expiry_ms_ = now_ms + shape_.credit_hold_ms;
  }
  AS_CHECK(tokens_ <= shape_.capacity && credit_ <= shape_.max_delay_credit,
           "DelayCreditBucket::Refill: over capacity");
}

void DelayCreditBucket::Take(int64_t amount) {
  AS_CHECK(amount >= 0 && Has(amount), "DelayCreditBucket::Take: more than the bucket holds");
  const int64_t from_credit = std::min(amount, credit_);
  credit_ -= from_credit;
  tokens_ -= amount - from_credit;
}

}  // namespace proto
