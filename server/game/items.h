// Items on the map: which classnames become which ItemType, what taking one gives, and when it
// comes back. Pure functions over a player Edict.
#pragma once

#include <string_view>

#include "server/game/entity.h"

namespace game {

// The item a map classname spawns, or kNone if the game does not place it (keys, artifacts,
// lights...). Quake's other weapons become shotguns, its other ammo shells.
ItemType ItemForClassname(std::string_view classname);

// Gives `item` to `player` if the player can use it now (Quake: full health or better armor
// refuse). Returns true if taken.
bool ApplyItem(ItemType item, Edict* player);

// Respawn delay of an item once taken.
int ItemRespawnMs(ItemType item);

}  // namespace game
