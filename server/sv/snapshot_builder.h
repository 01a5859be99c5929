// What a client is shown: maps the game's edicts to the protocol's PlayerState/EntityState and
// assembles the snapshot offer (InterestIndex: PVS cell + interest radius, nearest first).
// Reply phase only: reads the world, writes nothing shared.
#pragma once

#include <vector>

#include "server/game/world.h"
#include "server/protocol/snapshot.h"
#include "server/sv/interest.h"

namespace sv {

proto::WeaponId WireWeapon(uint8_t game_weapon);
proto::PlayerState PlayerStateOf(const game::Edict& e);
// False if the entity is not something a client is shown.
bool EntityStateOf(const game::World& world, game::EntityId id, proto::EntityState* out);

// Fills *snap for `player` (ids and tick included); `visible` is scratch. `interest` was built
// on this frame's world.
void BuildSnapshot(const game::World& world, InterestIndex& interest, game::EntityId player,
                   float interest_radius, uint32_t snapshot_id,
                   std::vector<game::EntityId>* visible, proto::Snapshot* snap);

}  // namespace sv
