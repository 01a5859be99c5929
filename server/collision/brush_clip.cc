// Box-sweep clipping against a convex brush (after Quake III's CM_TraceThroughBrush). The box
// sweep becomes a point sweep against the brush's planes pushed out by the box; with the bevel
// planes included, the pushed-out planes bound the Minkowski sum exactly.
#include "server/collision/brush_clip.h"

#include <algorithm>
#include <limits>

namespace collision {

namespace {

// The clipper, with the pushed dist of plane i from dist(i).
template <class Dist>
inline void Clip(const Sweep& sweep, const maps::Plane* planes, int num_planes, int brush_index,
                 Trace* trace, Dist&& pushed_dist) {
  float enter = -1.0f, leave = 1.0f;
  const maps::Plane* clip = nullptr;
  bool start_out = false, get_out = false;
  for (int i = 0; i < num_planes; ++i) {
    const maps::Plane& p = planes[i];
    const float dist = pushed_dist(i);
    const float d1 = Dot(p.normal, sweep.start) - dist;
    const float d2 = Dot(p.normal, sweep.end) - dist;
    if (d2 > 0) get_out = true;
    if (d1 > -kTouchEpsilon) {
      start_out = true;
      // Moving away or parallel, or wholly in front of this plane: never goes in.
      if (d2 >= d1 || (d1 > 0 && d2 > 0)) return;
      // Entering: stop kDistEpsilon in front of the plane (at once if already closer).
      const float f = std::max(0.0f, (d1 - kDistEpsilon) / (d1 - d2));
      if (f > enter) {
        enter = f;
        clip = &p;
        // No later plane can bring the entry back before the exit or the trace's fraction.
        if (enter >= leave || enter >= trace->fraction) return;
      }
    } else if (d2 > 0) {
      // Leaving through this plane (conservatively early by kDistEpsilon).
      leave = std::min(leave, (d1 + kDistEpsilon) / (d1 - d2));
      if (enter >= leave) return;  // leave stays above -1: only after a plane was entered
    }
  }
  if (!start_out) {
    trace->start_solid = true;
    if (!get_out) {
      trace->all_solid = true;
      trace->fraction = 0;
      trace->brush = brush_index;
    }
    return;
  }
  if (clip != nullptr && enter < leave && enter < trace->fraction) {
    trace->fraction = enter;
    trace->normal = clip->normal;
    trace->brush = brush_index;
  }
}

}  // namespace

void ClipSweepToBrush(const Sweep& sweep, const maps::Plane* planes, int num_planes,
                      int brush_index, Trace* trace) {
  Clip(sweep, planes, num_planes, brush_index, trace,
       [&](int i) { return PushedDist(planes[i], sweep.mins, sweep.maxs); });
}

void ClipSweepToBrushPushed(const Sweep& sweep, const maps::Plane* planes, const float* pushed,
                            int num_planes, int brush_index, Trace* trace) {
  Clip(sweep, planes, num_planes, brush_index, trace, [&](int i) { return pushed[i]; });
}

float BoxSeparation(Vec3 origin, Vec3 mins, Vec3 maxs, const maps::Plane* planes,
                    int num_planes) {
  float separation = -std::numeric_limits<float>::max();
  for (int i = 0; i < num_planes; ++i) {
    const maps::Plane& p = planes[i];
    const float d = Dot(p.normal, origin) - (p.dist - BoxPlaneOffset(p.normal, mins, maxs));
    separation = std::max(separation, d);
  }
  return separation;
}

}  // namespace collision
