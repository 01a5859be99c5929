// MoveClipper: QuakeWorld's SV_Move for one command. A box sweep is clipped against the map
// (CollisionWorld::TraceBox) first, then against the solid entity boxes gathered for the command
// (box-vs-box sweeps done here). Lives on the executing thread's stack; not shared.
#pragma once

#include <cstdint>
#include <vector>

#include "server/collision/collision_world.h"
#include "server/core/bounds.h"
#include "server/core/box_columns.h"
#include "server/game/entity.h"

namespace game {

using core::Bounds;

// The solid entity boxes a command's traces clip against, gathered once per command.
struct ClipBoxes {
  std::vector<EntityId> ids;
  core::BoxColumns boxes;  // boxes.Get(i) is entity ids[i]'s box
  void clear() {
    ids.clear();
    boxes.clear();
  }
  void push_back(EntityId id, const Bounds& box) {
    ids.push_back(id);
    boxes.push_back(box);
  }
};

struct MoveTrace {
  float fraction = 1.0f;
  Vec3 end;
  Vec3 normal;
  bool start_solid = false;
  bool all_solid = false;
  EntityId entity = -1;  // entity hit, -1 for the map or nothing
  bool hit() const { return fraction < 1.0f; }
};

// Sweeps the box [mins, maxs] (relative to the moving point) from start to end against the static
// box `target`. Returns true on a hit: *fraction is backed off kDistEpsilon along the hit axis and
// *normal is that axis. If the swept box starts inside `target`, sets *start_inside and returns
// true with fraction 0. Touching without moving inward is not a hit.
bool SweepBoxVsBox(Vec3 start, Vec3 end, Vec3 mins, Vec3 maxs, const Bounds& target,
                   float* fraction, Vec3* normal, bool* start_inside);

// Movement traces run by MoveClipper on this thread so far (for benchmarks).
uint64_t ThisThreadMoveTraces();

// The map's part of a mover's last ground probe (MoveClipper::ProbeGround). The map does not
// move, so that part is a pure function of the probe's origin: kept per mover, it spares the map
// trace of a probe at the origin where the mover's previous probe ran (a move starts with a probe
// where the last one ended, unless the player was moved in between). Derived data, never saved: an
// empty or stale memo only costs the trace. One per player, written only by the thread running
// that player's command, so a line of its own.
struct alignas(64) GroundProbeMemo {
  Vec3 origin;         // compared bit for bit
  collision::Trace map;  // CollisionWorld::TraceBox of the probe from `origin`
  bool valid = false;
};

class MoveClipper {
 public:
  // `boxes` (and `ground`, if given) must outlive the clipper; their order does not change any
  // result (of entities hit at the same fraction the lowest id wins, and the map before them all).
  // Entities whose box the mover starts inside are ignored, so overlapping players (after a resume or a spawn) can walk apart instead
  // of sticking. `ground` is the mover's GroundProbeMemo, or null to trace every probe.
  MoveClipper(const collision::CollisionWorld& world, const ClipBoxes& boxes,
              GroundProbeMemo* ground = nullptr)
      : world_(world), boxes_(boxes), ground_(ground) {}

  MoveTrace Trace(Vec3 start, Vec3 end, Vec3 mins, Vec3 maxs) const;

  // Trace(origin, origin - (0, 0, 1), kPlayerMins, kPlayerMaxs), bit for bit: the probe for ground
  // under a player's box (PM_CategorizePosition). The map's part comes from the memo when it was
  // traced from this very origin.
  MoveTrace ProbeGround(Vec3 origin) const;

 private:
  // The combined trace, given the map's part `map` of the sweep start..end.
  MoveTrace ClipToEntities(const collision::Trace& map, Vec3 start, Vec3 end, Vec3 mins,
                           Vec3 maxs) const;

  const collision::CollisionWorld& world_;
  const ClipBoxes& boxes_;
  GroundProbeMemo* ground_;
};

}  // namespace game
