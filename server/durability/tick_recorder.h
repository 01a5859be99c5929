// TickRecorder: collects the commands executed in a request phase by several worker threads, in
// a serial order that reproduces the parallel execution. Each command takes a global execution
// sequence number while its region locks are still held: two commands that conflicted shared a
// lock, so their numbers follow the order they really ran; commands that ran at the same time
// touched disjoint regions and commute. Per-thread buffers (no lock on the hot path, one atomic
// increment per command); the master merges them by sequence when the request phase is over.
//
// The lock order. With more than one thread, Record also learns the lock hand-offs: every lock
// (a small integer id below lock_count: an areanode leaf, or 0 for the global lock) keeps the
// sequence number of the last command that held it in this phase. A command reads the stamps of
// the locks it holds and replaces them with its own, so it learns the commands it came after
// through each lock; MergeInto turns that into the record's lock order (TickRecord::lock_order,
// tick_record.h), which parallel replay follows instead of working the conflicts out again.
//
// Threading: Record(t, ...) only from worker t (0 <= t < threads), during the request phase,
// holding every lock it names; a lock's stamp is only touched by the thread holding that lock.
// MergeInto from the master when no Record is running (after the phase's barrier).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "server/durability/tick_record.h"
#include "server/game/user_cmd.h"

namespace durability {

class TickRecorder {
 public:
  // threads >= 1; lock_count >= 1. lock_depth: the areanode depth whose leaves the lock ids are,
  // or 0 if they are not leaves (the global lock); it goes into every record's lock order
  // (TickRecord::lock_depth), so that replay follows it only on a tree at least as fine.
  TickRecorder(int threads, int lock_count, int lock_depth);
  TickRecorder(const TickRecorder&) = delete;
  TickRecorder& operator=(const TickRecorder&) = delete;

  int threads() const { return threads_; }

  // Records a command that was applied, called by worker `thread` while it STILL HOLDS the
  // command's region locks (or the global lock), whose ids are `held_locks`, each below
  // lock_count. With one thread they may be empty; with more, a lock left out is a conflict the
  // lock order does not know, and a replay that follows it may go wrong. Returns the sequence
  // number taken.
  uint64_t Record(int thread, game::EntityId player, const game::UserCmd& cmd,
                  std::span<const int> held_locks);

  // Moves every thread's commands of this phase into record->commands (replacing them), sorted
  // by execution sequence, with their lock order if there is more than one thread; empties the
  // buffers and clears the stamps.
  void MergeInto(TickRecord* record);

 private:
  struct alignas(64) Buffer {  // one cache line apart: threads never share a line
    std::vector<TickCommand> commands;  // first_after indexes after_seq
    std::vector<uint64_t> after_seq;    // the sequence numbers each command came after
  };
  const int threads_;
  const uint8_t lock_depth_;
  std::unique_ptr<Buffer[]> buffers_;
  std::vector<uint64_t> stamps_;  // by lock id: the last holder's sequence number (0: none)
  std::vector<uint64_t> merged_after_seq_;  // MergeInto's scratch: every buffer's after_seq
  alignas(64) std::atomic<uint64_t> next_seq_{1};
};

}  // namespace durability
