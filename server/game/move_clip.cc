// Box sweeps against entity boxes (slab method on the Minkowski-grown target), and the combined
// map-then-entities trace.
#include "server/game/move_clip.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "server/game/game_constants.h"

namespace game {

namespace {
thread_local uint64_t t_move_traces = 0;
}  // namespace

uint64_t ThisThreadMoveTraces() { return t_move_traces; }

collision::Trace MoveClipper::MapTrace(const Vec3& start, const Vec3& end, const Vec3& mins,
                                       const Vec3& maxs, const Bounds& swept) const {
  if (memo_ == nullptr) return world_.TraceBox(start, end, mins, maxs);
  // `swept` is TraceBox's own swept box. With a non-finite sweep it holds a NaN or an infinity,
  // which no clear box contains.
  if (memo_->clear.Contains(swept)) {
    collision::Trace clear;  // what TraceBox returns when it clips no brush
    clear.end = end;
    return clear;
  }
  const collision::Trace t = world_.TraceBox(start, end, mins, maxs);
  // Clear, so perhaps no brush was listed: then a box around this sweep serves the next ones.
  // (A listed brush that was missed makes ClearBoxAround say no, and the memo keeps its box.)
  if (t.fraction == 1.0f && !t.start_solid) {
    const Vec3 grow{kClearBoxGrow, kClearBoxGrow, kClearBoxGrow};
    Bounds around;
    if (world_.ClearBoxAround(swept, grow, &around)) memo_->clear = around;
  }
  return t;
}

MoveTrace MoveClipper::Trace(Vec3 start, Vec3 end, Vec3 mins, Vec3 maxs) const {
  const Bounds swept = collision::SweptBox(start, end, mins, maxs);
  return ClipToEntities(MapTrace(start, end, mins, maxs, swept), start, end, mins, maxs, swept);
}

MoveTrace MoveClipper::ProbeGround(Vec3 origin) const {
  static_assert(sizeof(Vec3) == 3 * sizeof(float), "Vec3 compared bytewise");
  const Vec3 end = origin - Vec3{0, 0, 1};
  // A non-finite origin is traced afresh: TraceBox's answer for it is not recomputed below.
  if (memo_ == nullptr || !core::IsFinite(origin)) {
    return Trace(origin, end, kPlayerMins, kPlayerMaxs);
  }
  MapTraceMemo& m = *memo_;
  const Bounds swept = collision::SweptBox(origin, end, kPlayerMins, kPlayerMaxs);
  if (!m.probe_valid || std::memcmp(&m.probe_origin, &origin, sizeof(Vec3)) != 0) {
    const collision::Trace t = MapTrace(origin, end, kPlayerMins, kPlayerMaxs, swept);
    m.probe_origin = origin;
    m.probe_fraction = t.fraction;
    m.probe_normal = t.normal;
    m.probe_start_solid = t.start_solid;
    m.probe_all_solid = t.all_solid;
    m.probe_valid = true;
  }
  collision::Trace map;
  map.fraction = m.probe_fraction;
  map.normal = m.probe_normal;
  map.start_solid = m.probe_start_solid;
  map.all_solid = m.probe_all_solid;
  map.end = collision::TraceEnd(origin, end, map.fraction);
  return ClipToEntities(map, origin, end, kPlayerMins, kPlayerMaxs, swept);
}

MoveTrace MoveClipper::ClipToEntities(const collision::Trace& wt, const Vec3& start,
                                      const Vec3& end, const Vec3& mins, const Vec3& maxs,
                                      const Bounds& swept) const {
  ++t_move_traces;
  MoveTrace t;
  t.fraction = wt.fraction;
  t.end = wt.end;
  t.normal = wt.normal;
  t.start_solid = wt.start_solid;
  t.all_solid = wt.all_solid;
  if (t.all_solid || boxes_.boxes.empty()) return t;
  // The space the mover sweeps through: a box strictly apart from it on some axis cannot be hit,
  // so it is passed over before the slab test (the same result, without its divisions), four
  // boxes to a test. That space is `swept` (min(start, end) + mins is min(start + mins, end +
  // mins), rounding being monotonic; and a non-finite sweep is all_solid, so it never gets here).
  boxes_.boxes.ForEachIntersecting(swept, [&](size_t i) {
    const Bounds box = boxes_.boxes.Get(i);
    // Strictly inside the box grown by the mover: SweepBoxVsBox would say start_inside, which
    // is ignored (see the header). Again the same result, sooner.
    if (start.x > box.mins.x - maxs.x && start.x < box.maxs.x - mins.x &&
        start.y > box.mins.y - maxs.y && start.y < box.maxs.y - mins.y &&
        start.z > box.mins.z - maxs.z && start.z < box.maxs.z - mins.z) {
      return;
    }
    float f;
    Vec3 n;
    bool inside;
    if (!SweepBoxVsBox(start, end, mins, maxs, box, &f, &n, &inside) || inside) return;
    // The nearest hit; of entities hit at the same fraction the lowest id, and the map before
    // them all: so the result is the same in whatever order the boxes come.
    const EntityId id = boxes_.ids[i];
    if (f < t.fraction || (f == t.fraction && t.entity >= 0 && id < t.entity)) {
      t.fraction = f;
      t.normal = n;
      t.entity = id;
      t.end = start + (end - start) * f;
    }
  });
  return t;
}

}  // namespace game
