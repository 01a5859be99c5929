// CollisionWorld: the map's solid brushes as convex collision shapes, and the queries the game
// needs (box sweep "trace", point contents, line of sight).
//
// Threading contract: built once by Build(); afterwards every query is const and safe to call
// from any number of threads at the same time. Debian's Bullet is built without BT_THREADSAFE
// (see shared NOTES), so this class never calls btCollisionWorld's shared query paths; the
// broadphase is our own immutable grid and each query uses only stack-local state.
//
// Exactness: a brush swept by a box is the Minkowski sum of the brush and the box, a convex
// polyhedron bounded by the brush planes, the box's axial planes and the "bevel" planes
// (brush edge x box axis). Build() precomputes all of them, so the default narrow phase clips
// the swept origin against exact planes (Quake III's CM_TraceThroughBrush with bevels). A Bullet
// narrow phase (GJK subsimplex convex cast against a btConvexHullShape per brush) is kept behind
// Options::narrowphase for comparison; bench_collision measures both.
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "maps/map.h"
#include "server/core/bounds.h"
#include "server/core/status.h"
#include "server/core/vec3.h"

namespace collision {

using core::Bounds;
using core::Vec3;

// A trace that hits stops this far (in plane distance, units) in front of the surface, so the
// box never ends inside a brush (Quake's DIST_EPSILON).
inline constexpr float kDistEpsilon = 0.03125f;
// A box that penetrates a brush by less than this (units) is touching it, not inside it: it may
// slide along the surface or move away, but not further in.
inline constexpr float kTouchEpsilon = 0.01f;
// BoundRays' crossings must lie this far (units) inside the blocking brush's other planes.
inline constexpr float kRayBoundMargin = 0.5f;

// Result of sweeping a box from start to end (Quake's trace_t).
struct Trace {
  float fraction = 1.0f;  // 0..1 of the way to `end` that the box can move without touching
  Vec3 end;               // start + fraction * (end - start), backed off slightly from the surface
  Vec3 normal;            // surface normal at the hit (zero if nothing was hit)
  bool start_solid = false;  // the box started inside a solid brush (penetration > kTouchEpsilon)
  bool all_solid = false;    // the box never left solid (fraction is 0)
  int brush = -1;            // index into Map::brushes of what was hit, -1 if nothing
  bool hit() const { return fraction < 1.0f; }
};

// The box a sweep of the hull [mins, maxs] from `start` to `end` passes through: the hull at start
// and at end. TraceBox clips only brushes whose bounds meet it, so a caller that asks whether a
// sweep can meet a brush (ClearBoxAround) must compute it with this function too.
inline Bounds SweptBox(const Vec3& start, const Vec3& end, const Vec3& mins, const Vec3& maxs) {
  Bounds swept = Bounds::At(start, mins, maxs);
  swept.Add(Bounds::At(end, mins, maxs));
  return swept;
}

// Where a finite sweep from `start` to `end` stops at `fraction`: TraceBox's Trace::end. A caller
// that rebuilds a trace from a kept fraction (the ground probe's memo) computes it with this
// function too, so that the two agree bit for bit.
inline Vec3 TraceEnd(const Vec3& start, const Vec3& end, float fraction) {
  return fraction == 1.0f ? end : start + (end - start) * fraction;
}

enum class Narrowphase {
  kBrushPlanes,  // exact plane clipping against brush + bevel planes (default, fastest)
  // Bullet GJK cast (btSubsimplexConvexCast) of a btBoxShape vs a btConvexHullShape per brush.
  // For measurement only: slower, and GJK misses a few contacts (when it was added, 46 of 200,000
  // random walk moves on dm_arena ended inside a wall, none with kBrushPlanes; a one-off check
  // that no test or tool repeats), so the game must not use it.
  kBulletHull,
};

struct Options {
  Narrowphase narrowphase = Narrowphase::kBrushPlanes;
  // A hull whose sweeps are common (the player's box): the world keeps every clip plane's dist
  // pushed out by it, so a TraceBox with exactly this mins/maxs (compared bit for bit) reads
  // them instead of computing BoxPlaneOffset per plane. The same results either way. The zero
  // hull (rays) is always kept.
  bool cache_hull = false;
  Vec3 hull_mins{}, hull_maxs{};
};

class CollisionWorld {
 public:
  // Builds shapes for every brush of `map` whose contents is kSolid (and keeps kLiquid brushes
  // for PointContents). The world copies what it needs: `map` may be destroyed afterwards.
  // Requires CheckMap(map) to be OK.
  static std::unique_ptr<CollisionWorld> Build(const maps::Map& map, const Options& options = {});
  // InvalidArgument, naming the map, if Build would exceed the broadphase's bound
  // (BrushGrid::kMaxEntries in any of its grids): a map whose brushes each span much of the map
  // multiplies its grid (262,144 such brushes crashed the server, 10,000 took 5 GB).
  static core::Status CheckMap(const maps::Map& map);
  // The entries of the largest of the broadphase grids Build would make for `map` (a brush
  // counts once per grid cell it overlaps), without building them.
  static uint64_t GridEntries(const maps::Map& map);
  virtual ~CollisionWorld() = default;

  // Sweeps the box [mins, maxs] (relative to the moving origin) from `start` to `end` against
  // solid brushes. A zero-size box is a ray. Starting inside a brush sets start_solid; the box
  // may still move if `end` is outside it (all_solid is set if it is not). Non-finite input
  // returns an all_solid trace at `start`. Requires mins <= maxs. Thread-safe.
  virtual Trace TraceBox(const Vec3& start, const Vec3& end, const Vec3& mins,
                         const Vec3& maxs) const = 0;

  // Contents at point `p` (kSolid if inside any solid brush, else kLiquid if inside a liquid
  // brush, else kEmpty). Points on a brush's surface count as inside. Thread-safe.
  virtual maps::Contents PointContents(Vec3 p) const = 0;

  // True if the segment a..b crosses no solid brush (and neither end is inside one).
  // Stops at the first brush found. Thread-safe.
  virtual bool LineOfSight(Vec3 a, Vec3 b) const = 0;

  // Bounds of all solid geometry (Empty() if the map has none).
  virtual Bounds WorldBounds() const = 0;

  // A box around every ray from a point of `starts` along a direction in the convex hull of
  // `corners` (each the whole ray: its end is start + corner), up to where it first meets a solid
  // brush. It looks for one brush face that all of them must cross inside the brush: the face
  // that the ray along `center` from the middle of `starts` hits first; each ray from a corner
  // of `starts` along each of `corners` must enter through that face's plane at a point at
  // least kRayBoundMargin inside the brush's other planes, and `starts` must lie wholly in front
  // of it. Then every such ray ends at or before that plane (the points where they cross it lie
  // in the convex hull of the corners' crossings, which lies in the brush), and *out is the box
  // of `starts` and those crossings. False (nothing written) if there is no such face: the ray
  // from the middle hits nothing, or the face does not block them all. Requires finite input,
  // starts not empty, 1 to 8 corners. Thread-safe.
  virtual bool BoundRays(const Bounds& starts, Vec3 center, std::span<const Vec3> corners,
                         Bounds* out) const = 0;

  // A box that holds `inner`, lies within `inner` grown by `grow` (>= 0) on every side, and
  // meets no solid brush's bounds (Bounds::Intersects, inclusive, with the box of the brush's
  // vertices). A sweep whose swept box (the hull at start and at end) lies inside it meets none
  // either, so TraceBox clips no brush and returns the clear trace: fraction 1, `end` at the
  // sweep's end, nothing else set. False (nothing written) if a brush's bounds meet
  // `inner`, or `inner` is not finite. Greedy, not the largest such box: each brush listed near
  // `inner` cuts one side, the one that loses the least volume. Thread-safe.
  virtual bool ClearBoxAround(const Bounds& inner, Vec3 grow, Bounds* out) const = 0;

  // Number of solid brushes the world collides with.
  virtual int NumSolidBrushes() const = 0;
};

}  // namespace collision
