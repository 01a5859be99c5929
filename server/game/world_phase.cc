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
  // Only a linked slot can hold a rocket or an explosion: Fire, FlyRocket and Explode link the
  // slot, and whatever frees it (below, FreeRocketSlots) unlinks it first. So the scan reads the
  // tree's link table (4 bytes a slot) and not every slot's edict (a cache line each: 2,048
  // slots at 512 players, a few dozen in flight). The slots it skips are free: neither branch
  // would touch them.
  for (EntityId id = first_rocket_; id < first_pickup_; ++id) {
    if (!tree_->IsLinked(id)) continue;
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
  // A pickup is linked exactly while it is available (InitState, TouchItems and the loop below
  // change both together): only the unlinked ones wait to respawn.
  for (EntityId id = first_pickup_; id < first_record_; ++id) {
    if (tree_->IsLinked(id)) continue;
    const Edict& e = objects_[id].edict;
    if (!(e.flags & kFlagAvailable) && tick >= e.next_tick) {
      Edict& m = Mut(id);
      m.flags |= kFlagAvailable;
      m.next_tick = 0;
      LinkEdict(id);
    }
  }
  // Only players that may be dead can respawn (may_be_dead_). The live players' origins are
  // gathered once, at the first respawn, and each respawned player is added: nothing else moves a
  // player in this loop.
  static thread_local LiveOrigins live;
  bool gathered = false;
  for (EntityId id = 1; id <= max_players_; ++id) {
    if (may_be_dead_[static_cast<size_t>(id)] == 0) continue;
    const Edict& e = objects_[id].edict;
    if (!(e.flags & kFlagDead)) may_be_dead_[static_cast<size_t>(id)] = 0;
    if ((e.flags & kFlagConnected) && (e.flags & kFlagDead) && tick >= e.next_tick) {
      if (!gathered) GatherLiveOrigins(&live);
      gathered = true;
      SpawnPlayer(id, &live);
    }
  }
}

void World::GatherLiveOrigins(LiveOrigins* live) const {
  live->xs.clear();
  live->ys.clear();
  live->zs.clear();
  for (EntityId id = 1; id <= max_players_; ++id) {
    const Edict& e = objects_[id].edict;
    if (e.flags & kFlagSolid) live->Add(e.origin);
  }
}

// Farthest spawn point from the nearest live player; ties go to the lower index. Maps with many
// spawn points (metropolis) evaluate kSpawnCandidates of them, spread evenly from an offset
// drawn from the world generator.
int World::ChooseSpawn(const LiveOrigins& origins) {
  constexpr int kSpawnCandidates = 64;
  const std::vector<float>& xs = origins.xs;
  const std::vector<float>& ys = origins.ys;
  const std::vector<float>& zs = origins.zs;
  const size_t live = xs.size();
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
  // no longer win (the minimum only falls), so the choice is the full scan's. Each distance is
  // Dot(d, d) to the bit ((x*x + y*y) + z*z), and a minimum does not depend on the order in which
  // it is taken, so the four lanes give the one-chain scan's result.
  constexpr size_t kBlock = 64;
  constexpr float kFar = std::numeric_limits<float>::max();
  for (int k = 0; k < candidates; ++k) {
    const int i = static_cast<int>((first + static_cast<int64_t>(k) * count / candidates) % count);
    const Vec3 at = spawns_[i].origin;
    auto d2 = [&](size_t m) {  // Dot(live[m] - at, live[m] - at)
      const float dx = xs[m] - at.x, dy = ys[m] - at.y, dz = zs[m] - at.z;
      return dx * dx + dy * dy + dz * dz;
    };
    float nearest = kFar;
    for (size_t j = 0; j < live && nearest >= best_d2; j += kBlock) {
      const size_t end = std::min(live, j + kBlock);
      float lane[4] = {kFar, kFar, kFar, kFar};
      size_t m = j;
      for (; m + 4 <= end; m += 4) {
        for (size_t l = 0; l < 4; ++l) lane[l] = std::min(lane[l], d2(m + l));
      }
      for (; m < end; ++m) nearest = std::min(nearest, d2(m));
      nearest = std::min(nearest, std::min(std::min(lane[0], lane[1]), std::min(lane[2], lane[3])));
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
void World::SpawnPlayer(EntityId player, LiveOrigins* live) {
  static thread_local LiveOrigins own;
  if (live == nullptr) {
    live = &own;
    GatherLiveOrigins(live);
  }
  const int spawn = ChooseSpawn(*live);
  may_be_dead_[static_cast<size_t>(player)] = 0;
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
  live->Add(p.origin);  // solid now: the next choice keeps away from it
}

}  // namespace game
