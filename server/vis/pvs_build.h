// BuildPvs: computes a map's potentially-visible set from its brushes by sampled line of sight
// between cells (the design is in docs/maps.md, "Visibility"). Deterministic: the same map and
// parameters give the same bits on any thread count.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

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

// How far a build has come. Counted in the line-of-sight pass (pass 2), which takes nearly all
// of a slow build's time: one row per open cell.
struct PvsProgress {
  int rows_traced = 0;   // rows decided so far
  int rows = 0;          // rows the pass decides (open cells)
  double elapsed_s = 0;  // since BuildPvs began
};

// Told how a build goes, so that a start-up that takes minutes says where it is. Called on one
// of the build's threads, one call at a time and never after BuildPvs returns: once as the pass
// starts (rows_traced 0), after a chunk of rows whenever `every_s` seconds have passed since the
// last call (every chunk for 0), and once as the last row is decided (rows_traced == rows). It
// does not change a bit of the set.
struct PvsProgressReporter {
  std::function<void(const PvsProgress&)> fn;  // empty: not told
  double every_s = 10;
};

// One line for an operator: as the pass starts, "not cached: building, N rows to trace";
// then "R of N rows traced in T s, about L s left" (the rate so far); at the end, the rows
// traced and the time.
std::string DescribeProgress(const PvsProgress& p);

// Builds the set for `map` (whose solid brushes `collision` was built from). InvalidArgument for
// a map without solid geometry or parameters out of range.
core::Status BuildPvs(const maps::Map& map, const collision::CollisionWorld& collision,
                      const PvsParams& params, Pvs* out, PvsBuildStats* stats,
                      const PvsProgressReporter& progress = {});

// The grid BuildPvs would use for these bounds and parameters (exposed for tests and tools).
PvsGrid ChooseGrid(const core::Bounds& world, const PvsParams& params);

}  // namespace vis
