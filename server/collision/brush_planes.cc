// Bevel plane generation for box sweeps against convex brushes.
#include "server/collision/brush_planes.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
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

// Whether the plane with normal n that supports the vertices (*dist = MaxProjection) passes
// within kOnPlane of both a and b, two of them. The scan stops at the first vertex that lies
// more than kOnPlane beyond a: the maximum can only be larger, so the answer is no. Otherwise it
// reads every vertex, and *dist is MaxProjection's, bit for bit.
bool SupportsAlong(const std::vector<Vec3>& vertices, Vec3 n, Vec3 a, Vec3 b, float* dist) {
  const float on_a = Dot(n, a);
  float best = -std::numeric_limits<float>::max();
  for (Vec3 v : vertices) {
    best = std::max(best, Dot(n, v));
    if (best - on_a > kOnPlane) return false;
  }
  *dist = best;
  return !(std::fabs(on_a - best) > kOnPlane || std::fabs(Dot(n, b) - best) > kOnPlane);
}

bool HasNormal(const std::vector<maps::Plane>& planes, size_t first, Vec3 n) {
  for (size_t i = first; i < planes.size(); ++i) {
    if (Dot(planes[i].normal, n) > kSameNormal) return true;
  }
  return false;
}

// Adds the plane {n, dist}, unless out[first..] has one with that normal.
void AddPlane(Vec3 n, float dist, size_t first, std::vector<maps::Plane>* out) {
  if (!HasNormal(*out, first, n)) out->push_back({n, dist});
}

bool OnPlane(const maps::Plane& p, Vec3 v) {
  return std::fabs(Dot(p.normal, v) - p.dist) < kOnPlane;
}

// A pair of the brush's planes that share at least two vertices (an edge), with the first and
// the last of those vertices in vertex order.
struct Edge {
  uint32_t i, j;  // plane indices, i < j
  Vec3 a, b;      // first and last shared vertex
};

// The brush's edges in (i, j) order. A pair of planes shares a vertex only if both hold it, so
// each vertex's list of planes gives every pair it lies on: the work is (vertices x planes) plus
// the pairs, not (planes x planes x vertices), which took a brush of 256 faces about 20 ms.
// OnPlane decides, as before, which vertex lies on which plane.
std::vector<Edge> FindEdges(const maps::Brush& brush) {
  const auto& planes = brush.planes;
  const auto& vertices = brush.vertices;
  struct Shared {
    uint64_t pair;  // i << 32 | j
    uint32_t vertex;
  };
  std::vector<Shared> shared;
  std::vector<uint32_t> on;
  for (uint32_t v = 0; v < vertices.size(); ++v) {
    on.clear();
    for (uint32_t p = 0; p < planes.size(); ++p) {
      if (OnPlane(planes[p], vertices[v])) on.push_back(p);
    }
    for (size_t x = 0; x < on.size(); ++x) {
      for (size_t y = x + 1; y < on.size(); ++y) {
        shared.push_back({uint64_t{on[x]} << 32 | on[y], v});
      }
    }
  }
  // By pair, then vertex: each pair's run starts at its first vertex and ends at its last.
  std::sort(shared.begin(), shared.end(), [](const Shared& x, const Shared& y) {
    return x.pair != y.pair ? x.pair < y.pair : x.vertex < y.vertex;
  });
  std::vector<Edge> edges;
  for (size_t k = 0; k < shared.size();) {
    size_t end = k + 1;
    while (end < shared.size() && shared[end].pair == shared[k].pair) ++end;
    if (end - k >= 2) {
      edges.push_back({static_cast<uint32_t>(shared[k].pair >> 32),
                       static_cast<uint32_t>(shared[k].pair), vertices[shared[k].vertex],
                       vertices[shared[end - 1].vertex]});
    }
    k = end;
  }
  return edges;
}

}  // namespace

void AppendClipPlanes(const maps::Brush& brush, std::vector<maps::Plane>* out) {
  const size_t first = out->size();
  for (const maps::Plane& p : brush.planes) {
    AddPlane(p.normal, p.dist, first, out);
  }
  for (int axis = 0; axis < 3; ++axis) {
    for (float sign : {1.0f, -1.0f}) {
      Vec3 n;
      n[axis] = sign;
      if (!HasNormal(*out, first, n)) out->push_back({n, MaxProjection(brush.vertices, n)});
    }
  }
  // Edge bevels: an edge is where two faces share at least two vertices; its direction runs
  // from the first of them to the last.
  for (const Edge& e : FindEdges(brush)) {
    const Vec3 a = e.a, b = e.b;
    Vec3 edge = core::Normalize(b - a);
    if (edge == Vec3{}) continue;
    for (int axis = 0; axis < 3; ++axis) {
      Vec3 unit;
      unit[axis] = 1.0f;
      Vec3 n = core::Normalize(Cross(edge, unit));
      if (Length(n) < 0.5f) continue;  // edge parallel to the axis: no bevel
      for (Vec3 candidate : {n, -n}) {
        // Only a plane that touches the brush along this edge is a face of brush (+) box. Its
        // dist is SupportsAlong's, MaxProjection's bit for bit.
        float dist;
        if (!SupportsAlong(brush.vertices, candidate, a, b, &dist)) continue;
        AddPlane(candidate, dist, first, out);
      }
    }
  }
}

}  // namespace collision
