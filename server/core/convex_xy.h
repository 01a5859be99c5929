// ConvexXY: a convex polygon in the XY plane (Z ignored), for regions that are long and thin in
// an arbitrary direction, where the bounding box would hold the whole rectangle around them (a
// shotgun's cone aimed diagonally across a map). Plain value type, fixed capacity, no allocation.
#pragma once

#include <span>

#include "server/core/bounds.h"
#include "server/core/vec3.h"

namespace core {

class ConvexXY {
 public:
  static constexpr int kMaxVertices = 20;

  // The empty polygon: it contains and intersects nothing.
  ConvexXY() = default;
  // The convex hull, in XY, of `rect` swept by every offset: the set {p + o : p in rect,
  // o in hull(offsets)}. Z is ignored throughout. Invariant: 1 <= offsets.size() <= 5, every
  // value finite, and `rect` has a positive area in XY.
  static ConvexXY SweptRect(const Bounds& rect, std::span<const Vec3> offsets);

  bool empty() const { return count_ == 0; }
  int size() const { return count_; }
  // Vertex i, counter-clockwise (z = 0).
  Vec3 vertex(int i) const { return Vec3{x_[i], y_[i], 0}; }

  // True if p's XY lies inside or on the polygon.
  bool Contains(Vec3 p) const;
  // True if the XY rectangle of `box` lies inside or on the polygon.
  bool Contains(const Bounds& box) const;
  // True if the XY rectangle of `box` comes within `slack` units of the polygon (slack 0:
  // touching counts). The box may have faces at +-1e30 (a region open beyond the world's edge).
  bool Intersects(const Bounds& box, float slack) const;

 private:
  int count_ = 0;
  float x_[kMaxVertices] = {};
  float y_[kMaxVertices] = {};
  // Edge i (vertex i to i + 1) as a half-plane nx * x + ny * y <= d, with (nx, ny) a unit
  // outward normal, so `slack` is in units.
  float nx_[kMaxVertices] = {};
  float ny_[kMaxVertices] = {};
  float d_[kMaxVertices] = {};
  // The vertices' XY bounds, the first two separating axes (Intersects runs per tree node).
  float lo_x_ = 0, hi_x_ = 0, lo_y_ = 0, hi_y_ = 0;
};

}  // namespace core
