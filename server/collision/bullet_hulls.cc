// GJK ray cast of the Minkowski difference (btSubsimplexConvexCast) of a stack-local btBoxShape
// against a shared, immutable btConvexHullShape. btGjkConvexCast fails with zero margins, and
// also bumps Bullet's global gNumGjkChecks counter; the subsimplex cast does neither.
// No btCollisionWorld is involved, so nothing shared is written.
#include "server/collision/bullet_hulls.h"

#include <btBulletCollisionCommon.h>
#include <BulletCollision/NarrowPhaseCollision/btSubSimplexConvexCast.h>
#include <BulletCollision/NarrowPhaseCollision/btVoronoiSimplexSolver.h>

#include <algorithm>

namespace collision {

BulletHulls::BulletHulls() = default;
BulletHulls::~BulletHulls() = default;

int BulletHulls::Add(const maps::Brush& brush) {
  auto hull = std::make_unique<btConvexHullShape>();
  for (Vec3 v : brush.vertices) hull->addPoint(btVector3(v.x, v.y, v.z), false);
  hull->recalcLocalAabb();
  hull->setMargin(0);
  hulls_.push_back(std::move(hull));
  return static_cast<int>(hulls_.size()) - 1;
}

bool BulletHulls::CastBox(const Sweep& sweep, int slot, float* fraction, Vec3* normal) const {
  const Vec3 half = (sweep.maxs - sweep.mins) * 0.5f;
  const Vec3 center = (sweep.maxs + sweep.mins) * 0.5f;
  btBoxShape box(btVector3(half.x, half.y, half.z));
  box.setMargin(0);
  btSphereShape point(0);
  const bool is_ray = half == Vec3{};
  btConvexShape* cast_shape = is_ray ? static_cast<btConvexShape*>(&point) : &box;

  btVoronoiSimplexSolver simplex;
  btSubsimplexConvexCast cast(cast_shape, hulls_[slot].get(), &simplex);
  btConvexCast::CastResult result;
  btTransform from, to, fixed;
  from.setIdentity();
  to.setIdentity();
  fixed.setIdentity();
  const Vec3 a = sweep.start + center, b = sweep.end + center;
  from.setOrigin(btVector3(a.x, a.y, a.z));
  to.setOrigin(btVector3(b.x, b.y, b.z));
  if (!cast.calcTimeOfImpact(from, to, fixed, fixed, result)) return false;
  if (result.m_fraction > 1) return false;
  btVector3 n = result.m_normal;
  if (n.length2() < 1e-12f) return false;
  n.normalize();
  const Vec3 out{n.x(), n.y(), n.z()};
  const float approach = -Dot(sweep.end - sweep.start, out);  // units moved into the surface
  if (approach <= 0) return false;  // moving away or sliding along
  *fraction = std::max(0.0f, result.m_fraction - kDistEpsilon / approach);
  *normal = out;
  return true;
}

}  // namespace collision
