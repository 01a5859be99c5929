// ConvexXY: hull construction (Andrew's monotone chain) and the separating-axis tests.
#include "server/core/convex_xy.h"

#include <algorithm>
#include <cmath>

#include "server/core/check.h"

namespace core {

namespace {

struct P2 {
  float x, y;
};

float Turn(P2 o, P2 a, P2 b) { return (a.x - o.x) * (b.y - o.y) - (a.y - o.y) * (b.x - o.x); }

}  // namespace

ConvexXY ConvexXY::SweptRect(const Bounds& rect, std::span<const Vec3> offsets) {
  AS_CHECK(!offsets.empty() && offsets.size() <= 5 && rect.mins.x < rect.maxs.x &&
               rect.mins.y < rect.maxs.y,
           "ConvexXY::SweptRect: bad input");
  // The hull of a Minkowski sum is the hull of every corner plus every offset.
  P2 pts[4 * 5];
  int n = 0;
  for (const Vec3& o : offsets) {
    AS_CHECK(IsFinite(o), "ConvexXY::SweptRect: offset not finite");
    for (float cx : {rect.mins.x, rect.maxs.x}) {
      for (float cy : {rect.mins.y, rect.maxs.y}) pts[n++] = {cx + o.x, cy + o.y};
    }
  }
  std::sort(pts, pts + n, [](P2 a, P2 b) { return a.x < b.x || (a.x == b.x && a.y < b.y); });
  P2 hull[2 * 4 * 5];
  int k = 0;
  for (int i = 0; i < n; ++i) {  // lower chain, left to right
    while (k >= 2 && Turn(hull[k - 2], hull[k - 1], pts[i]) <= 0) --k;
    hull[k++] = pts[i];
  }
  for (int i = n - 2, lower = k + 1; i >= 0; --i) {  // upper chain, right to left
    while (k >= lower && Turn(hull[k - 2], hull[k - 1], pts[i]) <= 0) --k;
    hull[k++] = pts[i];
  }
  ConvexXY c;
  c.count_ = std::min(k - 1, kMaxVertices);  // the last point repeats the first
  AS_CHECK(c.count_ >= 3, "ConvexXY::SweptRect: degenerate hull");
  c.lo_x_ = c.hi_x_ = hull[0].x;
  c.lo_y_ = c.hi_y_ = hull[0].y;
  for (int i = 0; i < c.count_; ++i) {
    c.x_[i] = hull[i].x;
    c.y_[i] = hull[i].y;
    c.lo_x_ = std::min(c.lo_x_, hull[i].x);
    c.hi_x_ = std::max(c.hi_x_, hull[i].x);
    c.lo_y_ = std::min(c.lo_y_, hull[i].y);
    c.hi_y_ = std::max(c.hi_y_, hull[i].y);
  }
  for (int i = 0; i < c.count_; ++i) {
    const int j = (i + 1) % c.count_;
    const float ex = c.x_[j] - c.x_[i], ey = c.y_[j] - c.y_[i];
    const float len = std::sqrt(ex * ex + ey * ey);
    c.nx_[i] = ey / len;  // counter-clockwise: outward is the edge turned clockwise
    c.ny_[i] = -ex / len;
    c.d_[i] = c.nx_[i] * c.x_[i] + c.ny_[i] * c.y_[i];
  }
  return c;
}

bool ConvexXY::Contains(Vec3 p) const {
  if (count_ == 0) return false;
  for (int i = 0; i < count_; ++i) {
    if (nx_[i] * p.x + ny_[i] * p.y > d_[i]) return false;
  }
  return true;
}

bool ConvexXY::Contains(const Bounds& box) const {
  if (count_ == 0) return false;
  for (int i = 0; i < count_; ++i) {  // the corner farthest along each outward normal
    const float fx = nx_[i] > 0 ? box.maxs.x : box.mins.x;
    const float fy = ny_[i] > 0 ? box.maxs.y : box.mins.y;
    if (nx_[i] * fx + ny_[i] * fy > d_[i]) return false;
  }
  return true;
}

// Separating axes of a convex polygon and a rectangle: X, Y and the polygon's edge normals.
bool ConvexXY::Intersects(const Bounds& box, float slack) const {
  if (count_ == 0) return false;
  if (box.mins.x > hi_x_ + slack || box.maxs.x < lo_x_ - slack) return false;
  if (box.mins.y > hi_y_ + slack || box.maxs.y < lo_y_ - slack) return false;
  for (int i = 0; i < count_; ++i) {  // the corner nearest along each outward normal
    const float nx = nx_[i] > 0 ? box.mins.x : box.maxs.x;
    const float ny = ny_[i] > 0 ? box.mins.y : box.maxs.y;
    if (nx_[i] * nx + ny_[i] * ny > d_[i] + slack) return false;
  }
  return true;
}

}  // namespace core
