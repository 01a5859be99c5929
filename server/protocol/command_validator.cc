// Sequence-window and rate checks for incoming commands, and the invalid-input kick rule.
#include "server/protocol/command_validator.h"

#include "server/core/check.h"

namespace proto {

namespace {

// Command time in microseconds: refilled at (1000 + slack) us per real ms.
BucketShape TimeShape(const CommandLimits& l) {
  BucketShape b;
  b.capacity = static_cast<int64_t>(l.burst_ms) * 1000;
  b.refill_per_ms = 1000 + static_cast<int64_t>(l.clock_slack_permille);
  b.max_delay_credit = static_cast<int64_t>(l.max_delay_ms) * b.refill_per_ms;
  b.min_silence_ms = l.min_silence_ms;
  b.credit_hold_ms = l.delay_credit_hold_ms;
  return b;
}

// Commands in thousandths: max_commands_per_s thousandths per real ms.
BucketShape CountShape(const CommandLimits& l) {
  BucketShape b;
  b.capacity = static_cast<int64_t>(l.burst_commands) * 1000;
  b.refill_per_ms = l.max_commands_per_s;
  b.max_delay_credit = static_cast<int64_t>(l.max_delay_ms) * b.refill_per_ms;
  b.min_silence_ms = l.min_silence_ms;
  b.credit_hold_ms = l.delay_credit_hold_ms;
  return b;
}

}  // namespace

CommandValidator::CommandValidator(uint32_t last_accepted_sequence, uint64_t now_ms,
                                   CommandLimits limits)
    : limits_(limits),
      last_sequence_(last_accepted_sequence),
      time_us_(TimeShape(limits), now_ms),
      count_milli_(CountShape(limits), now_ms) {}

CommandCheck CommandValidator::Check(const UserCmd& cmd, uint64_t now_ms) {
  time_us_.Refill(now_ms);
  count_milli_.Refill(now_ms);
  if (cmd.sequence <= last_sequence_) {
    if (last_sequence_ - cmd.sequence < limits_.duplicate_window) {
      return {CommandVerdict::kDuplicate, CommandReject::kNone};
    }
    return {CommandVerdict::kReject, CommandReject::kBackwards};
  }
  if (cmd.sequence - last_sequence_ > limits_.max_ahead) {
    return {CommandVerdict::kReject, CommandReject::kFarAhead};
  }
  const int64_t cost_us = static_cast<int64_t>(cmd.duration_ms) * 1000;
  if (!time_us_.Has(cost_us)) return {CommandVerdict::kReject, CommandReject::kSpeedHack};
  if (!count_milli_.Has(1000)) return {CommandVerdict::kReject, CommandReject::kTooManyCommands};
  time_us_.Take(cost_us);
  count_milli_.Take(1000);
  last_sequence_ = cmd.sequence;
  return {CommandVerdict::kAccept, CommandReject::kNone};
}

RateWindow::RateWindow(uint32_t max, uint64_t window_ms)
    : window_ms_(window_ms) {
  AS_CHECK(max >= 1, "RateWindow: max must be at least 1");
  recent_ms_.assign(max, 0);
}

bool RateWindow::Record(uint64_t now_ms) {
  ++total_;
  recent_ms_[next_] = now_ms;
  next_ = (next_ + 1) % recent_ms_.size();
  // After this record, recent_ms_[next_] is the oldest of the last max records.
  if (total_ < recent_ms_.size()) return false;
  const uint64_t oldest = recent_ms_[next_];
  return now_ms < oldest + window_ms_;
}

}  // namespace proto
