// ClipSweepToBrush stops at the first plane after which the brush can no longer lower the
// trace's fraction (2026-12-01). This checks it against the loop as it was before, which read
// every plane (the oracle): the same trace, bit for bit, for sweeps of a player's box, a point and
// a small box against every brush of the maps we ship, of a random map and of near-spheres, from
// a fresh trace and from one an earlier brush lowered. It also checks the promise LineOfSight
// relies on: a subset of a brush's planes that leaves a fresh trace clear proves that the whole
// set leaves it clear.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "maps/map_loader.h"
#include "server/collision/brush_clip.h"
#include "server/collision/brush_planes.h"
#include "server/collision/collision_test_util.h"

namespace collision {
namespace {

// ClipSweepToBrush as it was before 2026-12-01, reading every plane: the oracle.
void ClipEveryPlane(const Sweep& sweep, const maps::Plane* planes, int num_planes,
                    int brush_index, Trace* trace) {
  float enter = -1.0f, leave = 1.0f;
  const maps::Plane* clip = nullptr;
  bool start_out = false, get_out = false;
  for (int i = 0; i < num_planes; ++i) {
    const maps::Plane& p = planes[i];
    const float dist = p.dist - BoxPlaneOffset(p.normal, sweep.mins, sweep.maxs);
    const float d1 = Dot(p.normal, sweep.start) - dist;
    const float d2 = Dot(p.normal, sweep.end) - dist;
    if (d2 > 0) get_out = true;
    if (d1 > -kTouchEpsilon) {
      start_out = true;
      if (d2 >= d1 || (d1 > 0 && d2 > 0)) return;
      const float f = std::max(0.0f, (d1 - kDistEpsilon) / (d1 - d2));
      if (f > enter) {
        enter = f;
        clip = &p;
      }
    } else if (d2 > 0) {
      leave = std::min(leave, (d1 + kDistEpsilon) / (d1 - d2));
    }
  }
  if (!start_out) {
    trace->start_solid = true;
    if (!get_out) {
      trace->all_solid = true;
      trace->fraction = 0;
      trace->brush = brush_index;
    }
    return;
  }
  if (clip != nullptr && enter < leave && enter < trace->fraction) {
    trace->fraction = enter;
    trace->normal = clip->normal;
    trace->brush = brush_index;
  }
}

bool SameTrace(const Trace& a, const Trace& b) {
  return std::memcmp(&a.fraction, &b.fraction, sizeof a.fraction) == 0 &&
         std::memcmp(&a.normal, &b.normal, sizeof a.normal) == 0 && a.brush == b.brush &&
         a.start_solid == b.start_solid && a.all_solid == b.all_solid;
}

bool Clear(const Trace& t) { return !t.hit() && !t.start_solid; }

struct Tally {
  int sweeps = 0, hits = 0, start_solid = 0, lowered_before = 0;
  int subset_clear = 0, subset_not_clear_full_clear = 0;
};

// `count` sweeps about `brush`: both ends within its box grown by 96 units (so some start inside
// it), of three hulls; every third from a trace an earlier brush lowered. Each is clipped by
// ClipSweepToBrush and by the oracle, and by a random subset of the planes.
void CheckBrush(const maps::Brush& brush, std::mt19937* rng, int count, Tally* tally) {
  if (brush.planes.size() < 4 || brush.vertices.size() < 4) return;  // no volume: not clipped
  std::vector<maps::Plane> planes;
  AppendClipPlanes(brush, &planes);
  const int n = static_cast<int>(planes.size());
  Bounds box = Bounds::Empty();
  for (Vec3 v : brush.vertices) box.Add(v);
  std::uniform_real_distribution<float> ux(box.mins.x - 96, box.maxs.x + 96),
      uy(box.mins.y - 96, box.maxs.y + 96), uz(box.mins.z - 96, box.maxs.z + 96), unit(0, 1);
  const Vec3 hulls[3][2] = {{{-16, -16, -24}, {16, 16, 32}}, {{0, 0, 0}, {0, 0, 0}},
                            {{-4, -4, -4}, {4, 4, 4}}};
  for (int i = 0; i < count; ++i) {
    Sweep s;
    s.start = {ux(*rng), uy(*rng), uz(*rng)};
    s.end = {ux(*rng), uy(*rng), uz(*rng)};
    if (i % 4 == 3) s.end = s.start + (s.end - s.start) * 0.05f;  // a short step
    s.mins = hulls[i % 3][0];
    s.maxs = hulls[i % 3][1];
    Trace got, want;
    if (i % 3 == 2) {  // an earlier brush was hit at a random fraction
      got.fraction = want.fraction = unit(*rng);
      got.normal = want.normal = Vec3{0, 0, 1};
      got.brush = want.brush = 9999;
      ++tally->lowered_before;
    }
    ClipSweepToBrush(s, planes.data(), n, 7, &got);
    ClipEveryPlane(s, planes.data(), n, 7, &want);
    INFO("sweep " << s.start.x << " " << s.start.y << " " << s.start.z << " -> " << s.end.x << " "
                  << s.end.y << " " << s.end.z << " hull " << i % 3);
    REQUIRE(SameTrace(got, want));
    ++tally->sweeps;
    tally->hits += want.fraction < 1 && want.brush == 7 ? 1 : 0;
    tally->start_solid += want.start_solid ? 1 : 0;

    std::vector<maps::Plane> subset;
    for (const maps::Plane& p : planes) {
      if (unit(*rng) < 0.25f) subset.push_back(p);
    }
    if (subset.empty()) subset.push_back(planes[i % n]);
    Trace from_subset, from_all;
    ClipSweepToBrush(s, subset.data(), static_cast<int>(subset.size()), 7, &from_subset);
    ClipEveryPlane(s, planes.data(), n, 7, &from_all);
    if (Clear(from_subset)) {
      ++tally->subset_clear;
      REQUIRE(Clear(from_all));
    } else if (Clear(from_all)) {
      ++tally->subset_not_clear_full_clear;  // a subset may fail to prove what the set shows
    }
  }
}

void CheckMapBrushes(const maps::Map& map, uint32_t seed, int per_brush, Tally* tally) {
  std::mt19937 rng(seed);
  for (const maps::Brush& brush : map.brushes) CheckBrush(brush, &rng, per_brush, tally);
}

}  // namespace

TEST_CASE("a clip that stops early leaves the trace as reading every plane does: shipped maps") {
  const std::string path = GENERATE(from_range(testing::ShippedMaps()));
  INFO(path);
  maps::Map map;
  REQUIRE(maps::LoadMap(path, &map).ok());
  Tally t;
  CheckMapBrushes(map, 41, 12, &t);
  CHECK(t.hits > t.sweeps / 20);
  CHECK(t.start_solid > 0);
  CHECK(t.subset_clear > t.sweeps / 20);
}

TEST_CASE("a clip that stops early leaves the trace as reading every plane does: random map and "
          "near-spheres") {
  Tally t;
  CheckMapBrushes(testing::RandomMap(5, 200), 43, 40, &t);
  for (int faces : {64, 256}) {
    INFO(faces << " faces");
    maps::Map map;
    REQUIRE(maps::ParseMap(testing::NearSpheresMapText(faces, {{0, 0, 512}}), "sphere", &map).ok());
    REQUIRE(map.brushes.size() == 1);
    CheckMapBrushes(map, 47 + faces, 4000, &t);
  }
  CHECK(t.hits > t.sweeps / 10);
  CHECK(t.start_solid > 100);
  CHECK(t.lowered_before > t.sweeps / 4);
  CHECK(t.subset_clear > t.sweeps / 4);
  CHECK(t.subset_not_clear_full_clear > 100);
}

}  // namespace collision
