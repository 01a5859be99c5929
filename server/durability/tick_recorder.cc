// TickRecorder: per-thread command buffers merged by execution sequence, and the lock stamps that
// give the schedule (contract in the header).
#include "server/durability/tick_recorder.h"

#include <algorithm>

#include "server/core/check.h"

namespace durability {

TickRecorder::TickRecorder(int threads, int lock_count)
    : threads_(threads),
      buffers_(std::make_unique<Buffer[]>(static_cast<size_t>(std::max(threads, 1)))),
      stamps_(static_cast<size_t>(std::max(lock_count, 1))) {
  AS_CHECK(threads >= 1 && threads <= kMaxScheduleWorkers, "recorder threads out of range");
  AS_CHECK(lock_count >= 1, "a recorder needs at least one lock id");
  for (int t = 0; t < threads; ++t) buffers_[t].waited.assign(static_cast<size_t>(threads), 0);
}

uint64_t TickRecorder::Record(int thread, game::EntityId player, const game::UserCmd& cmd,
                              std::span<const int> held_locks) {
  AS_CHECK(thread >= 0 && thread < threads(), "worker index out of range");
  const uint64_t seq = next_seq_.fetch_add(1, std::memory_order_relaxed);
  Buffer& b = buffers_[thread];
  TickCommand c{seq, player, cmd};
  c.worker = static_cast<uint8_t>(thread);
  c.first_wait = static_cast<uint32_t>(b.waits.size());
  const uint32_t done = static_cast<uint32_t>(b.commands.size()) + 1;  // this one included
  for (int lock : held_locks) {
    AS_CHECK(lock >= 0 && static_cast<size_t>(lock) < stamps_.size(), "lock id out of range");
    Stamp& s = stamps_[static_cast<size_t>(lock)];
    if (s.done != 0 && s.worker != thread && s.done > b.waited[s.worker]) {
      // A later lock of the same command may raise it again: keep one wait per worker.
      b.waited[s.worker] = s.done;
      auto it = std::find_if(b.waits.begin() + c.first_wait, b.waits.end(),
                             [&](const TickWait& w) { return w.worker == s.worker; });
      if (it != b.waits.end()) it->done = s.done;
      else b.waits.push_back({s.worker, s.done});
    }
    s = {static_cast<uint8_t>(thread), done};
  }
  c.wait_count = static_cast<uint8_t>(b.waits.size() - c.first_wait);
  b.commands.push_back(c);
  return seq;
}

void TickRecorder::MergeInto(TickRecord* record) {
  std::vector<TickCommand>& out = record->commands;
  out.clear();
  record->waits.clear();
  for (int t = 0; t < threads_; ++t) out.insert(out.end(), buffers_[t].commands.begin(), buffers_[t].commands.end());
  // Each buffer is already ascending (one thread takes increasing numbers); a plain sort of the
  // concatenation, once per tick, is simpler than a k-way merge.
  std::sort(out.begin(), out.end(),
            [](const TickCommand& a, const TickCommand& b) { return a.exec_seq < b.exec_seq; });
  record->scheduled = threads_ > 1;
  for (TickCommand& c : out) {
    if (record->scheduled) {
      const std::vector<TickWait>& mine = buffers_[c.worker].waits;
      const uint32_t first = static_cast<uint32_t>(record->waits.size());
      record->waits.insert(record->waits.end(), mine.begin() + c.first_wait,
                           mine.begin() + c.first_wait + c.wait_count);
      c.first_wait = first;
    } else {
      c.worker = c.wait_count = 0;
      c.first_wait = 0;
    }
  }
  for (int t = 0; t < threads_; ++t) {
    buffers_[t].commands.clear();
    buffers_[t].waits.clear();
    std::fill(buffers_[t].waited.begin(), buffers_[t].waited.end(), 0);
  }
  std::fill(stamps_.begin(), stamps_.end(), Stamp{});
}

}  // namespace durability
