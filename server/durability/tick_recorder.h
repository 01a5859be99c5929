// TickRecorder: collects the commands executed in a request phase by several worker threads, in
// a serial order that reproduces the parallel execution. Each command takes a global execution
// sequence number while its region locks are still held: two commands that conflicted shared a
// lock, so their numbers follow the order they really ran; commands that ran at the same time
// touched disjoint regions and commute. Per-thread buffers (no lock on the hot path, one atomic
// increment per command); the master merges them by sequence when the request phase is over.
//
// Threading: Record(t, ...) only from worker t (0 <= t < threads), during the request phase;
// MergeInto from the master when no Record is running (after the phase's barrier).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "server/durability/tick_record.h"
#include "server/game/user_cmd.h"

namespace durability {

class TickRecorder {
 public:
  explicit TickRecorder(int threads);
  TickRecorder(const TickRecorder&) = delete;
  TickRecorder& operator=(const TickRecorder&) = delete;

  int threads() const { return threads_; }

  // Records a command that was applied, called by worker `thread` while it STILL HOLDS the
  // command's region locks (or the global lock). Returns the sequence number taken.
  uint64_t Record(int thread, game::EntityId player, const game::UserCmd& cmd);

  // Moves every thread's commands of this phase into record->commands (replacing them), sorted
  // by execution sequence, and empties the buffers.
  void MergeInto(TickRecord* record);

  // Sequence numbers taken so far (they never restart; a gap means nothing).

 private:
  struct alignas(64) Buffer {  // one cache line apart: threads never share a line
    std::vector<TickCommand> commands;
  };
  const int threads_;
  std::unique_ptr<Buffer[]> buffers_;
  alignas(64) std::atomic<uint64_t> next_seq_{1};
};

}  // namespace durability
