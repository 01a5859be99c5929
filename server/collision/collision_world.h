// CollisionWorld: the map's solid brushes as Bullet collision shapes, and the queries the game
// needs (box sweep "trace", point contents, line of sight).
//
// Threading contract: built once by Build(); afterwards every query is const and safe to call
// from any number of threads at the same time. Debian's Bullet is built without BT_THREADSAFE
// (see shared NOTES), so this class never calls btCollisionWorld's shared query paths; the
// broadphase is our own immutable structure and each query uses stack-local Bullet objects.
#pragma once

#include <memory>

#include "maps/map.h"
#include "server/core/bounds.h"
#include "server/core/vec3.h"

namespace collision {

using core::Bounds;
using core::Vec3;

// Result of sweeping a box from start to end (Quake's trace_t).
struct Trace {
  float fraction = 1.0f;  // 0..1 of the way to `end` that the box can move without touching
  Vec3 end;               // start + fraction * (end - start), backed off slightly from the surface
  Vec3 normal;            // surface normal at the hit (zero if nothing was hit)
  bool start_solid = false;  // the box started inside a solid brush
  bool all_solid = false;    // the box never left solid (fraction is 0)
  int brush = -1;            // index into Map::brushes of what was hit, -1 if nothing
  bool hit() const { return fraction < 1.0f; }
};

class CollisionWorld {
 public:
  // Builds shapes for every brush of `map` whose contents is kSolid. `map` must outlive nothing:
  // the world copies what it needs.
  static std::unique_ptr<CollisionWorld> Build(const maps::Map& map);
  virtual ~CollisionWorld() = default;

  // Sweeps the box [mins, maxs] (relative to the moving origin) from `start` to `end` against
  // solid brushes. A zero-size box is a ray. Thread-safe.
  virtual Trace TraceBox(Vec3 start, Vec3 end, Vec3 mins, Vec3 maxs) const = 0;

  // Contents at point `p` (kSolid if inside any solid brush, else kLiquid/kEmpty). Thread-safe.
  virtual maps::Contents PointContents(Vec3 p) const = 0;

  // True if the segment a..b crosses no solid brush. Thread-safe.
  virtual bool LineOfSight(Vec3 a, Vec3 b) const = 0;

  // Bounds of all solid geometry.
  virtual Bounds WorldBounds() const = 0;
};

}  // namespace collision
