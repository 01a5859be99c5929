// Clip planes of a brush for box sweeps: the brush's own planes plus the axial and edge bevel
// planes that bound the Minkowski sum of the brush and any axis-aligned box (see
// collision_world.h). Pure functions; thread-safe.
#pragma once

#include <vector>

#include "maps/map.h"

namespace collision {

// Appends to `out` every plane of `brush`, then each missing face of brush (+) box: the six
// axial planes and, for every brush edge and axis, the plane through the edge whose normal is
// edge x axis, when it supports the brush along that edge. Every appended plane supports the
// brush (dist = max over vertices), so it keeps point-inside tests exact.
void AppendClipPlanes(const maps::Brush& brush, std::vector<maps::Plane>* out);

}  // namespace collision
