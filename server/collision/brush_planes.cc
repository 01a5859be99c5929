// Bevel plane generation for box sweeps against convex brushes.
#include "server/collision/brush_planes.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace collision {
namespace {

using core::Vec3;

constexpr float kOnPlane = 0.01f;        // a vertex this close to a plane lies on it (units)
constexpr float kSameNormal = 0.99999f;  // cosine above which two normals count as equal

float MaxProjection(const std::vector<Vec3>& vertices, Vec3 n) {
  float best = -std::numeric_limits<float>::max();
  for (Vec3 v : vertices) best = std::max(best, Dot(n, v));
  return best;
}

bool HasNormal(const std::vector<maps::Plane>& planes, size_t first, Vec3 n) {
  for (size_t i = first; i < planes.size(); ++i) {
    if (Dot(planes[i].normal, n) > kSameNormal) return true;
  }
  return false;
}

// Adds the plane with unit normal `n` supporting the brush, unless one with that normal exists.
void AddSupportingPlane(const maps::Brush& brush, Vec3 n, size_t first,
                        std::vector<maps::Plane>* out) {
  if (HasNormal(*out, first, n)) return;
  out->push_back({n, MaxProjection(brush.vertices, n)});
}

// Counts the brush vertices on both `p` and `q` (an edge); stores the first two in a and b.
int CountOnPlane(const std::vector<Vec3>& vertices, const maps::Plane& p, const maps::Plane& q,
                 Vec3* a, Vec3* b) {
  int count = 0;
  for (Vec3 v : vertices) {
    if (std::fabs(Dot(p.normal, v) - p.dist) < kOnPlane &&
        std::fabs(Dot(q.normal, v) - q.dist) < kOnPlane) {
      if (count == 0) *a = v;
      else *b = v;
      ++count;
    }
  }
  return count;
}

}  // namespace

void AppendClipPlanes(const maps::Brush& brush, std::vector<maps::Plane>* out) {
  const size_t first = out->size();
  for (const maps::Plane& p : brush.planes) {
    if (!HasNormal(*out, first, p.normal)) out->push_back(p);
  }
  for (int axis = 0; axis < 3; ++axis) {
    for (float sign : {1.0f, -1.0f}) {
      Vec3 n;
      n[axis] = sign;
      AddSupportingPlane(brush, n, first, out);
    }
  }
  // Edge bevels: an edge is where two faces share at least two vertices.
  const auto& planes = brush.planes;
  for (size_t i = 0; i < planes.size(); ++i) {
    for (size_t j = i + 1; j < planes.size(); ++j) {
      Vec3 a, b;
      if (CountOnPlane(brush.vertices, planes[i], planes[j], &a, &b) < 2) continue;
      Vec3 edge = core::Normalize(b - a);
      if (edge == Vec3{}) continue;
      for (int axis = 0; axis < 3; ++axis) {
        Vec3 unit;
        unit[axis] = 1.0f;
        Vec3 n = core::Normalize(Cross(edge, unit));
        if (Length(n) < 0.5f) continue;  // edge parallel to the axis: no bevel
        for (Vec3 candidate : {n, -n}) {
          // Only a plane that touches the brush along this edge is a face of brush (+) box.
          float dist = MaxProjection(brush.vertices, candidate);
          if (std::fabs(Dot(candidate, a) - dist) > kOnPlane ||
              std::fabs(Dot(candidate, b) - dist) > kOnPlane) {
            continue;
          }
          AddSupportingPlane(brush, candidate, first, out);
        }
      }
    }
  }
}

}  // namespace collision
