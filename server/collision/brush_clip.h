// The exact narrow phase: clip a box sweep against one convex brush given its clip planes
// (brush + bevel planes, brush_planes.h). Stack-only, thread-safe. Shared by CollisionWorld's
// narrow phases: the Bullet one uses BoxSeparation() to leave starts inside or touching to it.
#pragma once

#include "maps/map.h"
#include "server/collision/collision_world.h"

namespace collision {

// A box sweep, with the box's mins/maxs relative to the moving origin.
struct Sweep {
  Vec3 start, end, mins, maxs;
};

// Distance the plane must move back so that the box [mins, maxs] touches it with its origin on
// the moved plane: the plane of the Minkowski sum brush (+) (-box).
inline float BoxPlaneOffset(Vec3 n, Vec3 mins, Vec3 maxs) {
  return n.x * (n.x > 0 ? mins.x : maxs.x) + n.y * (n.y > 0 ? mins.y : maxs.y) +
         n.z * (n.z > 0 ? mins.z : maxs.z);
}

// Clips `sweep` against the brush bounded by planes[0..num_planes) (brush index `brush_index`),
// lowering trace->fraction (and setting normal/brush) if the box enters the brush earlier, or
// setting start_solid/all_solid. trace->end is left for the caller to compute.
//
// Each plane narrows the sweep's way into the brush on its own: the entry can only move later
// and the exit earlier, and a plane the sweep starts outside of rules out start_solid. So:
// - the clip stops at the first plane after which the entry is at or past the exit or past
//   trace->fraction, with the trace as the whole loop would leave it (untouched);
// - any subset of a brush's planes that leaves a fresh Trace clear (neither hit() nor
//   start_solid) proves that the whole set leaves it clear too. LineOfSight relies on this.
void ClipSweepToBrush(const Sweep& sweep, const maps::Plane* planes, int num_planes,
                      int brush_index, Trace* trace);

// ClipSweepToBrush, with each plane's pushed dist given: pushed[i] must be
// planes[i].dist - BoxPlaneOffset(planes[i].normal, sweep.mins, sweep.maxs) (PushedDist), bit for
// bit. The same result, without the per-plane offset.
void ClipSweepToBrushPushed(const Sweep& sweep, const maps::Plane* planes, const float* pushed,
                            int num_planes, int brush_index, Trace* trace);

// The dist of plane `p` pushed out by the box [mins, maxs]: the one ClipSweepToBrush uses.
inline float PushedDist(const maps::Plane& p, Vec3 mins, Vec3 maxs) {
  return p.dist - BoxPlaneOffset(p.normal, mins, maxs);
}

// Signed separation of the box at `origin` from the brush: the largest distance of the origin in
// front of a pushed-out plane (> 0: apart by at least that much; < 0: penetrating that deep).
float BoxSeparation(Vec3 origin, Vec3 mins, Vec3 maxs, const maps::Plane* planes,
                     int num_planes);

}  // namespace collision
