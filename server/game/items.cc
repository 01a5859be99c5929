// Item table: the Quake deathmatch values, simplified (see docs/game.md).
#include "server/game/items.h"

#include <algorithm>

#include "server/game/game_constants.h"

namespace game {

ItemType ItemForClassname(std::string_view c) {
  if (c == "item_health") return ItemType::kHealth;
  if (c == "item_megahealth" || c == "item_health_mega") return ItemType::kMegaHealth;
  if (c == "item_armor1") return ItemType::kArmorGreen;
  if (c == "item_armor2") return ItemType::kArmorYellow;
  if (c == "item_armorInv") return ItemType::kArmorRed;
  if (c == "weapon_rocketlauncher" || c == "weapon_grenadelauncher") {
    return ItemType::kWeaponRocketLauncher;
  }
  if (c.starts_with("weapon_")) return ItemType::kWeaponShotgun;
  if (c == "item_rockets") return ItemType::kRockets;
  if (c == "item_shells" || c == "item_spikes" || c == "item_cells") return ItemType::kShells;
  return ItemType::kNone;
}

namespace {

bool GiveHealth(Edict* p, int amount, int max) {
  if (p->health >= max) return false;
  p->health = std::min(p->health + amount, max);
  return true;
}

// Quake's rule: take armor only if (fraction * value) improves.
bool GiveArmor(Edict* p, int value, int pct) {
  if (p->armor_pct * p->armor >= pct * value) return false;
  p->armor = value;
  p->armor_pct = static_cast<uint8_t>(pct);
  return true;
}

bool GiveAmmo(int* ammo, int amount, int max) {
  if (*ammo >= max) return false;
  *ammo = std::min(*ammo + amount, max);
  return true;
}

}  // namespace

bool ApplyItem(ItemType item, Edict* p) {
  switch (item) {
    case ItemType::kHealth: return GiveHealth(p, kHealthAmount, kMaxHealth);
    case ItemType::kMegaHealth: return GiveHealth(p, kMegaHealthAmount, kMegaMaxHealth);
    case ItemType::kArmorGreen: return GiveArmor(p, 100, 30);
    case ItemType::kArmorYellow: return GiveArmor(p, 150, 60);
    case ItemType::kArmorRed: return GiveArmor(p, 200, 80);
    case ItemType::kWeaponShotgun:
      p->weapons_owned |= 1u << kWeaponShotgun;
      GiveAmmo(&p->ammo_shells, kShellsAmount, kMaxShells);
      return true;
    case ItemType::kWeaponRocketLauncher:
      p->weapons_owned |= 1u << kWeaponRocketLauncher;
      GiveAmmo(&p->ammo_rockets, kRocketsAmount, kMaxRockets);
      return true;
    case ItemType::kShells: return GiveAmmo(&p->ammo_shells, kShellsAmount, kMaxShells);
    case ItemType::kRockets: return GiveAmmo(&p->ammo_rockets, kRocketsAmount, kMaxRockets);
    case ItemType::kNone: return false;
  }
  return false;
}

int ItemRespawnMs(ItemType item) {
  switch (item) {
    case ItemType::kHealth:
    case ItemType::kMegaHealth: return kHealthRespawnMs;
    case ItemType::kArmorGreen:
    case ItemType::kArmorYellow:
    case ItemType::kArmorRed: return kArmorRespawnMs;
    case ItemType::kWeaponShotgun:
    case ItemType::kWeaponRocketLauncher: return kWeaponRespawnMs;
    default: return kAmmoRespawnMs;
  }
}

}  // namespace game
