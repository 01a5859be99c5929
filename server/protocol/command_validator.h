// Server-side input policing as pure helpers (the caller supplies the clock): CommandValidator
// decides per UserCmd whether to apply it, and RateWindow decides when a client that
// keeps sending invalid packets is kicked. Policy and numbers: docs/protocol.md, "Validation".
#pragma once

#include <cstdint>
#include <vector>

#include "server/protocol/delay_credit_bucket.h"
#include "server/protocol/messages.h"

namespace proto {

enum class CommandVerdict : uint8_t {
  kAccept,     // apply it to the world; it is now the last accepted command
  kDuplicate,  // already accepted (a redundant copy or a late packet): ignore silently
  kReject,     // drop and count as invalid input
};

enum class CommandReject : uint8_t {
  kNone,
  kBackwards,        // sequence more than duplicate_window below the last accepted one
  kFarAhead,         // sequence more than max_ahead above the last accepted one
  kSpeedHack,        // more command time than real time (plus slack and burst) allows
  kTooManyCommands,  // more commands per second than max_commands_per_s (plus burst)
};

struct CommandCheck {
  CommandVerdict verdict = CommandVerdict::kAccept;
  CommandReject reason = CommandReject::kNone;
};

struct CommandLimits {
  uint32_t duplicate_window = 64;      // sequences this close below last accepted: duplicates
  uint32_t max_ahead = 256;            // largest jump forward (commands lost in between)
  uint32_t burst_ms = 1000;            // command-time bucket capacity
  uint32_t clock_slack_permille = 50;  // refill at 1.05 command-ms per real ms
  uint32_t max_commands_per_s = 250;   // command-count bucket refill rate
  uint32_t burst_commands = 250;       // command-count bucket capacity
  // Delay credit of both buckets (DelayCreditBucket): a silence of the client (nothing judged for
  // at least min_silence_ms) banks the refill of up to max_delay_ms of real time beyond the burst,
  // usable for delay_credit_hold_ms.
  uint32_t min_silence_ms = 100;
  uint32_t max_delay_ms = 4000;
  uint32_t delay_credit_hold_ms = 1000;
};

// One per connected client, owned by the worker thread of that client. Not thread-safe.
// Feed a CommandPacket's commands oldest first (cmds[count-1] .. cmds[0]) and apply the accepted
// ones in that order. Both buckets start full. The clock is the server's receive time: a backlog
// that arrives at once after a silence (delayed in the network or the kernel, or waiting for a
// stalled server) is paid for by the delay credit the silence banked, so it costs the client
// nothing; command time beyond real time over a longer stretch still empties the buckets.
class CommandValidator {
 public:
  // last_accepted_sequence: the identity's newest applied command (JoinAccept / Welcome).
  CommandValidator(uint32_t last_accepted_sequence, uint64_t now_ms, CommandLimits limits = {});

  // Judges one command that already passed Decode/ValidateUserCmd. now_ms must not decrease
  // (a smaller value is treated as no time passing). Only kAccept changes the sequence and
  // spends from the buckets.
  CommandCheck Check(const UserCmd& cmd, uint64_t now_ms);

  uint32_t last_accepted_sequence() const { return last_sequence_; }

 private:
  CommandLimits limits_;
  uint32_t last_sequence_;
  DelayCreditBucket time_us_;      // command time available, microseconds
  DelayCreditBucket count_milli_;  // commands available, in thousandths
};

// Counts one client's events of a kind and says when `max` of them fall within window_ms:
// invalid packets (decode errors, rejected commands; the client is then kicked) and chat lines
// (the client is then silenced, QuakeWorld's flood protection). Not thread-safe.
class RateWindow {
 public:
  // max >= 1.
  explicit RateWindow(uint32_t max = 10, uint64_t window_ms = 10000);

  // Records one event at now_ms; true when it is the max-th within window_ms.
  bool Record(uint64_t now_ms);
  uint64_t total() const { return total_; }

 private:
  uint64_t window_ms_;
  std::vector<uint64_t> recent_ms_;  // ring of the last max record times
  size_t next_ = 0;
  uint64_t total_ = 0;
};

}  // namespace proto
