// BulletHulls: one btConvexHullShape per solid brush, and a GJK (subsimplex) convex cast of a
// box against one of them: CollisionWorld's alternative narrow phase (Narrowphase::kBulletHull),
// kept to measure against the exact plane clipper. Shapes are immutable after construction;
// CastBox() uses only stack-local Bullet objects, so it is safe from any number of threads.
#pragma once

#include <memory>
#include <vector>

#include "maps/map.h"
#include "server/collision/brush_clip.h"

class btConvexHullShape;

namespace collision {

class BulletHulls {
 public:
  BulletHulls();
  ~BulletHulls();
  BulletHulls(const BulletHulls&) = delete;
  BulletHulls& operator=(const BulletHulls&) = delete;

  // Adds the hull of `brush` (its vertices, zero margin); returns its slot.
  int Add(const maps::Brush& brush);

  // Casts the box of `sweep` against hull `slot`. On a hit that moves into the surface, returns
  // true with the fraction backed off by kDistEpsilon along the normal, and the normal (out of
  // the brush). The caller has already ruled out a start inside the brush.
  bool CastBox(const Sweep& sweep, int slot, float* fraction, Vec3* normal) const;

 private:
  std::vector<std::unique_ptr<btConvexHullShape>> hulls_;
};

}  // namespace collision
