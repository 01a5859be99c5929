// InitializeEnet: enet_initialize with a pooled allocator, for every process that uses ENet
// (server, bots, tests), so that each runs the same allocator.
//
// Why: ENet mallocs and frees a packet (struct + data) and an outgoing or incoming command per
// datagram. At 30,000 datagrams a second each way, glibc's malloc, free and consolidation were
// about 8% of a bot process's CPU. The pool keeps freed blocks of a few size classes on per-thread
// free lists (bounded per class, the excess goes back to malloc); blocks over the largest class
// and the rare large allocations (a host's peer array) go straight to malloc.
//
// Contract: call before any other ENet call; later calls return the first call's result. A block
// may be freed on any thread (it joins that thread's list). Thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>

#include "server/core/status.h"

namespace proto {

core::Status InitializeEnet();

// The pool's allocator itself, for its test: the same functions ENet is given.
void* PoolMalloc(size_t size);
void PoolFree(void* block);

// Blocks this thread has taken from and returned to its free lists (for the test).
struct PoolCounters {
  uint64_t reused = 0;    // allocations served from a free list
  uint64_t returned = 0;  // frees kept on a free list
};
PoolCounters ThisThreadPoolCounters();

}  // namespace proto
