// TickRecorder: per-thread command buffers merged by execution sequence (contract in the header).
#include "server/durability/tick_recorder.h"

#include <algorithm>

#include "server/core/check.h"

namespace durability {

TickRecorder::TickRecorder(int threads)
    : threads_(threads),
      buffers_(std::make_unique<Buffer[]>(static_cast<size_t>(std::max(threads, 1)))) {
  AS_CHECK(threads >= 1, "a recorder needs at least one thread");
}

uint64_t TickRecorder::Record(int thread, game::EntityId player, const game::UserCmd& cmd) {
  AS_CHECK(thread >= 0 && thread < threads(), "worker index out of range");
  const uint64_t seq = next_seq_.fetch_add(1, std::memory_order_relaxed);
  buffers_[thread].commands.push_back(TickCommand{seq, player, cmd});
  return seq;
}

void TickRecorder::MergeInto(TickRecord* record) {
  std::vector<TickCommand>& out = record->commands;
  out.clear();
  for (int t = 0; t < threads_; ++t) {
    std::vector<TickCommand>& mine = buffers_[t].commands;
    out.insert(out.end(), mine.begin(), mine.end());
    mine.clear();
  }
  // Each buffer is already ascending (one thread takes increasing numbers); a plain sort of the
  // concatenation, once per tick, is simpler than a k-way merge.
  std::sort(out.begin(), out.end(),
            [](const TickCommand& a, const TickCommand& b) { return a.exec_seq < b.exec_seq; });
}

}  // namespace durability
