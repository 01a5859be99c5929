// BuildPvs: computes a map's potentially-visible set from its brushes by sampled line of sight
// between cells (the design is in docs/maps.md, "Visibility"). Deterministic: the same map and
// parameters give the same bits on any thread count.
#pragma once

#include <cstdint>

#include "maps/map.h"
#include "server/collision/collision_world.h"
#include "server/core/status.h"
#include "server/vis/pvs.h"

namespace vis {

struct PvsParams {
  float range_units = 2048;    // the largest interest radius the set must answer for
  float min_cell_units = 128;  // the finest cell; large maps get larger cells (see work budget)
  // Cells x row cells the build may examine; the cell grows in 32-unit steps until it fits.
  // Bounds both the build time and the file size.
  uint64_t work_budget = 12'000'000;
  int rays_per_pair = 12;      // sampled segments tried before a pair is called hidden
  int threads = 0;             // 0: one per hardware thread
  uint64_t seed = 1;
};

struct PvsBuildStats {
  double build_s = 0;          // wall time
  int cells = 0;               // grid cells
  int open_cells = 0;          // cells with at least one sample point outside solid
  int closed_cells = 0;        // cells wholly inside one solid brush
  uint64_t pairs_traced = 0;   // cell pairs that needed sampled segments
  uint64_t rays = 0;           // segments traced
  // Mean, over open cells, of the share of open cells within range that the row marks visible.
  double visible_fraction = 0;
};

// Builds the set for `map` (whose solid brushes `collision` was built from). InvalidArgument for
// a map without solid geometry or parameters out of range.
core::Status BuildPvs(const maps::Map& map, const collision::CollisionWorld& collision,
                      const PvsParams& params, Pvs* out, PvsBuildStats* stats);

// The grid BuildPvs would use for these bounds and parameters (exposed for tests and tools).
PvsGrid ChooseGrid(const core::Bounds& world, const PvsParams& params);

}  // namespace vis
