// The start-up replay check's outcome (Durability::Open, docs/recovery.md "The replay check").
#pragma once

#include <cstdint>
#include <string>

namespace durability {

// The replay check: does this build replay the log to the state the writing server had? The two
// backups are the live state after their ticks T1 < T2, and the log after T1 is kept (segments
// are removed only up to the older backup), so the older backup with ticks T1 + 1 .. T2 applied
// through ApplyTick must hash as the newer one, which recovery loaded. Another hash means this
// binary does not reproduce the live game (a build that rounds floats otherwise, or a
// nondeterminism bug), and the ticks it replayed after T2 may differ from what clients were shown.
struct ReplayCheck {
  enum class Outcome {
    kOff,      // not asked for (DurabilityOptions::make_check_world empty)
    kNotRun,   // nothing to compare: detail says why (one backup, the older does not verify, ...)
    kMatch,    // the older backup replayed to the newer one's hash
    kDiffers,  // it did not: detail says how
  };
  Outcome outcome = Outcome::kOff;
  std::string detail;
  // kNotRun because the log after the older backup did not verify: recovery could not fall back
  // to the older backup if the newer one went bad. (An older backup that does not verify is
  // usually the one a checkpoint was being written into at a crash, which is normal.)
  bool fallback_damaged = false;
  uint64_t from_tick = 0;      // T1, the older backup's log tick
  uint64_t to_tick = 0;        // T2, the loaded backup's
  uint64_t replayed_hash = 0;  // World::StateHash of the older backup replayed to T2
  uint64_t backup_hash = 0;    // of the newer backup as loaded
  double duration_ms = 0;      // the whole check
  // It ran on one of the replay threads while recovery replayed on the others (Durability::Open:
  // a check of DurabilityOptions::check_beside_min_span_ms or more), so duration_ms overlaps
  // recovery's time rather than adding to it; false if it ran after recovery: a shorter check, a
  // single replay thread, or recovery did not load the backup it tried first.
  bool beside_recovery = false;
};
// "off", "not_run", "match", "differs".
const char* ReplayCheckName(ReplayCheck::Outcome outcome);

}  // namespace durability
