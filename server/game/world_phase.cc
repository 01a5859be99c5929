// The world phase (QuakeWorld's SV_Physics for non-clients), run by one thread before the
// commands of a tick: tick counter, explosions, rocket flight, item respawns, player respawns.
// Everything iterates by id, so the result does not depend on link order.
#include <algorithm>
#include <cstring>
#include <limits>
#include <vector>

#include "server/game/game_constants.h"
#include "server/game/rng.h"
#include "server/game/world.h"

namespace game {

void World::RunWorldPhase() {
  WrittenScope written(this);
  const int tick = ++MutGlobals().tick;
  const float flight = kRocketSpeed * static_cast<float>(tick_ms_) * 0.001f;
  for (EntityId id = first_rocket_; id < first_pickup_; ++id) {
    const Edict& e = objects_[id].edict;
    if (e.kind == EntityKind::kExplosion && tick > e.next_tick) {
      UnlinkEdict(id);
      Edict& m = Mut(id);
      std::memset(static_cast<void*>(&m), 0, sizeof m);
    } else if (e.kind == EntityKind::kRocket) {
      if (tick >= e.next_tick) {
        UnlinkEdict(id);
        Edict& m = Mut(id);
        std::memset(static_cast<void*>(&m), 0, sizeof m);
      } else {
        FlyRocket(id, flight);
      }
    }
  }
  for (EntityId id = first_pickup_; id < first_record_; ++id) {
    const Edict& e = objects_[id].edict;
    if (!(e.flags & kFlagAvailable) && tick >= e.next_tick) {
      Edict& m = Mut(id);
      m.flags |= kFlagAvailable;
      m.next_tick = 0;
      LinkEdict(id);
    }
  }
  for (EntityId id = 1; id <= max_players_; ++id) {
    const Edict& e = objects_[id].edict;
    if ((e.flags & kFlagConnected) && (e.flags & kFlagDead) && tick >= e.next_tick) {
      SpawnPlayer(id);
    }
  }
}

// Farthest spawn point from the nearest live player; ties go to the lower index. Maps with many
// spawn points (metropolis) evaluate kSpawnCandidates of them, spread evenly from an offset
// drawn from the world generator.
int World::ChooseSpawn() {
  constexpr int kSpawnCandidates = 64;
  static thread_local std::vector<Vec3> live;
  live.clear();
  for (EntityId id = 1; id <= max_players_; ++id) {
    const Edict& e = objects_[id].edict;
    if (e.flags & kFlagSolid) live.push_back(e.origin);
  }
  const int count = static_cast<int>(spawns_.size());
  int first = 0, candidates = count;
  if (count > kSpawnCandidates) {
    Globals& g = MutGlobals();
    first = static_cast<int>(NextRandom(&g.rng) % static_cast<uint64_t>(count));
    candidates = kSpawnCandidates;
  }
  int best = -1;
  float best_d2 = -1;
  // A candidate wins with the largest distance to its nearest live player. Its scan stops, a block
  // of players at a time, once some player is nearer than the best candidate's nearest: it can
  // no longer win (the minimum only falls), so the choice is the full scan's.
  constexpr size_t kBlock = 64;
  for (int k = 0; k < candidates; ++k) {
    const int i = static_cast<int>((first + static_cast<int64_t>(k) * count / candidates) % count);
    const Vec3 at = spawns_[i].origin;
    float nearest = std::numeric_limits<float>::max();
    for (size_t j = 0; j < live.size() && nearest >= best_d2; j += kBlock) {
      const size_t end = std::min(live.size(), j + kBlock);
      for (size_t m = j; m < end; ++m) {
        const Vec3 d = live[m] - at;
        nearest = std::min(nearest, Dot(d, d));
      }
    }
    if (nearest > best_d2 || (nearest == best_d2 && i < best)) {
      best_d2 = nearest;
      best = i;
    }
  }
  return best;
}

// Puts a player at a spawn point with fresh stats (frags, deaths and identity are kept). Unlike
// Quake it does not telefrag: with hundreds of players on a few spawn points that would chain;
// overlapping players walk apart (MoveClipper ignores boxes a mover starts inside). Serial only.
void World::SpawnPlayer(EntityId player) {
  const int spawn = ChooseSpawn();
  Edict& p = Mut(player);
  p.flags = (p.flags & (kFlagInUse | kFlagConnected)) | kFlagSolid;
  p.index = spawn;
  p.origin = spawns_[spawn].origin + Vec3{0, 0, 1};
  p.velocity = Vec3{};
  p.view_angles = {0, spawns_[spawn].angle_deg, 0};
  p.mins = kPlayerMins;
  p.maxs = kPlayerMaxs;
  p.health = kSpawnHealth;
  p.armor = 0;
  p.armor_pct = 0;
  p.weapons_owned = (1u << kWeaponAxe) | (1u << kWeaponShotgun);
  p.weapon = kWeaponShotgun;
  p.ammo_shells = kSpawnShells;
  p.ammo_rockets = 0;
  p.attack_cooldown_ms = 0;
  p.next_tick = 0;
  p.spawn_tick = globals().tick;
  LinkEdict(player);
}

}  // namespace game
