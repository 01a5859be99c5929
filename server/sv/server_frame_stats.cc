// Frame statistics: at the start of each world phase the master sums the closed frame's
// per-worker counters (requests per thread, leaf locking) into ServerStats, through the one
// implementation the replay tool uses too (SumFrameCounters, frame_executor.h).
#include "server/sv/server.h"

namespace sv {

// Called before the next tick's world part clears record_, which still holds the closed frame's
// joins and leaves.
void Server::SumFrameStats() {
  const bool steady = population_.NoteTick(!record_.joins.empty() || !record_.leaves.empty());
  SumFrameCounters(executors_, steady, &stats_);
}

}  // namespace sv
