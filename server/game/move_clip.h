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

class MoveClipper {
 public:
  // `boxes` must outlive the clipper. Entities whose box the mover starts inside are ignored, so
  // overlapping players (after a resume or a spawn) can walk apart instead of sticking.
  MoveClipper(const collision::CollisionWorld& world, const ClipBoxes& boxes)
      : world_(world), boxes_(boxes) {}

  MoveTrace Trace(Vec3 start, Vec3 end, Vec3 mins, Vec3 maxs) const;

 private:
  const collision::CollisionWorld& world_;
  const ClipBoxes& boxes_;
};

}  // namespace game
