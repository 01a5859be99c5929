// Frame statistics: at the start of each world phase the master sums the closed frame's
// per-worker counters (requests per thread, leaf locking) into ServerStats.
#include <algorithm>
#include <cstdint>

#include "server/sv/server.h"

namespace sv {

void Server::SumFrameStats() {
  // Requests per thread per frame, over the threads that took part in the closed frame.
  uint32_t lo = UINT32_MAX, hi = 0;
  int in_frame = 0, locking_threads = 0;
  for (auto& w : workers_) {
    Worker::FrameCounters& c = w->frame_counters();
    if (!c.in_frame) continue;
    ++in_frame;
    AddRelaxed(stats_.rptf_samples, 1);
    AddRelaxed(stats_.rptf_sum, c.requests);
    AddRelaxed(stats_.rptf_sum_sq, static_cast<uint64_t>(c.requests) * c.requests);
    lo = std::min(lo, c.requests);
    hi = std::max(hi, c.requests);
    AddRelaxed(stats_.locked_commands, c.locked_commands);
    AddRelaxed(stats_.distinct_leaves, c.distinct_leaves);
    AddRelaxed(stats_.lock_retries, c.retries);
    if (c.locked_commands > 0) ++locking_threads;  // only locking schemes count them
  }
  if (in_frame >= 2) {
    AddRelaxed(stats_.rptf_spread_sum, hi - lo);
    AddRelaxed(stats_.rptf_spread_frames, 1);
  }
  // Leaf statistics: relocks and leaves shared by two or more threads in the frame.
  if (workers_[0]->locker() != nullptr) {
    const int leaves = workers_[0]->locker()->leaf_count();
    uint64_t acquisitions = 0, relocks = 0;
    int shared_leaves = 0;
    for (int l = 0; l < leaves; ++l) {
      uint64_t a = 0;
      int t = 0;
      for (auto& w : workers_) {
        const uint32_t n = w->locker()->frame_counts()[l];
        a += n;
        t += n > 0 ? 1 : 0;
      }
      acquisitions += a;
      relocks += a > 1 ? a - 1 : 0;
      shared_leaves += t >= 2 ? 1 : 0;
    }
    AddRelaxed(stats_.leaf_acquisitions, acquisitions);
    AddRelaxed(stats_.relocks, relocks);
    if (locking_threads >= 2) {
      AddRelaxed(stats_.shared_frames, 1);
      AddRelaxed(stats_.shared_leaves_milli_pct,
                 static_cast<uint64_t>(100000.0 * shared_leaves / leaves));
    }
    for (auto& w : workers_) w->locker()->ResetFrame();
  }
  for (auto& w : workers_) w->frame_counters() = Worker::FrameCounters{};
}

}  // namespace sv
