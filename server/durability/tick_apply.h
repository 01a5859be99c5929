// The steps of one tick as the World sees them, shared by the live master and by replay, so a
// logged tick is re-executed through the same calls in the same order:
//   1. world part (serial): ApplyLeave* (each with the record eviction it needed), then
//      ApplyJoin*, then ApplyWorldPhase (always called,
//      run or not: it closes the world part and stamps the world tick);
//   2. commands: World::ExecuteCommand under the region locks (live, recorded by TickRecorder),
//      or in replay ApplyLoggedCommand: one by one in exec_seq order, or through a
//      ParallelReplay that runs commands of disjoint regions at once and conflicting ones in
//      exec_seq order (parallel_replay.h), with the same result.
// Live, each step applies to the world and appends to the frame's TickRecord; ApplyTick replays
// a whole record with the same functions and checks every result against what was logged.
//
// Threading: the World's serial-phase rules (one thread, no commands running).
#pragma once

#include <string_view>

#include "server/core/status.h"
#include "server/durability/tick_record.h"
#include "server/game/world.h"

namespace durability {

// The live leave: when the record store is full, first evicts its least recently seen offline
// record (the eviction policy, decided here and only live), then leaves `player` through
// ApplyLoggedLeave; on success appends {player, evicted} to record->leaves (record may be null).
// Must come before any join or command of the record.
core::Status ApplyLeave(game::World* world, game::EntityId player, TickRecord* record);

// A leave as logged, live and in replay: evicts leave.evicted (if not 0), then leaves.
core::Status ApplyLoggedLeave(game::World* world, const TickLeave& leave);

// Joins by name and token; on success appends {name, token, player} to record->joins (record may
// be null). Must come before the world phase and the commands.
game::JoinResult ApplyJoin(game::World* world, std::string_view name, uint64_t token,
                           TickRecord* record);

// Runs the game's world phase if run_world, then sets record->world_phase_ran and
// record->world_tick (record may be null). Returns the world tick.
int32_t ApplyWorldPhase(game::World* world, bool run_world, TickRecord* record);

// Replays a logged tick's world part: its leaves, joins and world phase, checking every result
// against the log (a refused leave or join, another player id, another world tick is Corruption
// naming the step). The commands are the caller's: ApplyTick runs them in record order (or on a
// ParallelReplay pool), aftershock-replay under a locking scheme on several threads.
core::Status ApplyLoggedWorldPart(game::World* world, const TickRecord& record);

// Replays one logged command through World::ExecuteCommand. A refusal (live, it succeeded) is
// Corruption naming the command. Threading: as World::ExecuteCommand.
core::Status ApplyLoggedCommand(game::World* world, const TickCommand& command);

class ParallelReplay;

// Replays a logged tick: ApplyLoggedWorldPart (serially), then the commands in record order
// through ApplyLoggedCommand, serially, or through `parallel` if not null (same result, see
// parallel_replay.h). Any result that differs from the live one (a refused leave/join/command,
// another player id, another world tick) is Corruption naming the step: the log does not belong
// to this state.
core::Status ApplyTick(game::World* world, const TickRecord& record,
                       ParallelReplay* parallel = nullptr);

}  // namespace durability
