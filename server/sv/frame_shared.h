// FrameShared: what the frame threads share inside one server, with the rule that makes each
// field race-free. The Server owns it; workers get a pointer.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "server/core/bounds.h"
#include "server/durability/tick_recorder.h"
#include "server/game/user_cmd.h"
#include "server/game/world.h"
#include "server/sv/server_options.h"
#include "server/sv/server_stats.h"
#include "server/sv/thread_messages.h"
#include "server/sv/thread_queue.h"
#include "server/vis/pvs.h"

namespace sv {

class LocalityAssignment;

// A command to execute for a player, as the request source handed it over.
struct PlayerCommand {
  game::EntityId player = 0;
  game::UserCmd cmd;
};

struct FrameShared {
  game::World* world = nullptr;      // world phase: master only; request phase: commands under
                                     // the locking scheme; reply phase: read-only
  const ServerOptions* options = nullptr;
  const vis::Pvs* pvs = nullptr;     // the map's visibility set: immutable while frames run
  ServerStats* stats = nullptr;
  // The `global` scheme's one lock. It guards the whole World, which is no member the analysis
  // could name, and is taken only under that scheme: a plain std::mutex, checked by TSan.
  std::mutex global_lock;
  // The frame's executed commands in a serial order that reproduces it (the recovery log):
  // worker i records into its own buffer while it still holds the command's locks; the thread
  // that closes the request phase merges them.
  durability::TickRecorder* recorder = nullptr;

  // Frame number (>= 1) and world tick of the frame in progress. Written by the master in the
  // world phase, read by workers in the request and reply phases (phase-separated).
  uint32_t frame_no = 0;
  int32_t tick = 0;

  // --assign locality (else nullptr and empty). The master updates `locality` in the world
  // phase; workers read it in the request phase. routed[from * threads + to] holds the frame's
  // commands that worker `from` read for players thread `to` runs: `from` fills it before the
  // route barrier, `to` runs and clears it after (phase-separated).
  const LocalityAssignment* locality = nullptr;
  std::vector<std::vector<PlayerCommand>> routed;

  // Round-trip time per player for the status query: worker writes, master reads.
  std::unique_ptr<std::atomic<uint32_t>[]> ping_ms;

  ThreadQueue<WorkerNotice> notices;  // workers -> master
};

}  // namespace sv
