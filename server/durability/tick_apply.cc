// The tick's steps, live and in replay (order and contract: tick_apply.h).
#include "server/durability/tick_apply.h"

#include <string>

#include "server/core/check.h"
#include "server/durability/parallel_replay.h"

namespace durability {

core::Status ApplyLoggedLeave(game::World* world, const TickLeave& leave) {
  if (leave.evicted != 0) {
    const core::Status s = world->EvictRecord(leave.evicted);
    if (!s.ok()) return s;
  }
  return world->Leave(leave.player);
}

core::Status ApplyLeave(game::World* world, game::EntityId player, TickRecord* record) {
  if (record != nullptr) {
    AS_CHECK(record->joins.empty() && record->commands.empty(), "leave after a join or command");
  }
  TickLeave leave{player, 0};
  const game::Edict* e = world->IsPlayerId(player) ? &world->Get(player) : nullptr;
  if (e != nullptr && (e->flags & game::kFlagConnected) && world->RecordStoreFull()) {
    leave.evicted = world->LeastRecentlySeenRecord();
  }
  const core::Status s = ApplyLoggedLeave(world, leave);
  if (s.ok() && record != nullptr) record->leaves.push_back(leave);
  return s;
}

game::JoinResult ApplyJoin(game::World* world, std::string_view name, uint64_t token,
                           TickRecord* record) {
  if (record != nullptr) {
    AS_CHECK(!record->world_phase_ran && record->commands.empty(), "join after the world phase");
  }
  game::JoinResult r = world->Join(name, token);
  if (r.status.ok() && record != nullptr) {
    record->joins.push_back(TickJoin{std::string(name), token, r.player});
  }
  return r;
}

int32_t ApplyWorldPhase(game::World* world, bool run_world, TickRecord* record) {
  if (record != nullptr) AS_CHECK(record->commands.empty(), "world phase after a command");
  if (run_world) world->RunWorldPhase();
  const int32_t tick = world->globals().tick;
  if (record != nullptr) {
    record->world_phase_ran = run_world;
    record->world_tick = tick;
  }
  return tick;
}

core::Status ApplyLoggedCommand(game::World* world, const TickCommand& command) {
  const core::Status s = world->ExecuteCommand(command.player, command.cmd);
  if (s.ok()) return s;
  return core::Status::Corruption("replay: logged command " + std::to_string(command.cmd.sequence) +
                                  " of player " + std::to_string(command.player) +
                                  " refused: " + s.ToString());
}

core::Status ApplyLoggedWorldPart(game::World* world, const TickRecord& record) {
  for (const TickLeave& leave : record.leaves) {
    core::Status s = ApplyLoggedLeave(world, leave);
    if (!s.ok()) return core::Status::Corruption("replay: logged leave refused: " + s.message());
  }
  for (const TickJoin& j : record.joins) {
    const game::JoinResult r = ApplyJoin(world, j.name, j.token, nullptr);
    if (!r.status.ok() || r.player != j.player) {
      return core::Status::Corruption(
          "replay: join of '" + j.name + "' gave " +
          (r.status.ok() ? "player " + std::to_string(r.player) : r.status.ToString()) +
          ", the log says player " + std::to_string(j.player));
    }
  }
  const int32_t tick = ApplyWorldPhase(world, record.world_phase_ran, nullptr);
  if (tick != record.world_tick) {
    return core::Status::Corruption("replay: world tick " + std::to_string(tick) +
                                    " after the world phase, the log says " +
                                    std::to_string(record.world_tick));
  }
  return core::Status::OK();
}

core::Status ApplyTick(game::World* world, const TickRecord& record, ParallelReplay* parallel) {
  if (parallel != nullptr) return parallel->ApplyTick(record);
  core::Status s = ApplyLoggedWorldPart(world, record);
  if (!s.ok()) return s;
  for (const TickCommand& c : record.commands) {
    s = ApplyLoggedCommand(world, c);
    if (!s.ok()) return s;
  }
  return core::Status::OK();
}

}  // namespace durability
