// MoveClipper: QuakeWorld's SV_Move for one command. A box sweep is clipped against the map
// (CollisionWorld::TraceBox) first, then against the solid entity boxes gathered for the command
// (box-vs-box sweeps done here). Lives on the executing thread's stack; not shared.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "server/collision/collision_world.h"
#include "server/core/bounds.h"
#include "server/core/box_columns.h"
#include "server/game/entity.h"
#include "server/game/game_constants.h"

namespace game {

using core::Bounds;

// The collision world's options for the game: the player's hull kept (every movement trace
// sweeps it), which changes no result.
inline collision::Options CollisionOptions() {
  collision::Options options;
  options.cache_hull = true;
  options.hull_mins = kPlayerMins;
  options.hull_maxs = kPlayerMaxs;
  return options;
}

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
// Inline: ClipToEntities runs it for every box its swept box cannot pass over.
[[gnu::always_inline]] inline bool SweepBoxVsBox(const Vec3& start, const Vec3& end,
                                                const Vec3& mins, const Vec3& maxs,
                                                const Bounds& target, float* fraction,
                                                Vec3* normal, bool* start_inside) {
  const Vec3 lo = target.mins - maxs;  // the point `start` moves against this grown box
  const Vec3 hi = target.maxs - mins;
  const Vec3 d = end - start;
  float t_enter = -std::numeric_limits<float>::infinity();
  float t_exit = std::numeric_limits<float>::infinity();
  int enter_axis = -1;
  for (int axis = 0; axis < 3; ++axis) {
    const float s = start[axis];
    const float di = d[axis];
    if (std::fabs(di) < 1e-9f) {
      if (s <= lo[axis] || s >= hi[axis]) return false;  // parallel and outside (or touching)
      continue;
    }
    float t0 = (lo[axis] - s) / di;
    float t1 = (hi[axis] - s) / di;
    if (t0 > t1) std::swap(t0, t1);
    if (t0 > t_enter) {
      t_enter = t0;
      enter_axis = axis;
    }
    if (t1 < t_exit) t_exit = t1;
  }
  if (t_enter >= t_exit || t_exit <= 0 || t_enter > 1) return false;
  *start_inside = false;
  if (t_enter < 0 || enter_axis < 0) {
    *start_inside = true;
    *fraction = 0;
    *normal = Vec3{};
    return true;
  }
  const float speed = std::fabs(d[enter_axis]);
  float f = t_enter - collision::kDistEpsilon / speed;
  *fraction = f < 0 ? 0 : f;
  Vec3 n;
  n[enter_axis] = d[enter_axis] > 0 ? -1.0f : 1.0f;
  *normal = n;
  return true;
}

// Movement traces run by MoveClipper on this thread so far (for benchmarks).
uint64_t ThisThreadMoveTraces();

// What the map told one mover's recent traces. The map does not move, so both parts are pure
// functions of where the traces ran, and kept per mover they spare map traces:
// - the map's part of the last ground probe (MoveClipper::ProbeGround), a pure function of the
//   probe's origin: a move starts with a probe where the last one ended, unless the player was
//   moved in between;
// - a box around the mover's recent traces that meets no solid brush
//   (CollisionWorld::ClearBoxAround): a sweep inside it clips no brush, so its map part is clear
//   without a map trace.
// Derived data, never saved: an empty or stale memo only costs traces. One per player, written
// only by the thread running that player's command, so a line of its own.
struct alignas(64) MapTraceMemo {
  // The last ground probe: its origin (compared bit for bit) and the map's trace from there;
  // the trace's end is recomputed from `probe_fraction` by collision::TraceEnd, as TraceBox's.
  Vec3 probe_origin;
  float probe_fraction = 1.0f;
  Vec3 probe_normal;
  bool probe_start_solid = false;
  bool probe_all_solid = false;
  bool probe_valid = false;
  Bounds clear = Bounds::Empty();  // meets no solid brush; Empty() until a clear trace sets it
};
static_assert(sizeof(MapTraceMemo) == 64, "one cache line per player");

class MoveClipper {
 public:
  // `boxes` (and `memo`, if given) must outlive the clipper; their order does not change any
  // result (of entities hit at the same fraction the lowest id wins, and the map before them all).
  // Entities whose box the mover starts inside are ignored, so overlapping players (after a
  // resume or a spawn) can walk apart instead of sticking. `memo` is the mover's MapTraceMemo, or
  // null to trace the map every time. With or without it, every result is the same bit for bit.
  MoveClipper(const collision::CollisionWorld& world, const ClipBoxes& boxes,
              MapTraceMemo* memo = nullptr)
      : world_(world), boxes_(boxes), memo_(memo) {}

  // The map's trace (CollisionWorld::TraceBox), then the entity boxes'. The map's part is clear
  // without a map trace when the swept box lies inside the memo's clear box.
  MoveTrace Trace(Vec3 start, Vec3 end, Vec3 mins, Vec3 maxs) const;

  // Trace(origin, origin - (0, 0, 1), kPlayerMins, kPlayerMaxs), bit for bit: the probe for ground
  // under a player's box (PM_CategorizePosition). The map's part comes from the memo when it was
  // traced from this very origin.
  MoveTrace ProbeGround(Vec3 origin) const;

  // How far (units) a clear box may reach beyond the sweep that makes it, on every side: of 24,
  // 48 and 96, the one that left the fewest instructions per replayed command
  // (docs/recovery-measurements.md, "A box clear of the map, per player").
  static constexpr float kClearBoxGrow = 48.0f;

 private:
  // CollisionWorld::TraceBox(start, end, mins, maxs), bit for bit, through the memo's clear box:
  // skipped inside it; a clear trace outside it makes a new one around its swept box.
  // `swept` is collision::SweptBox(start, end, mins, maxs).
  collision::Trace MapTrace(const Vec3& start, const Vec3& end, const Vec3& mins, const Vec3& maxs,
                            const Bounds& swept) const;

  // The combined trace, given the map's part `map` of the sweep start..end: `map` clipped against
  // the entity boxes. `swept` is collision::SweptBox(start, end, mins, maxs).
  MoveTrace ClipToEntities(const collision::Trace& map, const Vec3& start, const Vec3& end,
                           const Vec3& mins, const Vec3& maxs, const Bounds& swept) const;

  const collision::CollisionWorld& world_;
  const ClipBoxes& boxes_;
  MapTraceMemo* memo_;
};

}  // namespace game
