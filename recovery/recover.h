// Recovery at start-up: load the newest backup whose header and image verify (falling back to
// the other one), then hand the caller the logged ticks after it, in order, so the game replays
// them through its live path. Running it again after an interruption is safe: the only write it
// makes is cutting a torn tail off the newest log segment.
//
// Integration (server start):
//   RecoveryReport r;  Recover({env, dir, n, size}, base, replay_fn, &r);
//   LogWriter::Open({.dir = dir, .next_tick = r.last_tick + 1, ...});
//   Checkpointer::Open({...}, base, r.last_tick);  // after replay
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "recovery/env.h"
#include "recovery/log_reader.h"
#include "server/core/status.h"

namespace recovery {

struct RecoverOptions {
  Env* env = Env::Posix();
  std::string dir;
  uint64_t object_count = 0;
  uint32_t object_size = 0;
  bool repair_tail = true;  // false: report a torn tail but leave the file alone
  // Only backups of this tick or earlier are candidates (aftershock-replay --from-tick); a newer
  // one is passed over with a note.
  uint64_t max_checkpoint_tick = UINT64_MAX;
  // Only records of this tick or earlier go to replay (the replay check stops at the newer
  // backup's tick). The whole log is still validated first, as always.
  uint64_t last_tick = UINT64_MAX;
};

struct RecoveryReport {
  bool from_checkpoint = false;  // false: no valid backup; state stays as the caller built it
  int backup_index = -1;         // which backup was loaded
  uint64_t checkpoint_tick = 0;  // state after load is the state after this tick (0: initial)
  uint64_t records_replayed = 0;
  uint64_t last_tick = 0;        // state after replay is the state after this tick
  bool truncated_tail = false;     // a torn log tail was cut (or found); notes say where
  std::vector<std::string> notes;  // backups that were skipped and why, the tail that was cut
  double restore_ms = 0;           // reading + verifying + copying the image
};

// Loads into base (object_count * object_size bytes) and calls replay(tick, payload) for each
// record after the checkpoint. With no valid backup, base is left untouched (the caller's initial
// state, tick 0) and the whole log is replayed; if the log does not start at tick 1 then, the
// result is Corruption. A damaged log (other than a torn tail) is Corruption before any replay.
core::Status Recover(const RecoverOptions& options, void* base, const RecordFn& replay,
                     RecoveryReport* report);

}  // namespace recovery
