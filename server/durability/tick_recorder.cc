// TickRecorder: per-thread command buffers merged by execution sequence, and the lock stamps that
// give the lock order (contract in the header).
#include "server/durability/tick_recorder.h"

#include <algorithm>

#include "server/areanode/areanode_tree.h"
#include "server/core/check.h"

namespace durability {

TickRecorder::TickRecorder(int threads, int lock_count, int lock_depth)
    : threads_(threads),
      lock_depth_(static_cast<uint8_t>(lock_depth)),
      buffers_(std::make_unique<Buffer[]>(static_cast<size_t>(std::max(threads, 1)))),
      stamps_(static_cast<size_t>(std::max(lock_count, 1)), 0) {
  AS_CHECK(threads >= 1, "a recorder needs at least one thread");
  AS_CHECK(lock_count >= 1, "a recorder needs at least one lock id");
  AS_CHECK(lock_depth >= 0 && lock_depth <= areanode::kMaxDepth, "lock depth out of range");
}

uint64_t TickRecorder::Record(int thread, game::EntityId player, const game::UserCmd& cmd,
                              std::span<const int> held_locks) {
  AS_CHECK(thread >= 0 && thread < threads(), "worker index out of range");
  const uint64_t seq = next_seq_.fetch_add(1, std::memory_order_relaxed);
  Buffer& b = buffers_[thread];
  TickCommand c{seq, player, cmd};
  c.first_after = static_cast<uint32_t>(b.after_seq.size());
  if (threads_ > 1) {
    for (int lock : held_locks) {
      AS_CHECK(lock >= 0 && static_cast<size_t>(lock) < stamps_.size(), "lock id out of range");
      uint64_t& stamp = stamps_[static_cast<size_t>(lock)];
      if (stamp != 0) b.after_seq.push_back(stamp);
      stamp = seq;
    }
    // Several locks may name the same command: each once.
    const auto first = b.after_seq.begin() + c.first_after;
    std::sort(first, b.after_seq.end());
    b.after_seq.erase(std::unique(first, b.after_seq.end()), b.after_seq.end());
  }
  c.after_count = static_cast<uint32_t>(b.after_seq.size() - c.first_after);
  b.commands.push_back(c);
  return seq;
}

void TickRecorder::MergeInto(TickRecord* record) {
  std::vector<TickCommand>& out = record->commands;
  out.clear();
  record->after.clear();
  // All buffers' dependencies in one vector, each command's range shifted to point into it.
  merged_after_seq_.clear();
  for (int t = 0; t < threads_; ++t) {
    const uint32_t base = static_cast<uint32_t>(merged_after_seq_.size());
    for (TickCommand c : buffers_[t].commands) {
      c.first_after += base;
      out.push_back(c);
    }
    merged_after_seq_.insert(merged_after_seq_.end(), buffers_[t].after_seq.begin(), buffers_[t].after_seq.end());
  }
  // Each buffer is already ascending (one thread takes increasing numbers); a plain sort of the
  // concatenation, once per tick, is simpler than a k-way merge.
  std::sort(out.begin(), out.end(),
            [](const TickCommand& a, const TickCommand& b) { return a.exec_seq < b.exec_seq; });
  record->lock_order = threads_ > 1;
  record->lock_depth = record->lock_order ? lock_depth_ : 0;
  for (TickCommand& c : out) {
    const uint32_t first = static_cast<uint32_t>(record->after.size());
    for (uint32_t k = 0; k < c.after_count; ++k) {
      // Every number taken in the phase is a recorded command of it (Record always records, and
      // the stamps are cleared below), so the merged order is out.front().exec_seq onwards.
      const uint64_t index = merged_after_seq_[c.first_after + k] - out.front().exec_seq;
      AS_CHECK(index < out.size() && out[index].exec_seq == merged_after_seq_[c.first_after + k],
               "a lock stamp outside the phase");
      record->after.push_back(static_cast<uint32_t>(index));  // ascending, as the numbers
    }
    c.first_after = first;
  }
  for (int t = 0; t < threads_; ++t) {
    buffers_[t].commands.clear();
    buffers_[t].after_seq.clear();
  }
  std::fill(stamps_.begin(), stamps_.end(), 0);
}

}  // namespace durability
