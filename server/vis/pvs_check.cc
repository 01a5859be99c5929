// CheckPvs: rejection-sampled open points, exact line of sight, the PVS bit.
#include "server/vis/pvs_check.h"

#include "server/core/hash.h"
#include "server/vis/inside.h"

namespace vis {

PvsCheckResult CheckPvs(const Pvs& pvs, const maps::Map& map,
                        const collision::CollisionWorld& collision, int pairs, uint64_t seed) {
  PvsCheckResult r;
  if (pvs.empty()) return r;
  const PvsGrid& g = pvs.grid();
  const Vec3 size{g.nx * g.cell_units, g.ny * g.cell_units, g.nz * g.cell_units};
  uint64_t rng = core::Mix64(seed);
  auto unit = [&rng] {
    rng = core::Mix64(rng + 0x9E3779B97F4A7C15ULL);
    return static_cast<float>(rng >> 40) * (1.0f / 16777216.0f);
  };
  InsideVolume inside;
  inside.Build(map, collision,
               core::Bounds{g.origin, g.origin + size}, g.cell_units / 8, /*threads=*/1);
  auto open = [&](Vec3 p) {
    return inside.Inside(p) && collision.PointContents(p) != maps::Contents::kSolid;
  };
  const float range = g.range_units;
  constexpr int kTries = 1000;  // per point; a map with almost no open space ends early
  while (r.pairs < static_cast<uint64_t>(pairs)) {
    Vec3 a;
    int t = 0;
    do {
      a = g.origin + Vec3{unit() * size.x, unit() * size.y, unit() * size.z};
    } while (!open(a) && ++t < kTries);
    if (t == kTries) break;
    Vec3 b;
    t = 0;
    do {
      const Vec3 d{(2 * unit() - 1) * range, (2 * unit() - 1) * range, (2 * unit() - 1) * range};
      b = a + d;
    } while ((Dot(b - a, b - a) > range * range || !open(b) ||
              !(b.x >= g.origin.x && b.y >= g.origin.y && b.z >= g.origin.z &&
                b.x < g.origin.x + size.x && b.y < g.origin.y + size.y &&
                b.z < g.origin.z + size.z)) &&
             ++t < kTries);
    if (t == kTries) continue;
    ++r.pairs;
    const bool seen = pvs.Sees(pvs.CellOf(a), pvs.CellOf(b));
    r.pvs_visible += seen;
    if (collision.LineOfSight(a, b)) {
      ++r.visible;
      r.false_hidden += !seen;
    }
  }
  return r;
}

}  // namespace vis
