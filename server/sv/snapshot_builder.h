// What a client is shown: maps the game's edicts to the protocol's PlayerState/EntityState and
// assembles the snapshot offer (interest radius + line of sight, nearest first). Reply phase
// only: reads the world, writes nothing shared.
#pragma once

#include <vector>

#include "server/game/world.h"
#include "server/protocol/snapshot.h"

namespace sv {

proto::WeaponId WireWeapon(uint8_t game_weapon);
proto::PlayerState PlayerStateOf(const game::Edict& e);
// False if the entity is not something a client is shown.
bool EntityStateOf(const game::World& world, game::EntityId id, proto::EntityState* out);

// Fills *snap for `player` (ids and tick included); `visible` is scratch.
void BuildSnapshot(const game::World& world, game::EntityId player, float interest_radius,
                   uint32_t snapshot_id, std::vector<game::EntityId>* visible,
                   proto::Snapshot* snap);

}  // namespace sv
