// DelayCreditBucket: a token bucket that does not punish delay. The CommandValidator keeps two
// (command time and command count); the rule and its numbers are in docs/protocol.md, 7.2.
#pragma once

#include <cstdint>

namespace proto {

struct BucketShape {
  int64_t capacity = 0;          // tokens held in ordinary play (the burst allowance)
  int64_t refill_per_ms = 0;     // tokens added per real millisecond
  int64_t max_delay_credit = 0;  // most tokens one silence can bank beyond capacity
  uint64_t min_silence_ms = 0;   // shorter refill intervals bank nothing (jitter: the bucket's job)
  uint64_t credit_hold_ms = 0;   // banked credit is usable for this long after it was banked
};

// An ordinary token bucket (full at `capacity`, refilled at `refill_per_ms`) plus delay credit.
// After a silence (no Refill for at least min_silence_ms), the refill that would overflow a full
// bucket is not thrown away: it is banked as delay credit (at most max_delay_credit) and stays
// usable for credit_hold_ms. That is the real time which passed while the caller's requests were
// held up somewhere (network, kernel queue, a stalled server), and the backlog that arrives at
// once after the silence covers exactly that time. Between shorter intervals the bucket behaves
// as an ordinary one, overflow lost. Credit is spent before ordinary tokens. A refill banks its
// overflow only if that is more than the credit left (and then restarts the hold), so credit
// never adds up over many silences: at any moment the caller can spend at most
// capacity + max_delay_credit beyond the refill of the time to come.
// Invariant: 0 <= tokens <= capacity, 0 <= credit <= max_delay_credit.
//
// Pure: the caller supplies the clock. Not thread-safe (one owner).
class DelayCreditBucket {
 public:
  // Starts full, with no credit, at now_ms.
  DelayCreditBucket(const BucketShape& shape, uint64_t now_ms);

  // Adds the tokens of the real time since the last call (or construction). A now_ms that is not
  // later than the last one adds nothing: a clock going backwards refills nothing.
  void Refill(uint64_t now_ms);

  // True if credit plus ordinary tokens cover `amount`.
  bool Has(int64_t amount) const { return credit_ + tokens_ >= amount; }
  // Spends `amount`, credit first. Requires Has(amount) (AS_CHECK).
  void Take(int64_t amount);

  int64_t tokens() const { return tokens_; }
  int64_t credit() const { return credit_; }

 private:
  BucketShape shape_;
  uint64_t last_refill_ms_;
  int64_t tokens_;
  int64_t credit_ = 0;
  uint64_t credit_expiry_ms_ = 0;
};

}  // namespace proto
