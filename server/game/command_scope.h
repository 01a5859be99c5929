// The command running on this thread and its declared region, for the region check
// (World::set_region_check). Internal to server/game.
#pragma once

#include "server/game/entity.h"
#include "server/game/region.h"

namespace game {

struct CommandScope {
  const void* world = nullptr;
  EntityId player = 0;
  uint32_t sequence = 0;
  Region region;
  const CommandScope* previous = nullptr;
};

// The innermost scope on this thread, or nullptr outside commands.
const CommandScope* CurrentCommandScope();

// Declares `scope` as this thread's running command until destroyed. Not copyable.
class ScopedCommand {
 public:
  explicit ScopedCommand(CommandScope* scope);
  ~ScopedCommand();
  ScopedCommand(const ScopedCommand&) = delete;
  ScopedCommand& operator=(const ScopedCommand&) = delete;
};

}  // namespace game
