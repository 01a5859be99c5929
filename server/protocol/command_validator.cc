// Sequence-window and rate checks for incoming commands, and the invalid-input kick rule.
#include "server/protocol/command_validator.h"

#include <algorithm>

#include "server/core/check.h"

namespace proto {

CommandValidator::CommandValidator(uint32_t last_accepted_sequence, uint64_t now_ms,
                                   CommandLimits limits)
    : limits_(limits),
      last_sequence_(last_accepted_sequence),
      last_refill_ms_(now_ms),
      time_tokens_us_(static_cast<int64_t>(limits.burst_ms) * 1000),
      count_tokens_milli_(static_cast<int64_t>(limits.burst_commands) * 1000) {}

void CommandValidator::Refill(uint64_t now_ms) {
  if (now_ms <= last_refill_ms_) return;
  // Cap the elapsed time so the products below cannot overflow; a full bucket is reached long
  // before an hour anyway.
  const int64_t elapsed_ms =
      static_cast<int64_t>(std::min<uint64_t>(now_ms - last_refill_ms_, 3'600'000));
  last_refill_ms_ = now_ms;
  const int64_t time_cap = static_cast<int64_t>(limits_.burst_ms) * 1000;
  const int64_t count_cap = static_cast<int64_t>(limits_.burst_commands) * 1000;
  time_tokens_us_ =
      std::min(time_cap, time_tokens_us_ + elapsed_ms * (1000 + limits_.clock_slack_permille));
  count_tokens_milli_ =
      std::min(count_cap, count_tokens_milli_ + elapsed_ms * limits_.max_commands_per_s);
}

CommandCheck CommandValidator::Check(const UserCmd& cmd, uint64_t now_ms) {
  Refill(now_ms);
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
  if (time_tokens_us_ < cost_us) return {CommandVerdict::kReject, CommandReject::kSpeedHack};
  if (count_tokens_milli_ < 1000) {
    return {CommandVerdict::kReject, CommandReject::kTooManyCommands};
  }
  time_tokens_us_ -= cost_us;
  count_tokens_milli_ -= 1000;
  last_sequence_ = cmd.sequence;
  return {CommandVerdict::kAccept, CommandReject::kNone};
}

InvalidInputTracker::InvalidInputTracker(uint32_t max_invalid, uint64_t window_ms)
    : window_ms_(window_ms) {
  AS_CHECK(max_invalid >= 1, "max_invalid must be at least 1");
  recent_ms_.assign(max_invalid, 0);
}

bool InvalidInputTracker::Record(uint64_t now_ms) {
  ++total_;
  recent_ms_[next_] = now_ms;
  next_ = (next_ + 1) % recent_ms_.size();
  // After this record, recent_ms_[next_] is the oldest of the last max_invalid records.
  if (total_ < recent_ms_.size()) return false;
  const uint64_t oldest = recent_ms_[next_];
  return now_ms < oldest + window_ms_;
}

}  // namespace proto
