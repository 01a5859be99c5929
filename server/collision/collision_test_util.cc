// Test helpers for as_collision (see collision_test_util.h).
#include "server/collision/collision_test_util.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace collision::testing {

maps::Brush BrushFromPlanes(std::vector<maps::Plane> planes, maps::Contents contents) {
  maps::Brush brush;
  for (maps::Plane& p : planes) {
    const float len = Length(p.normal);
    p.normal = p.normal * (1.0f / len);
    p.dist /= len;
  }
  brush.planes = planes;
  brush.contents = contents;
  brush.bounds = Bounds::Empty();
  const size_t n = planes.size();
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = i + 1; j < n; ++j) {
      for (size_t k = j + 1; k < n; ++k) {
        const Vec3 a = planes[i].normal, b = planes[j].normal, c = planes[k].normal;
        const float det = Dot(a, Cross(b, c));
        if (std::fabs(det) < 1e-6f) continue;
        const Vec3 v = (Cross(b, c) * planes[i].dist + Cross(c, a) * planes[j].dist +
                        Cross(a, b) * planes[k].dist) * (1.0f / det);
        bool inside = true;
        for (const maps::Plane& p : planes) inside = inside && Dot(p.normal, v) - p.dist < 0.01f;
        bool dup = false;
        for (Vec3 w : brush.vertices) dup = dup || Length(w - v) < 0.01f;
        if (inside && !dup) {
          brush.vertices.push_back(v);
          brush.bounds.Add(v);
        }
      }
    }
  }
  return brush;
}

maps::Brush BoxBrush(Vec3 mins, Vec3 maxs, maps::Contents contents) {
  return BrushFromPlanes({{{1, 0, 0}, maxs.x}, {{-1, 0, 0}, -mins.x}, {{0, 1, 0}, maxs.y},
                          {{0, -1, 0}, -mins.y}, {{0, 0, 1}, maxs.z}, {{0, 0, -1}, -mins.z}},
                         contents);
}

maps::Brush WedgeBrush(Vec3 mins, Vec3 maxs) {
  const float dx = maxs.x - mins.x, dz = maxs.z - mins.z;
  const Vec3 slope = Normalize(Vec3{-dz, 0, dx});
  return BrushFromPlanes({{{1, 0, 0}, maxs.x}, {{0, 1, 0}, maxs.y}, {{0, -1, 0}, -mins.y},
                          {{0, 0, -1}, -mins.z}, {slope, Dot(slope, mins)}});
}

maps::Brush DiamondBrush(float cx, float cy, float radius, float z0, float z1) {
  std::vector<maps::Plane> planes = {{{0, 0, 1}, z1}, {{0, 0, -1}, -z0}};
  for (float sx : {1.0f, -1.0f}) {
    for (float sy : {1.0f, -1.0f}) {
      const Vec3 n{sx, sy, 0};
      planes.push_back({n, Dot(n, Vec3{cx, cy, 0}) + radius});
    }
  }
  return BrushFromPlanes(planes);
}

maps::Map MapOf(std::vector<maps::Brush> brushes) {
  maps::Map map;
  map.bounds = Bounds::Empty();
  map.entities.resize(1);
  map.entities[0].classname = "worldspawn";
  for (size_t i = 0; i < brushes.size(); ++i) {
    if (brushes[i].contents == maps::Contents::kSolid) {
      map.bounds.Add(brushes[i].bounds);
      ++map.solid_brushes;
    }
    map.entities[0].brushes.push_back(static_cast<int>(i));
  }
  map.brushes = std::move(brushes);
  return map;
}

bool BoxOverlapsBrush(Vec3 origin, Vec3 mins, Vec3 maxs, const maps::Brush& brush,
                      float tolerance) {
  const Vec3 center = origin + (mins + maxs) * 0.5f, half = (maxs - mins) * 0.5f;
  std::vector<Vec3> axes = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
  for (const maps::Plane& p : brush.planes) axes.push_back(p.normal);
  for (size_t i = 0; i < brush.planes.size(); ++i) {
    for (size_t j = i + 1; j < brush.planes.size(); ++j) {
      const Vec3 edge = Cross(brush.planes[i].normal, brush.planes[j].normal);
      for (int k = 0; k < 3; ++k) {
        Vec3 unit;
        unit[k] = 1;
        const Vec3 axis = Normalize(Cross(edge, unit));
        if (Length(axis) > 0.5f) axes.push_back(axis);
      }
    }
  }
  for (Vec3 a : axes) {
    float lo = std::numeric_limits<float>::max(), hi = -lo;
    for (Vec3 v : brush.vertices) {
      lo = std::min(lo, Dot(a, v));
      hi = std::max(hi, Dot(a, v));
    }
    const float c = Dot(a, center);
    const float r = std::fabs(a.x) * half.x + std::fabs(a.y) * half.y + std::fabs(a.z) * half.z;
    if (std::min(hi - (c - r), (c + r) - lo) <= tolerance) return false;
  }
  return true;
}

int FirstOverlap(const maps::Map& map, Vec3 origin, Vec3 mins, Vec3 maxs, float tolerance) {
  for (size_t i = 0; i < map.brushes.size(); ++i) {
    if (map.brushes[i].contents != maps::Contents::kSolid) continue;
    if (!map.brushes[i].bounds.Intersects(Bounds::At(origin, mins, maxs))) continue;
    if (BoxOverlapsBrush(origin, mins, maxs, map.brushes[i], tolerance)) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

maps::Map RandomMap(uint32_t seed, int num_brushes) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> pos(-1024, 1024), size(16, 256), height(8, 200);
  std::vector<maps::Brush> brushes = {BoxBrush({-1024, -1024, -64}, {1024, 1024, 0})};
  for (int i = 0; i < num_brushes; ++i) {
    const float x = pos(rng), y = pos(rng), z = std::uniform_real_distribution<float>(0, 300)(rng);
    const Vec3 mins{x, y, z}, maxs{x + size(rng), y + size(rng), z + height(rng)};
    switch (i % 3) {
      case 0: brushes.push_back(BoxBrush(mins, maxs)); break;
      case 1: brushes.push_back(WedgeBrush(mins, maxs)); break;
      default: brushes.push_back(DiamondBrush(x, y, size(rng) * 0.5f, z, maxs.z)); break;
    }
  }
  brushes.push_back(BoxBrush({0, 0, 0}, {128, 128, 64}, maps::Contents::kLiquid));
  return MapOf(std::move(brushes));
}

std::vector<Query> RandomQueries(const maps::Map& map, uint32_t seed, int count) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> unit(0, 1), dir(-1, 1);
  const Vec3 hulls[3][2] = {{{-16, -16, -24}, {16, 16, 32}}, {{0, 0, 0}, {0, 0, 0}},
                            {{-4, -4, -4}, {4, 4, 4}}};
  const Bounds& b = map.bounds;
  std::vector<Query> queries;
  for (int i = 0; i < count; ++i) {
    Query q;
    const Vec3 size = b.Size();
    q.start = {b.mins.x + unit(rng) * size.x, b.mins.y + unit(rng) * size.y,
               unit(rng) * 500.0f - 20.0f};
    const float length = i % 4 == 0 ? 300.0f * unit(rng) : 40.0f * unit(rng);
    q.end = q.start + Normalize(Vec3{dir(rng), dir(rng), dir(rng)}) * length;
    q.mins = hulls[i % 3][0];
    q.maxs = hulls[i % 3][1];
    queries.push_back(q);
  }
  return queries;
}

std::vector<std::string> ShippedMaps() {
  return {"maps/dm_arena.map",         "maps/dm_small.map",         "maps/metropolis.map",
          "maps/librequake/lqdm1.map", "maps/librequake/lqdm3.map", "maps/librequake/lqdm6.map"};
}

std::string NearSpheresMapText(int faces, const std::vector<Vec3>& centres) {
  std::string text = "{\n\"classname\" \"worldspawn\"\n";
  const double golden = M_PI * (3 - std::sqrt(5.0));
  for (Vec3 c : centres) {
    text += "{\n";
    for (int i = 0; i < faces; ++i) {
      const double z = 1 - 2 * (i + 0.5) / faces, r = std::sqrt(1 - z * z), t = golden * i;
      const double n[3] = {r * std::cos(t), r * std::sin(t), z};
      const double a[3] = {std::fabs(n[0]) < 0.9 ? 1.0 : 0.0, std::fabs(n[0]) < 0.9 ? 0.0 : 1.0,
                           0};
      double u[3] = {n[1] * a[2] - n[2] * a[1], n[2] * a[0] - n[0] * a[2],
                     n[0] * a[1] - n[1] * a[0]};
      const double ul = std::sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
      for (double& x : u) x /= ul;
      const double v[3] = {n[1] * u[2] - n[2] * u[1], n[2] * u[0] - n[0] * u[2],
                           n[0] * u[1] - n[1] * u[0]};
      double p[3][3];
      const double coef[3][2] = {{0, 0}, {1, 0}, {0, 1}};
      for (int k = 0; k < 3; ++k) {
        for (int j = 0; j < 3; ++j) {
          p[k][j] = c[j] + 256 * n[j] + 64 * (coef[k][0] * u[j] + coef[k][1] * v[j]);
        }
      }
      char line[256];
      std::snprintf(line, sizeof line,
                    "( %.2f %.2f %.2f ) ( %.2f %.2f %.2f ) ( %.2f %.2f %.2f ) t 0 0 0 1 1\n",
                    p[1][0], p[1][1], p[1][2], p[0][0], p[0][1], p[0][2], p[2][0], p[2][1],
                    p[2][2]);
      text += line;
    }
    text += "}\n";
  }
  return text + "}\n";
}

}  // namespace collision::testing
