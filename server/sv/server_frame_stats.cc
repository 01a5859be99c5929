// Frame statistics: at the start of each world phase the master sums the closed frame's
// per-worker counters (requests per thread, leaf locking) into ServerStats, through the one
// implementation the replay tool uses too (SumFrameCounters, frame_executor.h).
#include "server/sv/server.h"

namespace sv {

void Server::SumFrameStats() { SumFrameCounters(executors_, &stats_); }

}  // namespace sv
