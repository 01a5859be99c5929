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

// Every entity's wire state for one reply phase: EntityStateOf once per entity, rather than
// once per viewer it is shown to. Threading: one per worker thread, like InterestIndex; the
// world must not change between Build and the last Find (the reply phase).
class ShownStates {
 public:
  // Computes the state of every linked entity of `world`.
  void Build(const game::World& world);
  // The entity's state, or nullptr if clients are not shown it.
  const proto::EntityState* Find(game::EntityId id) const {
    return static_cast<size_t>(id) < shown_.size() && shown_[static_cast<size_t>(id)]
               ? &states_[static_cast<size_t>(id)]
               : nullptr;
  }

 private:
  std::vector<proto::EntityState> states_;  // by entity id; meaningful where shown_
  std::vector<uint8_t> shown_;
};

// Fills *snap for `player` (ids and tick included); `visible` is scratch. `interest` and
// `shown` were built on this frame's world.
void BuildSnapshot(const game::World& world, InterestIndex& interest, const ShownStates& shown,
                   game::EntityId player, float interest_radius, uint32_t snapshot_id,
                   std::vector<game::EntityId>* visible, proto::Snapshot* snap);

}  // namespace sv
