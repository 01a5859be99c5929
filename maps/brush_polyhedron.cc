// Brush geometry (see brush_polyhedron.h). As qbsp's CreateBrushWindings does: each plane starts
// as a huge square lying in it, which is clipped by the back half-space of every other plane. The
// surviving windings are the faces; their corners are the vertices. Doubles throughout, so the
// huge starting squares (kBaseRadius) lose nothing that matters at map scale.
#include "maps/brush_polyhedron.h"

#include <algorithm>
#include <cmath>

namespace maps {
namespace {

constexpr double kBaseRadius = 1e8;        // half-size of the starting square of each face
constexpr double kClipEpsilon = 1e-6;      // points this close to a plane count as on it
constexpr double kWeldEpsilon = 1e-3;      // vertices this close are one vertex
constexpr double kSameNormalDot = 1 - 1e-9;
constexpr double kSameDistEpsilon = 1e-3;
constexpr double kMaxVertexCoord = 2 * kMaxCoord;  // beyond this the planes do not close

using Winding = std::vector<DVec3>;

DVec3 Sub(const DVec3& a, const DVec3& b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }
DVec3 Add(const DVec3& a, const DVec3& b) { return {a.x + b.x, a.y + b.y, a.z + b.z}; }
DVec3 Scale(const DVec3& a, double s) { return {a.x * s, a.y * s, a.z * s}; }
double Dot(const DVec3& a, const DVec3& b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
DVec3 Cross(const DVec3& a, const DVec3& b) {
  return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}
double Length(const DVec3& a) { return std::sqrt(Dot(a, a)); }

// A square of half-size kBaseRadius in `plane`, centred on the point of the plane nearest the
// origin.
Winding BaseWinding(const DPlane& plane) {
  const DVec3& n = plane.normal;
  double ax = std::fabs(n.x), ay = std::fabs(n.y), az = std::fabs(n.z);
  DVec3 up = (az >= ax && az >= ay) ? DVec3{1, 0, 0} : DVec3{0, 0, 1};
  up = Sub(up, Scale(n, Dot(up, n)));
  up = Scale(up, kBaseRadius / Length(up));
  DVec3 right = Cross(up, n);  // length kBaseRadius, as up is perpendicular to n
  DVec3 org = Scale(n, plane.dist);
  return {Add(Sub(org, right), up), Add(Add(org, right), up), Sub(Add(org, right), up),
          Sub(Sub(org, right), up)};
}

// Buffers ClipToBack reuses, so that a brush's planes^2 clips allocate nothing after the first.
struct ClipScratch {
  std::vector<double> dists;
  Winding out;
};

// Keeps the part of `w` behind `plane` (Dot(n, x) - d <= epsilon). May leave fewer than 3 points.
void ClipToBack(const DPlane& plane, Winding* w, ClipScratch* scratch) {
  const size_t count = w->size();
  std::vector<double>& dists = scratch->dists;
  dists.resize(count);
  bool any_front = false, any_back = false;
  for (size_t i = 0; i < count; ++i) {
    dists[i] = Dot(plane.normal, (*w)[i]) - plane.dist;
    any_front |= dists[i] > kClipEpsilon;
    any_back |= dists[i] < -kClipEpsilon;
  }
  if (!any_front) return;
  if (!any_back) {
    w->clear();
    return;
  }
  Winding& out = scratch->out;
  out.clear();
  for (size_t i = 0; i < count; ++i) {
    const DVec3& p = (*w)[i];
    const DVec3& q = (*w)[(i + 1) % count];
    double dp = dists[i], dq = dists[(i + 1) % count];
    if (dp <= kClipEpsilon) out.push_back(p);
    bool crosses = (dp > kClipEpsilon && dq < -kClipEpsilon) ||
                   (dp < -kClipEpsilon && dq > kClipEpsilon);
    if (crosses) out.push_back(Add(p, Scale(Sub(q, p), dp / (dp - dq))));
  }
  w->swap(out);
}

void AddWelded(const DVec3& p, std::vector<DVec3>* vertices) {
  for (const DVec3& v : *vertices) {
    if (std::fabs(v.x - p.x) < kWeldEpsilon && std::fabs(v.y - p.y) < kWeldEpsilon &&
        std::fabs(v.z - p.z) < kWeldEpsilon) {
      return;
    }
  }
  vertices->push_back(p);
}

// The distinct planes of `brush`, dropping zero-area and duplicate ones with a note each.
std::vector<DPlane> DistinctPlanes(const RawBrush& brush, std::vector<std::string>* notes) {
  std::vector<DPlane> planes;
  for (const RawFace& face : brush.faces) {
    DPlane plane;
    if (!PlaneFromPoints(face.points[0], face.points[1], face.points[2], &plane)) {
      notes->push_back("dropped zero-area plane (line " + std::to_string(face.line) + ")");
      continue;
    }
    bool duplicate = std::any_of(planes.begin(), planes.end(), [&](const DPlane& p) {
      return Dot(p.normal, plane.normal) > kSameNormalDot &&
             std::fabs(p.dist - plane.dist) < kSameDistEpsilon;
    });
    if (duplicate) {
      notes->push_back("dropped duplicate plane (line " + std::to_string(face.line) + ")");
      continue;
    }
    planes.push_back(plane);
  }
  return planes;
}

// Least extent of the vertices behind any face plane: 0 for a flat polyhedron.
double Thickness(const Polyhedron& poly) {
  double thinnest = kBaseRadius;
  for (const DPlane& plane : poly.planes) {
    double deepest = 0;
    for (const DVec3& v : poly.vertices) {
      deepest = std::max(deepest, plane.dist - Dot(plane.normal, v));
    }
    thinnest = std::min(thinnest, deepest);
  }
  return thinnest;
}

}  // namespace

bool PlaneFromPoints(const DVec3& p0, const DVec3& p1, const DVec3& p2, DPlane* out) {
  DVec3 a = Sub(p0, p1), b = Sub(p2, p1);
  DVec3 n = Cross(a, b);
  double len = Length(n);
  if (!(len > 1e-6) || len < 1e-12 * Length(a) * Length(b)) return false;
  out->normal = Scale(n, 1.0 / len);
  out->dist = Dot(out->normal, p1);
  return true;
}

bool BuildPolyhedron(const RawBrush& brush, Polyhedron* out, std::vector<std::string>* notes,
                     std::string* why) {
  *out = Polyhedron{};
  std::vector<DPlane> planes = DistinctPlanes(brush, notes);
  if (planes.size() < 4) {
    *why = "only " + std::to_string(planes.size()) + " distinct planes (a brush needs 4)";
    return false;
  }
  ClipScratch scratch;
  for (size_t i = 0; i < planes.size(); ++i) {
    Winding w = BaseWinding(planes[i]);
    for (size_t j = 0; j < planes.size() && w.size() >= 3; ++j) {
      if (j != i) ClipToBack(planes[j], &w, &scratch);
    }
    if (w.size() < 3) continue;  // this plane does not touch the polyhedron
    out->planes.push_back(planes[i]);
    for (const DVec3& p : w) AddWelded(p, &out->vertices);
  }
  if (out->planes.size() < 4) {
    *why = "the planes have an empty or flat intersection";
    return false;
  }
  for (const DVec3& v : out->vertices) {
    if (std::fabs(v.x) > kMaxVertexCoord || std::fabs(v.y) > kMaxVertexCoord ||
        std::fabs(v.z) > kMaxVertexCoord) {
      *why = "the planes do not enclose a volume (open brush)";
      return false;
    }
  }
  if (Thickness(*out) < kMinThickness) {
    *why = "flat intersection (thinner than 0.01 units)";
    return false;
  }
  return true;
}

}  // namespace maps
