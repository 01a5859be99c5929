// Brush geometry: turns a brush's face planes (three points each) into a convex polyhedron, the
// intersection of the planes' back half-spaces, computed in double precision.
// Internal to as_maps. Pure functions; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "maps/map_parser.h"

namespace maps {

struct DPlane {
  DVec3 normal;  // unit length, out of the brush
  double dist = 0;  // inside is Dot(normal, x) - dist <= 0
};

struct Polyhedron {
  std::vector<DPlane> planes;   // planes that bound a face of non-zero area, in file order
  std::vector<DVec3> vertices;  // corners, welded (no two closer than kWeldEpsilon)
};

// A brush thinner than this along one of its face normals is flat, hence degenerate.
inline constexpr double kMinThickness = 0.01;

// Plane through three points with normal normalize((p0 - p1) x (p2 - p1)) and dist n.p1.
// Returns false if the points are (nearly) collinear or coincident: a zero-area plane.
bool PlaneFromPoints(const DVec3& p0, const DVec3& p1, const DVec3& p2, DPlane* out);

// Builds the polyhedron of `brush`. Duplicate and zero-area planes are dropped, each adding a
// line to `notes`. Returns false with the reason in `why` if the brush is degenerate: fewer than
// 4 distinct planes, an empty, flat or unbounded intersection. O(planes^3).
bool BuildPolyhedron(const RawBrush& brush, Polyhedron* out, std::vector<std::string>* notes,
                     std::string* why);

}  // namespace maps
