// TickRecord: what happened in one logged tick (one server frame), in the serial order that
// reproduces it, and its byte encoding: the payload of recovery's opaque log record.
// Byte layout: docs/recovery.md, "Tick record payload".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "server/core/status.h"
#include "server/game/entity.h"
#include "server/game/user_cmd.h"

namespace durability {

// A leave, and the offline record evicted just before it to make room in the record store (0:
// none). Replay evicts the same record, so the store stays bit-exact.
struct TickLeave {
  game::EntityId player = 0;
  game::EntityId evicted = 0;
  friend bool operator==(const TickLeave&, const TickLeave&) = default;
};

struct TickJoin {
  std::string name;
  uint64_t token = 0;          // the secret join token (the world keeps only its hash)
  game::EntityId player = 0;   // the player id the join gave; replay must give the same
};

struct TickCommand {
  uint64_t exec_seq = 0;       // global execution sequence, taken under the command's locks
  game::EntityId player = 0;
  game::UserCmd cmd;
  // The live lock order (TickRecord::lock_order): the earlier commands of the tick this one took
  // a lock from, record.after[first_after .. first_after + after_count), ascending indices.
  uint32_t after_count = 0;
  uint32_t first_after = 0;
};

// The live order, which replay follows: leaves (each after its eviction), then joins, then the
// world phase (if it ran), then the commands by exec_seq. Only applied joins and successful
// commands are recorded.
struct TickRecord {
  std::vector<TickLeave> leaves;
  std::vector<TickJoin> joins;
  bool world_phase_ran = false;
  int32_t world_tick = 0;      // Globals::tick after the world part (a replay cross-check)
  std::vector<TickCommand> commands;  // exec_seq strictly increasing
  // Whether the commands carry the live lock order: for each command, the commands of this
  // tick that held one of its locks last before it (TickRecorder). Parallel replay then runs a
  // command once those are done, without working the conflicts out again (parallel_replay.h).
  bool lock_order = false;
  // With the lock order: the areanode depth whose leaves were the locks (1..areanode::kMaxDepth),
  // or 0 if every command took one common lock (the global scheme: a total order). A replay may
  // follow the order only on a tree at least this deep, whose every leaf lies inside one of those
  // leaves: on a coarser tree two commands that shared no lock may share a leaf's entity list
  // (parallel_replay.h). kLockDepthUnknown in version 3 records, which did not say.
  uint8_t lock_depth = 0;
  std::vector<uint32_t> after;  // command indices, each below the index of the command it is for

  void Clear();
};

// 2: leaves carry their eviction; 3: the commands may carry the live lock order (flag bit 1);
// 4: and the depth of its leaves (header byte 2). Versions 2 and 3 are still read.
inline constexpr uint8_t kTickRecordVersion = 4;
inline constexpr uint8_t kLockDepthUnknown = 255;
inline constexpr size_t kTickRecordHeaderSize = 20;
inline constexpr size_t kTickCommandSize = 38;

// Appends the encoding of r to *out (which is cleared first).
void EncodeTickRecord(const TickRecord& r, std::string* out);
// Parses and validates a payload: version, flags, counts against the size, names, player ids,
// strictly increasing exec_seq, the lock order (each command's earlier commands strictly
// ascending and before it, so following them cannot deadlock), no trailing bytes. Damage gives Corruption naming what is wrong;
// *r is then unspecified. Never trusts a count before checking it against the bytes left.
core::Status DecodeTickRecord(std::string_view payload, TickRecord* r);

}  // namespace durability
