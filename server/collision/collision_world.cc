// CollisionWorld implementation: brushes flattened into plane arrays, a BrushGrid broadphase per
// contents (solid, liquid), and the narrow phase chosen by Options. Every query is a const walk
// over immutable arrays with stack-local state only (and, for rays, a per-thread table of the
// brushes a walk has clipped).
#include "server/collision/collision_world.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <cmath>
#include <limits>
#include <vector>

#include "server/collision/brush_clip.h"
#include "server/collision/brush_grid.h"
#include "server/collision/brush_planes.h"
#include "server/collision/bullet_hulls.h"
#include "server/core/check.h"

namespace collision {
namespace {

// Starts closer than this (units) to a brush skip the GJK cast. Below ~0.1 the cast misses the
// contact of a box standing on a ramp and walking uphill (seen on dm_arena's ramps when this was
// written; no test measures how often).
constexpr float kBulletClearStart = 0.1f;

// Rays walk a second grid whose brushes are registered with their bounds grown by this much
// (units). A ray's hit point lies within kDistEpsilon of the brush's bounds (it is at most
// kDistEpsilon in front of every clip plane, and the axial bevels are among them), and the walk's
// float cell boundaries are off by well under a unit, so the brush is listed in a cell the walk
// reaches before it passes the hit.
constexpr float kRayGridPad = 1.0f;
// The walk stops once the nearest hit so far lies this far (units) before the next cell.
constexpr float kRayStopMargin = 1.0f;

// One brush as the narrow phase sees it: its clip planes are planes_[first_plane..+num_planes).
struct BrushRecord {
  Bounds bounds;
  uint32_t first_plane = 0;
  int num_planes = 0;
  int map_index = 0;  // index into Map::brushes
  int hull = -1;      // slot in BulletHulls, or -1
};

struct BrushSet {
  std::vector<BrushRecord> brushes;
  BrushGrid grid;
  BrushGrid ray_grid;  // the same brushes, bounds grown by kRayGridPad (solid set only)
};

// Which brushes this thread's current ray walk has clipped already: a brush spans several cells
// and the walk meets it in each. stamp[id] == now marks it.
struct RayWalkStamps {
  std::vector<uint32_t> stamp;
  uint32_t now = 0;

  void Begin(size_t num_brushes) {
    if (stamp.size() < num_brushes) stamp.resize(num_brushes, 0);
    if (++now == 0) {  // wrapped: forget every old mark
      std::fill(stamp.begin(), stamp.end(), 0);
      now = 1;
    }
  }
  bool FirstVisit(uint32_t id) {
    if (stamp[id] == now) return false;
    stamp[id] = now;
    return true;
  }
};

// A ball inside a brush, for LineOfSight. A blocked ray clips every plane of its blocker, and a
// brush of many faces (the audit's near-spheres of 256) has hundreds; most blocked rays pass
// well inside, where this ball settles them with one distance.
//
// Why a ray that meets the ball is blocked, exactly as ClipSweepToBrush would say: the ball
// (centre c, radius rho) lies at least `m` behind every plane, so the ray's point p nearest c
// has d_i(p) = n_i.p - dist_i <= -m for every plane i. Along the ray each d_i is linear, so a
// plane the ray starts in front of (d1 > -kTouchEpsilon) it crosses inward before p and never
// turns back out: no early return, and its entry fraction is below p's. A plane it starts behind
// and leaves (d2 > 0) it leaves after p. So the entry is below the exit and below 1 (a hit), or
// no plane is entered at all (start_solid). `m` covers kDistEpsilon and kTouchEpsilon plus a
// unit, and the float rounding of d1, d2 and the fractions: their error grows with the
// coordinates' magnitude, so m grows by 1e-4 of the largest coordinate of the brush's ball and
// (at the query) of the ray's ends, over 100 times that error at any magnitude. A ray that misses
// the ball is clipped as before, so the answer is the clip's either way.
struct InnerBall {
  Vec3 centre;
  float radius = -1;  // < 0: no ball (a brush LineOfSight has no outline for, or too thin)

  // Whether the segment a..b passes within the ball (less the query's margin for a and b).
  // Sets offset[0..2] to the segment's point nearest the centre, less the centre.
  bool Blocks(Vec3 a, Vec3 b, double offset[3]) const {
    const double ax = a.x, ay = a.y, az = a.z;
    const double dx = double(b.x) - ax, dy = double(b.y) - ay, dz = double(b.z) - az;
    const double cx = centre.x - ax, cy = centre.y - ay, cz = centre.z - az;
    const double len2 = dx * dx + dy * dy + dz * dz;
    double t = len2 > 0 ? (cx * dx + cy * dy + cz * dz) / len2 : 0;
    t = std::clamp(t, 0.0, 1.0);
    offset[0] = t * dx - cx;
    offset[1] = t * dy - cy;
    offset[2] = t * dz - cz;
    if (radius < 0) return false;
    const double reach = radius - 2e-4 * std::max(MaxAbs(a), MaxAbs(b));
    if (reach <= 0) return false;
    return offset[0] * offset[0] + offset[1] * offset[1] + offset[2] * offset[2] <= reach * reach;
  }
  static double MaxAbs(Vec3 v) {
    return std::max({std::fabs(double(v.x)), std::fabs(double(v.y)), std::fabs(double(v.z))});
  }
};

// The ball about the middle of `bounds` that lies the margin above (InnerBall) behind every one
// of `planes`, for normals of any length: radius min over i of (dist_i - n_i.c - m) / |n_i|.
// |n|, in double: the ball and the caps take normals of any length.
double NormalLength(Vec3 n) {
  return std::sqrt(double(n.x) * n.x + double(n.y) * n.y + double(n.z) * n.z);
}

InnerBall InnerBallOf(const maps::Plane* planes, int num_planes, const Bounds& bounds) {
  InnerBall ball;
  ball.centre = (bounds.mins + bounds.maxs) * 0.5f;
  const Vec3 c = ball.centre;
  double room = std::numeric_limits<double>::infinity();
  for (int i = 0; i < num_planes; ++i) {
    const Vec3 n = planes[i].normal;
    const double length = NormalLength(n);
    if (!(length > 0)) return InnerBall{};
    const double behind = double(planes[i].dist) - (double(n.x) * c.x + double(n.y) * c.y +
                                                     double(n.z) * c.z);
    room = std::min(room, behind / length);
  }
  const double margin = 1.0 + kDistEpsilon + kTouchEpsilon + 1e-4 * (InnerBall::MaxAbs(c) + room);
  const double radius = room - margin;
  if (!(radius > 0) || !std::isfinite(radius)) return InnerBall{};
  ball.radius = static_cast<float>(radius * (1 - 1e-6));  // rounded down, not up
  return ball;
}

// A brush's caps, for LineOfSight: the directions about its middle cut into kCapCells cells (a
// cube's faces, kCapGrid x kCapGrid cells each), and for each cell the brush's planes whose
// normals lie within 20 degrees of the cell's middle direction. A ray that passes a brush of
// many faces outside its inner ball but inside its outline (the outline's corners stand well off
// a near-sphere) is mostly cleared by the cap on the side it passes: the planes facing its
// nearest point bound the brush there, and any subset of the planes that lets the ray by proves
// that all of them do (brush_clip.h). So the cap only saves clipping the rest; it never decides
// a blocked ray.
constexpr int kCapGrid = 6;
constexpr int kCapCells = 6 * kCapGrid * kCapGrid;
constexpr double kCapCos = 0.93969262;  // cos 20 degrees
constexpr uint32_t kNoCaps = ~uint32_t{0};

// The cell of direction (x, y, z), not all zero: the face of its largest coordinate, then the
// other two over it, in kCapGrid steps of [-1, 1].
int CapCell(const double d[3]) {
  int axis = 0;
  for (int k = 1; k < 3; ++k) {
    if (std::fabs(d[k]) > std::fabs(d[axis])) axis = k;
  }
  const double major = std::fabs(d[axis]);
  auto step = [&](double v) {
    return std::clamp(static_cast<int>((v / major + 1) * 0.5 * kCapGrid), 0, kCapGrid - 1);
  };
  const int face = 2 * axis + (d[axis] < 0 ? 1 : 0);
  return (face * kCapGrid + step(d[(axis + 1) % 3])) * kCapGrid + step(d[(axis + 2) % 3]);
}

// The unit direction through the middle of cell `cell` (CapCell's inverse at the cell's middle).
// AddCaps computes the kCapCells of them once per process.
void CapCellDirection(int cell, double d[3]) {
  const int face = cell / (kCapGrid * kCapGrid);
  const int axis = face / 2;
  auto middle = [](int i) { return (i + 0.5) * 2.0 / kCapGrid - 1; };
  d[axis] = face % 2 ? -1.0 : 1.0;
  d[(axis + 1) % 3] = middle(cell / kCapGrid % kCapGrid);
  d[(axis + 2) % 3] = middle(cell % kCapGrid);
  const double length = std::sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
  for (int k = 0; k < 3; ++k) d[k] /= length;
}

class World final : public CollisionWorld {
 public:
  World(const maps::Map& map, const Options& options);

  Trace TraceBox(const Vec3& start, const Vec3& end, const Vec3& mins,
                 const Vec3& maxs) const override;
  maps::Contents PointContents(Vec3 p) const override;
  bool LineOfSight(Vec3 a, Vec3 b) const override;
  Bounds WorldBounds() const override { return bounds_; }
  bool BoundRays(const Bounds& starts, Vec3 center, std::span<const Vec3> corners,
                 Bounds* out) const override;
  bool ClearBoxAround(const Bounds& inner, Vec3 grow, Bounds* out) const override;
  int NumSolidBrushes() const override { return static_cast<int>(solid_.brushes.size()); }

 private:
  void AddBrush(const maps::Brush& brush, int map_index, BrushSet* set);
  // `pushed`: null, or the pushed dists of every plane for the sweep's box (HullPushed,
  // pushed_zero_).
  void ClipBrush(const Sweep& sweep, const BrushRecord& b, const float* pushed, Trace* trace) const;
  void TraceRay(const Sweep& sweep, const Bounds& swept, Trace* trace) const;
  // The planes' dists pushed out by the sweep's box if it is the options' kept hull (compared
  // bit for bit), else null. Rays read pushed_zero_.
  const float* HullPushed(const Sweep& sweep) const;
  bool InsideAny(const BrushSet& set, Vec3 p) const;
  // Appends the next solid brush's caps (or kNoCaps) for its planes.
  void AddCaps(const maps::Plane* planes, int num_planes);

  Options options_;
  std::vector<maps::Plane> planes_;
  // By plane: PushedDist(planes_[i], 0, 0), and PushedDist(planes_[i], the options' hull) if kept.
  std::vector<float> pushed_zero_, pushed_hull_;
  // The solid brushes' outlines (AppendOutlinePlanes), which LineOfSight clips before the
  // rest; outline_first_[id] is where solid record id's starts.
  std::vector<maps::Plane> outline_planes_;
  std::vector<uint32_t> outline_first_;
  // By solid record id: the ball InnerBallOf found inside it (radius < 0: none), which settles
  // the rays that pass through a brush's middle without its planes.
  std::vector<InnerBall> inner_balls_;
  // By solid record id: where its kCapCells + 1 offsets into cap_planes_ start in cap_offsets_,
  // or kNoCaps (a brush of fewer than kOutlineAllFrom planes, or more than 65,536). cap_planes_
  // holds plane indices within the brush.
  std::vector<uint32_t> cap_first_;
  std::vector<uint32_t> cap_offsets_;
  std::vector<uint16_t> cap_planes_;
  BrushSet solid_, liquid_;
  std::vector<int> solid_of_map_;  // by Map::brushes index: its record in solid_, or -1
  Bounds bounds_ = Bounds::Empty();
  BulletHulls hulls_;
};

// A brush's outline for LineOfSight: for each direction of a cube's 6 faces, then its 12 edges
// and 8 corners, the brush's plane whose normal is nearest it (the first such); the first 6 are
// its box planes. A ray its outline lets by passes the brush (brush_clip.h), which decides most
// rays that come near a brush of many faces for a few planes' cost. A brush gets the box planes
// from kOutlineBoxFrom planes on and all 26 from kOutlineAllFrom on (each stage only where it is
// at most half the brush's planes), so the outlines take at most half the planes' memory.
constexpr int kOutlineBoxPlanes = 6;
constexpr int kOutlinePlanes = 26;
constexpr int kOutlineBoxFrom = 2 * kOutlineBoxPlanes;
constexpr int kOutlineAllFrom = 2 * kOutlinePlanes;

int OutlineSize(int num_planes) {
  return num_planes >= kOutlineAllFrom ? kOutlinePlanes
         : num_planes >= kOutlineBoxFrom ? kOutlineBoxPlanes
                                         : 0;
}

void AppendOutlinePlanes(const maps::Plane* planes, int num_planes, std::vector<maps::Plane>* out) {
  static constexpr float kDirs[kOutlinePlanes][3] = {
      {1, 0, 0},   {-1, 0, 0},  {0, 1, 0},   {0, -1, 0},  {0, 0, 1},   {0, 0, -1},  {1, 1, 0},
      {1, -1, 0},  {-1, 1, 0},  {-1, -1, 0}, {1, 0, 1},   {1, 0, -1},  {-1, 0, 1},  {-1, 0, -1},
      {0, 1, 1},   {0, 1, -1},  {0, -1, 1},  {0, -1, -1}, {1, 1, 1},   {1, 1, -1},  {1, -1, 1},
      {1, -1, -1}, {-1, 1, 1},  {-1, 1, -1}, {-1, -1, 1}, {-1, -1, -1}};
  for (int d = 0; d < OutlineSize(num_planes); ++d) {
    const Vec3 dir{kDirs[d][0], kDirs[d][1], kDirs[d][2]};
    int best = 0;
    for (int k = 1; k < num_planes; ++k) {
      if (Dot(dir, planes[k].normal) > Dot(dir, planes[best].normal)) best = k;
    }
    out->push_back(planes[best]);
  }
}

// A brush with fewer than 4 planes or vertices has no volume: the world leaves it out.
bool HasVolume(const maps::Brush& brush) {
  return brush.planes.size() >= 4 && brush.vertices.size() >= 4;
}

// A brush's box, from its vertices (not trusted from the file).
Bounds VertexBounds(const maps::Brush& brush) {
  Bounds b = Bounds::Empty();
  for (Vec3 v : brush.vertices) b.Add(v);
  return b;
}

// The boxes of a world's three broadphase grids for `map`, each in map order: its solid
// brushes, its liquid brushes, and its solid brushes grown by kRayGridPad. One source for the
// grids World builds and for what CheckMap counts.
struct GridBoxes {
  std::vector<Bounds> solid, liquid, ray;
};

GridBoxes GridBoxesOf(const maps::Map& map) {
  GridBoxes g;
  const Vec3 pad{kRayGridPad, kRayGridPad, kRayGridPad};
  for (const maps::Brush& brush : map.brushes) {
    if (!HasVolume(brush)) continue;
    if (brush.contents == maps::Contents::kSolid) {
      g.solid.push_back(VertexBounds(brush));
      g.ray.push_back({g.solid.back().mins - pad, g.solid.back().maxs + pad});
    } else if (brush.contents == maps::Contents::kLiquid) {
      g.liquid.push_back(VertexBounds(brush));
    }
  }
  return g;
}

World::World(const maps::Map& map, const Options& options) : options_(options) {
  solid_of_map_.assign(map.brushes.size(), -1);
  for (size_t i = 0; i < map.brushes.size(); ++i) {
    const maps::Brush& brush = map.brushes[i];
    if (!HasVolume(brush)) continue;
    if (brush.contents == maps::Contents::kSolid) {
      solid_of_map_[i] = static_cast<int>(solid_.brushes.size());
      AddBrush(brush, static_cast<int>(i), &solid_);
      bounds_.Add(brush.bounds);
    } else if (brush.contents == maps::Contents::kLiquid) {
      AddBrush(brush, static_cast<int>(i), &liquid_);
    }
  }
  // The grids index the records: the same brushes, in the same order, with the same bounds.
  const GridBoxes boxes = GridBoxesOf(map);
  AS_CHECK(boxes.solid.size() == solid_.brushes.size() &&
               boxes.liquid.size() == liquid_.brushes.size(),
           "grid boxes and brush records disagree");
  solid_.grid.Build(boxes.solid);
  liquid_.grid.Build(boxes.liquid);
  solid_.ray_grid.Build(boxes.ray);
  for (const maps::Plane& p : planes_) {
    pushed_zero_.push_back(PushedDist(p, Vec3{}, Vec3{}));
    if (options_.cache_hull) {
      pushed_hull_.push_back(PushedDist(p, options_.hull_mins, options_.hull_maxs));
    }
  }
}

const float* World::HullPushed(const Sweep& sweep) const {
  static_assert(sizeof(Vec3) == 3 * sizeof(float), "Vec3 compared bytewise");
  if (options_.cache_hull && std::memcmp(&sweep.mins, &options_.hull_mins, sizeof(Vec3)) == 0 &&
      std::memcmp(&sweep.maxs, &options_.hull_maxs, sizeof(Vec3)) == 0) {
    return pushed_hull_.data();
  }
  return nullptr;
}

void World::AddBrush(const maps::Brush& brush, int map_index, BrushSet* set) {
  BrushRecord rec;
  rec.first_plane = static_cast<uint32_t>(planes_.size());
  AppendClipPlanes(brush, &planes_);
  rec.num_planes = static_cast<int>(planes_.size() - rec.first_plane);
  rec.map_index = map_index;
  rec.bounds = VertexBounds(brush);
  if (options_.narrowphase == Narrowphase::kBulletHull && set == &solid_) {
    rec.hull = hulls_.Add(brush);
  }
  if (set == &solid_) {
    outline_first_.push_back(static_cast<uint32_t>(outline_planes_.size()));
    AppendOutlinePlanes(planes_.data() + rec.first_plane, rec.num_planes, &outline_planes_);
    inner_balls_.push_back(OutlineSize(rec.num_planes) > 0
                               ? InnerBallOf(planes_.data() + rec.first_plane, rec.num_planes,
                                             rec.bounds)
                               : InnerBall{});
    AddCaps(planes_.data() + rec.first_plane, rec.num_planes);
  }
  set->brushes.push_back(rec);
}

void World::AddCaps(const maps::Plane* planes, int num_planes) {
  if (num_planes < kOutlineAllFrom || num_planes > 65536) {
    cap_first_.push_back(kNoCaps);
    return;
  }
  // The cells' directions, computed once per process; the planes' lengths once per brush.
  static const std::array<std::array<double, 3>, kCapCells> directions = [] {
    std::array<std::array<double, 3>, kCapCells> d;
    for (int cell = 0; cell < kCapCells; ++cell) CapCellDirection(cell, d[cell].data());
    return d;
  }();
  std::vector<double> bound(static_cast<size_t>(num_planes));
  for (int i = 0; i < num_planes; ++i) bound[i] = kCapCos * NormalLength(planes[i].normal);
  cap_first_.push_back(static_cast<uint32_t>(cap_offsets_.size()));
  for (int cell = 0; cell < kCapCells; ++cell) {
    cap_offsets_.push_back(static_cast<uint32_t>(cap_planes_.size()));
    const std::array<double, 3>& d = directions[static_cast<size_t>(cell)];
    for (int i = 0; i < num_planes; ++i) {
      const Vec3 n = planes[i].normal;
      if (double(n.x) * d[0] + double(n.y) * d[1] + double(n.z) * d[2] >= bound[i]) {
        cap_planes_.push_back(static_cast<uint16_t>(i));
      }
    }
  }
  cap_offsets_.push_back(static_cast<uint32_t>(cap_planes_.size()));
}

void World::ClipBrush(const Sweep& sweep, const BrushRecord& b, const float* pushed,
                      Trace* trace) const {
  const maps::Plane* planes = planes_.data() + b.first_plane;
  if (b.hull < 0) {
    if (pushed != nullptr) {
      ClipSweepToBrushPushed(sweep, planes, pushed + b.first_plane, b.num_planes, b.map_index,
                             trace);
    } else {
      ClipSweepToBrush(sweep, planes, b.num_planes, b.map_index, trace);
    }
    return;
  }
  // Bullet narrow phase: GJK gives the time of impact from a clear start; a start inside or
  // close to the brush (where the cast misses contacts, e.g. walking up a ramp) goes to the
  // exact clipper.
  const float separation = BoxSeparation(sweep.start, sweep.mins, sweep.maxs, planes, b.num_planes);
  if (separation < kBulletClearStart) {
    ClipSweepToBrush(sweep, planes, b.num_planes, b.map_index, trace);
    return;
  }
  float fraction;
  Vec3 normal;
  if (hulls_.CastBox(sweep, b.hull, &fraction, &normal) && fraction < trace->fraction) {
    trace->fraction = fraction;
    trace->normal = normal;
    trace->brush = b.map_index;
  }
}

Trace World::TraceBox(const Vec3& start, const Vec3& end, const Vec3& mins,
                      const Vec3& maxs) const {
  Trace trace;
  if (!core::AllFinite(start, end, mins, maxs)) {
    trace.fraction = 0;
    trace.start_solid = trace.all_solid = true;
    trace.end = core::IsFinite(start) ? start : Vec3{};
    return trace;
  }
  AS_CHECK(mins.x <= maxs.x && mins.y <= maxs.y && mins.z <= maxs.z, "hull mins > maxs");
  const Sweep sweep{start, end, mins, maxs};
  const Bounds swept = SweptBox(start, end, mins, maxs);
  if (mins == Vec3{} && maxs == Vec3{}) {
    TraceRay(sweep, swept, &trace);
  } else {
    const float* pushed = HullPushed(sweep);
    solid_.grid.Query(swept, [&](uint32_t id) {  // only brushes whose bounds meet `swept`
      ClipBrush(sweep, solid_.brushes[id], pushed, &trace);
      return !trace.all_solid;
    });
  }
  trace.end = TraceEnd(start, end, trace.fraction);
  return trace;
}

// A ray clips the brushes of the cells it crosses, nearest cell first, and stops once its nearest
// hit lies before the next cell: a hit shot across a city clips the few brushes near its path up
// to the wall it meets, not every brush in the box around the whole shot. It clips the same
// brushes that can bound the result as the box query does (the same bounds filter), so fraction,
// start_solid and all_solid are the box query's; where two brushes are entered at exactly the
// same fraction, which one `brush` and `normal` name may differ.
void World::TraceRay(const Sweep& sweep, const Bounds& swept, Trace* trace) const {
  static thread_local RayWalkStamps stamps;
  stamps.Begin(solid_.brushes.size());
  const float length = Length(sweep.end - sweep.start);
  const float margin = length > 0 ? kRayStopMargin / length : 0.0f;
  const float* pushed = pushed_zero_.data();  // a ray's box is zero
  solid_.ray_grid.QuerySegment(
      sweep.start, sweep.end,
      [&](uint32_t id) {
        if (!stamps.FirstVisit(id)) return true;
        const BrushRecord& b = solid_.brushes[id];
        if (b.bounds.Intersects(swept)) ClipBrush(sweep, b, pushed, trace);
        return !trace->all_solid;
      },
      [&](float next_cell_t) { return trace->fraction + margin >= next_cell_t; });
}

bool World::BoundRays(const Bounds& starts, Vec3 center, std::span<const Vec3> corners,
                      Bounds* out) const {
  AS_CHECK(!starts.IsEmpty() && !corners.empty() && corners.size() <= 8, "BoundRays: bad input");
  const Vec3 middle = (starts.mins + starts.maxs) * 0.5f;
  const Trace first = TraceBox(middle, middle + center, Vec3{}, Vec3{});
  if (!first.hit() || first.start_solid || first.brush < 0) return false;
  const int record = solid_of_map_[static_cast<size_t>(first.brush)];
  if (record < 0) return false;
  const BrushRecord& b = solid_.brushes[static_cast<size_t>(record)];
  const maps::Plane* planes = planes_.data() + b.first_plane;
  int face = -1;
  for (int i = 0; i < b.num_planes && face < 0; ++i) {
    if (planes[i].normal == first.normal) face = i;  // clip planes have distinct normals
  }
  if (face < 0) return false;
  const maps::Plane& p = planes[face];
  Bounds box = starts;
  for (int c = 0; c < 8; ++c) {
    const Vec3 e{(c & 1) ? starts.maxs.x : starts.mins.x, (c & 2) ? starts.maxs.y : starts.mins.y,
                 (c & 4) ? starts.maxs.z : starts.mins.z};
    const float front = Dot(p.normal, e) - p.dist;
    if (!(front > kRayBoundMargin)) return false;  // a start on or behind the face
    for (const Vec3& d : corners) {
      const float toward = Dot(p.normal, d);
      if (!(toward < 0)) return false;  // a ray parallel to the face or leaving it
      const Vec3 x = e + d * (front / -toward);  // where it crosses the face's plane
      for (int i = 0; i < b.num_planes; ++i) {
        if (i != face && !(Dot(planes[i].normal, x) - planes[i].dist <= -kRayBoundMargin)) {
          return false;  // past the face's edge, or too close to it
        }
      }
      box.Add(x);
    }
  }
  *out = box;
  return true;
}

bool World::ClearBoxAround(const Bounds& inner, Vec3 grow, Bounds* out) const {
  AS_CHECK(grow.x >= 0 && grow.y >= 0 && grow.z >= 0, "ClearBoxAround: negative grow");
  if (!core::IsFinite(inner.mins) || !core::IsFinite(inner.maxs)) return false;
  const Bounds around = inner.Expanded(grow);
  constexpr float kInf = std::numeric_limits<float>::infinity();
  // Every brush that can meet the result meets `around`, so the grid lists it here.
  Bounds clear = around;
  bool met = false;
  solid_.grid.Query(around, [&](uint32_t id) {
    const Bounds& b = solid_.brushes[id].bounds;  // the box the grid listed it by
    if (b.Intersects(inner)) {
      met = true;
      return false;
    }
    if (!b.Intersects(clear)) return true;  // an earlier cut already left it out
    // Apart from `inner` along some axis: move that side of `clear` to just past the brush (the
    // next float, since Intersects is inclusive), choosing the cut that keeps the most volume.
    const Vec3 size = clear.Size();
    float least_loss = kInf;
    int cut_axis = -1;
    bool cut_low = false;
    float cut_at = 0;
    for (int a = 0; a < 3; ++a) {
      const float area = size[(a + 1) % 3] * size[(a + 2) % 3];
      if (b.maxs[a] < inner.mins[a]) {
        const float at = std::nextafter(b.maxs[a], kInf);
        const float loss = (at - clear.mins[a]) * area;
        if (loss < least_loss) {
          least_loss = loss;
          cut_axis = a;
          cut_low = true;
          cut_at = at;
        }
      }
      if (b.mins[a] > inner.maxs[a]) {
        const float at = std::nextafter(b.mins[a], -kInf);
        const float loss = (clear.maxs[a] - at) * area;
        if (loss < least_loss) {
          least_loss = loss;
          cut_axis = a;
          cut_low = false;
          cut_at = at;
        }
      }
    }
    AS_CHECK(cut_axis >= 0, "ClearBoxAround: a brush apart from the box has no side apart");
    (cut_low ? clear.mins : clear.maxs)[cut_axis] = cut_at;
    return true;
  });
  if (met) return false;
  *out = clear;
  return true;
}

bool World::InsideAny(const BrushSet& set, Vec3 p) const {
  bool inside = false;
  set.grid.Query(Bounds{p, p}, [&](uint32_t id) {  // only brushes whose bounds hold p
    const BrushRecord& b = set.brushes[id];
    const maps::Plane* planes = planes_.data() + b.first_plane;
    for (int i = 0; i < b.num_planes; ++i) {
      if (Dot(planes[i].normal, p) > planes[i].dist) return true;
    }
    inside = true;
    return false;
  });
  return inside;
}

maps::Contents World::PointContents(Vec3 p) const {
  if (!core::IsFinite(p)) return maps::Contents::kSolid;
  if (InsideAny(solid_, p)) return maps::Contents::kSolid;
  if (InsideAny(liquid_, p)) return maps::Contents::kLiquid;
  return maps::Contents::kEmpty;
}

bool World::LineOfSight(Vec3 a, Vec3 b) const {
  if (!core::IsFinite(a) || !core::IsFinite(b)) return false;
  const Sweep sweep{a, b, Vec3{}, Vec3{}};
  Bounds swept{a, a};
  swept.Add(b);
  bool clear = true;
  // Cells in order along the segment: a blocker near `a` ends the walk early.
  solid_.grid.QuerySegment(a, b, [&](uint32_t id) {
    const BrushRecord& brush = solid_.brushes[id];
    if (!brush.bounds.Intersects(swept)) return true;
    Trace trace;
    // A ray its outline lets by passes the brush: AppendOutlinePlanes.
    const int outline = OutlineSize(brush.num_planes);
    for (int n : {kOutlineBoxPlanes, kOutlinePlanes}) {
      if (n > outline) break;
      ClipSweepToBrush(sweep, outline_planes_.data() + outline_first_[id], n, brush.map_index,
                       &trace);
      if (!trace.hit() && !trace.start_solid) return true;
      trace = Trace{};
    }
    // Brushes of many faces only (a box or a ramp has neither): a ray through the inner ball is
    // blocked (InnerBall), and if the planes of the cap on the side the ray passes let it by,
    // all of them do.
    const InnerBall& ball = inner_balls_[id];
    const uint32_t caps = cap_first_[id];
    if (ball.radius >= 0 || caps != kNoCaps) {
      double offset[3];
      if (ball.Blocks(a, b, offset)) {
        clear = false;
        return false;
      }
      if (caps != kNoCaps && (offset[0] != 0 || offset[1] != 0 || offset[2] != 0)) {
        const uint32_t* cell = cap_offsets_.data() + caps + CapCell(offset);
        static thread_local std::vector<maps::Plane> cap;
        cap.clear();
        for (uint32_t k = cell[0]; k < cell[1]; ++k) {
          cap.push_back(planes_[brush.first_plane + cap_planes_[k]]);
        }
        ClipSweepToBrush(sweep, cap.data(), static_cast<int>(cap.size()), brush.map_index, &trace);
        if (!trace.hit() && !trace.start_solid) return true;
        trace = Trace{};
      }
    }
    ClipSweepToBrushPushed(sweep, planes_.data() + brush.first_plane,
                           pushed_zero_.data() + brush.first_plane, brush.num_planes,
                           brush.map_index, &trace);
    clear = !trace.hit() && !trace.start_solid;
    return clear;
  });
  return clear;
}

}  // namespace

uint64_t CollisionWorld::GridEntries(const maps::Map& map) {
  const GridBoxes boxes = GridBoxesOf(map);
  uint64_t most = 0;
  for (const std::vector<Bounds>* b : {&boxes.solid, &boxes.liquid, &boxes.ray}) {
    most = std::max(most, BrushGrid::CountEntries(*b));
  }
  return most;
}

core::Status CollisionWorld::CheckMap(const maps::Map& map) {
  const uint64_t entries = GridEntries(map);
  if (entries > BrushGrid::kMaxEntries) {
    return core::Status::InvalidArgument(
        map.path + ": too complex for the collision grid: its brushes cover " +
        std::to_string(entries) + " grid cells in all (at most " +
        std::to_string(BrushGrid::kMaxEntries) +
        "); brushes that each span much of the map are the usual cause");
  }
  return core::Status::OK();
}

std::unique_ptr<CollisionWorld> CollisionWorld::Build(const maps::Map& map,
                                                      const Options& options) {
  return std::make_unique<World>(map, options);
}

}  // namespace collision
