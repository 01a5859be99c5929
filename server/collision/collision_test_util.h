// Test helpers for as_collision: brushes built from planes (box, wedge, diamond pillar), a map of
// them, random sweep generation, and an independent exact box-vs-brush overlap test
// (separating axes over the brush vertices) that does not share code with the clipper.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "maps/map.h"
#include "server/collision/collision_world.h"

namespace collision::testing {

// A brush bounded by `planes` (normals normalised here); vertices computed from plane triples.
maps::Brush BrushFromPlanes(std::vector<maps::Plane> planes,
                            maps::Contents contents = maps::Contents::kSolid);
maps::Brush BoxBrush(Vec3 mins, Vec3 maxs, maps::Contents contents = maps::Contents::kSolid);
// A ramp inside [mins, maxs]: floor at mins.z, rising along +x from mins.z (at mins.x) to maxs.z.
maps::Brush WedgeBrush(Vec3 mins, Vec3 maxs);
// A square pillar turned 45 degrees: |x - cx| + |y - cy| <= radius, z in [z0, z1].
maps::Brush DiamondBrush(float cx, float cy, float radius, float z0, float z1);

maps::Map MapOf(std::vector<maps::Brush> brushes);

// True if the box [origin+mins, origin+maxs] and the brush overlap by more than `tolerance`
// units along every separating-axis candidate (touching is not overlapping).
bool BoxOverlapsBrush(Vec3 origin, Vec3 mins, Vec3 maxs, const maps::Brush& brush,
                      float tolerance);
// Same against every kSolid brush of `map`; returns the first overlapping index or -1.
int FirstOverlap(const maps::Map& map, Vec3 origin, Vec3 mins, Vec3 maxs, float tolerance);

// The six maps the project ships (maps/, relative to the source tree), for tests that run on
// every one of them.
std::vector<std::string> ShippedMaps();

// The text of a map of near-spheres of radius 256, one brush per centre: `faces` planes tangent
// at Fibonacci points of the sphere (the audit's generator of hostile brushes), each written as
// three points. Parse it with maps::ParseMap.
std::string NearSpheresMapText(int faces, const std::vector<Vec3>& centres);

// A map of random boxes, wedges and diamonds over [-1024, 1024]^2 with a floor, for random tests.
maps::Map RandomMap(uint32_t seed, int num_brushes);

struct Query {
  Vec3 start, end, mins, maxs;
};
// Random sweeps of mixed hulls (player, zero, small) and lengths inside `map`'s bounds.
std::vector<Query> RandomQueries(const maps::Map& map, uint32_t seed, int count);

}  // namespace collision::testing
