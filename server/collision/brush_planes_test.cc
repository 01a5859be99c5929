// AppendClipPlanes finds a brush's edges from each vertex's planes. This checks it against the
// search it replaced, every pair of planes against every vertex: the same planes, in the same
// order, bit for bit, on every brush of every map we ship, on random brushes and on near-spheres
// of 64 and 256 faces (the audit's hostile brushes, where the pair search took ~20 ms a brush).
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "maps/map_loader.h"
#include "server/collision/brush_planes.h"
#include "server/collision/collision_test_util.h"

namespace collision {
namespace {

using core::Vec3;

// The pair search, as brush_planes.cc had it before 2026-11-30: the oracle.
constexpr float kOnPlane = 0.01f;
constexpr float kSameNormal = 0.99999f;

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

void AddSupporting(const maps::Brush& brush, Vec3 n, std::vector<maps::Plane>* out) {
  if (!HasNormal(*out, 0, n)) out->push_back({n, MaxProjection(brush.vertices, n)});
}

std::vector<maps::Plane> PairSearch(const maps::Brush& brush) {
  std::vector<maps::Plane> out;
  for (const maps::Plane& p : brush.planes) {
    if (!HasNormal(out, 0, p.normal)) out.push_back(p);
  }
  for (int axis = 0; axis < 3; ++axis) {
    for (float sign : {1.0f, -1.0f}) {
      Vec3 n;
      n[axis] = sign;
      AddSupporting(brush, n, &out);
    }
  }
  const auto& planes = brush.planes;
  for (size_t i = 0; i < planes.size(); ++i) {
    for (size_t j = i + 1; j < planes.size(); ++j) {
      Vec3 a, b;
      int count = 0;
      for (Vec3 v : brush.vertices) {
        if (std::fabs(Dot(planes[i].normal, v) - planes[i].dist) < kOnPlane &&
            std::fabs(Dot(planes[j].normal, v) - planes[j].dist) < kOnPlane) {
          if (count == 0) a = v;
          else b = v;
          ++count;
        }
      }
      if (count < 2) continue;
      Vec3 edge = core::Normalize(b - a);
      if (edge == Vec3{}) continue;
      for (int axis = 0; axis < 3; ++axis) {
        Vec3 unit;
        unit[axis] = 1.0f;
        Vec3 n = core::Normalize(Cross(edge, unit));
        if (Length(n) < 0.5f) continue;
        for (Vec3 candidate : {n, -n}) {
          float dist = MaxProjection(brush.vertices, candidate);
          if (std::fabs(Dot(candidate, a) - dist) > kOnPlane ||
              std::fabs(Dot(candidate, b) - dist) > kOnPlane) {
            continue;
          }
          AddSupporting(brush, candidate, &out);
        }
      }
    }
  }
  return out;
}

// The same planes in the same order, compared as bytes (a NaN would not equal itself).
void CheckSamePlanes(const maps::Brush& brush) {
  std::vector<maps::Plane> got;
  AppendClipPlanes(brush, &got);
  const std::vector<maps::Plane> want = PairSearch(brush);
  REQUIRE(got.size() == want.size());
  for (size_t k = 0; k < got.size(); ++k) {
    INFO("plane " << k);
    CHECK(std::memcmp(&got[k].normal, &want[k].normal, sizeof(Vec3)) == 0);
    CHECK(std::memcmp(&got[k].dist, &want[k].dist, sizeof(float)) == 0);
  }
}

}  // namespace

TEST_CASE("clip planes: every brush of every shipped map gets the pair search's planes") {
  for (const std::string& path : testing::ShippedMaps()) {
    INFO(path);
    maps::Map map;
    REQUIRE(maps::LoadMap(path, &map).ok());
    REQUIRE(!map.brushes.empty());
    for (const maps::Brush& brush : map.brushes) CheckSamePlanes(brush);
  }
}

TEST_CASE("clip planes: random brushes get the pair search's planes") {
  for (uint32_t seed : {1u, 2u, 3u}) {
    const maps::Map map = testing::RandomMap(seed, 200);
    for (const maps::Brush& brush : map.brushes) CheckSamePlanes(brush);
  }
}

TEST_CASE("clip planes: near-spheres of many faces get the pair search's planes") {
  for (int faces : {64, 256}) {
    INFO(faces << " faces");
    maps::Map map;
    REQUIRE(maps::ParseMap(testing::NearSpheresMapText(faces, {{0, 0, 512}}), "sphere", &map).ok());
    REQUIRE(map.brushes.size() == 1);
    CHECK(map.brushes[0].planes.size() > static_cast<size_t>(faces) * 9 / 10);  // few dropped
    CheckSamePlanes(map.brushes[0]);
  }
}

}  // namespace collision
