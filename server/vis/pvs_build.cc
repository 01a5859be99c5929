// BuildPvs, in four passes over the grid (docs/maps.md, "Visibility"):
//   1. closed cells (wholly inside one solid brush) and up to kMaxSamples open sample points
//      per cell: the centre, then one jittered point per octant (parallel);
//   2. for each cell A and each cell B after it in its row box: visible if adjacent, hidden if
//      the boxes are further apart than the range, else visible as soon as one of up to
//      rays_per_pair segments between their samples is clear (CollisionWorld::LineOfSight, the
//      exact test the game uses), hidden if none is (parallel over A; A writes only its row);
//   3. mirror: line of sight is symmetric, so B sees A wherever A sees B (serial bit copies);
//   4. merge each row with its six face neighbours' rows and widen it by one cell in every
//      direction, which catches the grazing pairs the samples missed, and count the visible
//      share (parallel).
#include "server/vis/pvs_build.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <thread>

#include "server/core/hash.h"
#include "server/core/mutex.h"
#include "server/core/thread_annotations.h"
#include "server/vis/inside.h"
#include "server/vis/pvs_format.h"

namespace vis {

namespace {

constexpr int kMaxSamples = 9;      // centre + one per octant
constexpr int kVoxelsPerCell = 8;   // per axis: the inside volume's resolution
constexpr float kCellStepUnits = 32;

struct Work {
  const maps::Map& map;
  const collision::CollisionWorld& collision;
  const PvsParams& params;
  PvsGrid grid;
  std::vector<uint8_t> closed;                 // per cell
  InsideVolume inside;                         // kVoxelsPerCell voxels per cell and axis
  std::vector<Vec3> samples;                   // kMaxSamples slots per cell
  std::vector<uint8_t> sample_count;           // per cell
  std::vector<uint32_t> row_offset;            // per cell, Pvs::kNoRow if no samples
  std::vector<uint64_t> words;
  std::vector<std::pair<uint8_t, uint8_t>> ray_order;  // (sample of A, sample of B)
  std::atomic<uint64_t> pairs_traced{0}, rays{0};
};

// Runs fn(begin, end) over [0, n) in chunks on `threads` threads.
void ParallelFor(int n, int threads, const std::function<void(int, int)>& fn) {
  constexpr int kChunk = 16;
  std::atomic<int> next{0};
  auto run = [&] {
    for (;;) {
      const int begin = next.fetch_add(kChunk);
      if (begin >= n) return;
      fn(begin, std::min(n, begin + kChunk));
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(run);
  run();
  for (std::thread& t : pool) t.join();
}

void SetBit(uint64_t* row, int bit) { row[bit >> 6] |= uint64_t{1} << (bit & 63); }
bool GetBit(const uint64_t* row, int bit) { return (row[bit >> 6] >> (bit & 63)) & 1; }

// Pass 1a: a cell is closed if its box lies inside one solid brush (all 8 corners inside).
void MarkClosedCells(Work* w) {
  const PvsGrid& g = w->grid;
  w->closed.assign(g.cell_count(), 0);
  for (const maps::Brush& b : w->map.brushes) {
    if (b.contents != maps::Contents::kSolid || b.planes.size() < 4 || b.vertices.size() < 4) continue;
    const CellCoord lo{static_cast<int>(std::ceil((b.bounds.mins.x - g.origin.x) / g.cell_units)),
                       static_cast<int>(std::ceil((b.bounds.mins.y - g.origin.y) / g.cell_units)),
                       static_cast<int>(std::ceil((b.bounds.mins.z - g.origin.z) / g.cell_units))};
    const CellCoord hi{static_cast<int>(std::floor((b.bounds.maxs.x - g.origin.x) / g.cell_units)) - 1,
                       static_cast<int>(std::floor((b.bounds.maxs.y - g.origin.y) / g.cell_units)) - 1,
                       static_cast<int>(std::floor((b.bounds.maxs.z - g.origin.z) / g.cell_units)) - 1};
    for (int z = std::max(0, lo.z); z <= std::min(g.nz - 1, hi.z); ++z) {
      for (int y = std::max(0, lo.y); y <= std::min(g.ny - 1, hi.y); ++y) {
        for (int x = std::max(0, lo.x); x <= std::min(g.nx - 1, hi.x); ++x) {
          const Vec3 mn = g.CellMin({x, y, z});
          bool inside = true;
          for (int k = 0; k < 8 && inside; ++k) {
            const Vec3 corner{mn.x + ((k & 1) ? g.cell_units : 0), mn.y + ((k & 2) ? g.cell_units : 0),
                              mn.z + ((k & 4) ? g.cell_units : 0)};
            for (const maps::Plane& p : b.planes) {
              if (Dot(p.normal, corner) - p.dist > 0) { inside = false; break; }
            }
          }
          if (inside) w->closed[g.Index(x, y, z)] = 1;
        }
      }
    }
  }
}

// Pass 1b: the cell's sample points, centres of inside voxels: one of the 2x2x2 central voxels,
// then one per octant, chosen by a generator seeded by the cell.
void SampleCell(Work* w, int cell) {
  const PvsGrid& g = w->grid;
  uint8_t n = 0;
  if (!w->closed[cell]) {
    const CellCoord c = g.Coord(cell);
    const int vx = c.x * kVoxelsPerCell, vy = c.y * kVoxelsPerCell, vz = c.z * kVoxelsPerCell;
    uint64_t rng = core::Mix64(w->params.seed ^ (0x9E3779B97F4A7C15ULL * (cell + 1)));
    Vec3* out = &w->samples[static_cast<size_t>(cell) * kMaxSamples];
    // Octant k's voxels, or the central 2x2x2 block for k == 8: a random inside one.
    for (int k = 8; k >= 0; --k) {
      const int h = kVoxelsPerCell / 2;
      const int x0 = k == 8 ? h - 1 : (k & 1) * h, y0 = k == 8 ? h - 1 : ((k >> 1) & 1) * h;
      const int z0 = k == 8 ? h - 1 : ((k >> 2) & 1) * h, span = k == 8 ? 2 : h;
      int seen = 0;
      Vec3 pick;
      for (int z = z0; z < z0 + span; ++z) {
        for (int y = y0; y < y0 + span; ++y) {
          for (int x = x0; x < x0 + span; ++x) {
            if (!w->inside.InsideVoxel(vx + x, vy + y, vz + z)) continue;
            rng = core::Mix64(rng + 0x9E3779B97F4A7C15ULL);
            if (rng % ++seen == 0) pick = w->inside.Centre(vx + x, vy + y, vz + z);  // reservoir
          }
        }
      }
      if (seen > 0) out[n++] = pick;
    }
  }
  w->sample_count[cell] = n;
}

// Squared distance between the boxes of two cells dx, dy, dz cells apart.
float GapSquared(const PvsGrid& g, int dx, int dy, int dz) {
  auto gap = [&g](int d) { return std::max(0, std::abs(d) - 1) * g.cell_units; };
  const float x = gap(dx), y = gap(dy), z = gap(dz);
  return x * x + y * y + z * z;
}

// Pass 2 for one cell A: decides every B after A in its row box.
void TraceRow(Work* w, int a) {
  const PvsGrid& g = w->grid;
  uint64_t* row = w->words.data() + w->row_offset[a];
  const CellCoord ca = g.Coord(a);
  const RowBox box = g.RowBoxOf(ca);
  const float range2 = w->params.range_units * w->params.range_units;
  const Vec3* sa = &w->samples[static_cast<size_t>(a) * kMaxSamples];
  const int na = w->sample_count[a];
  uint64_t pairs = 0, rays = 0;
  for (int z = box.z0; z <= box.z1; ++z) {
    for (int y = box.y0; y <= box.y1; ++y) {
      for (int x = box.x0; x <= box.x1; ++x) {
        const int b = g.Index(x, y, z);
        const int nb = w->sample_count[b];
        const int bit = box.Bit(x, y, z);
        if (nb == 0 || b == a) { SetBit(row, bit); continue; }  // no row: seen by all in reach
        if (b < a) continue;                                     // decided from b's row (mirror)
        const int dx = x - ca.x, dy = y - ca.y, dz = z - ca.z;
        if (std::abs(dx) <= 1 && std::abs(dy) <= 1 && std::abs(dz) <= 1) { SetBit(row, bit); continue; }
        if (GapSquared(g, dx, dy, dz) > range2) continue;
        ++pairs;
        const Vec3* sb = &w->samples[static_cast<size_t>(b) * kMaxSamples];
        int tried = 0;
        for (const auto& [i, j] : w->ray_order) {
          if (tried == w->params.rays_per_pair) break;
          if (i >= na || j >= nb) continue;
          ++tried;
          if (w->collision.LineOfSight(sa[i], sb[j])) { SetBit(row, bit); break; }
        }
        rays += tried;
      }
    }
  }
  w->pairs_traced.fetch_add(pairs, std::memory_order_relaxed);
  w->rays.fetch_add(rays, std::memory_order_relaxed);
}

// Pass 3: B sees A wherever A sees B (B after A, both with rows).
void MirrorRows(Work* w) {
  const PvsGrid& g = w->grid;
  for (int a = 0; a < g.cell_count(); ++a) {
    if (w->row_offset[a] == Pvs::kNoRow) continue;
    const CellCoord ca = g.Coord(a);
    const RowBox box = g.RowBoxOf(ca);
    const uint64_t* row = w->words.data() + w->row_offset[a];
    for (int z = box.z0; z <= box.z1; ++z) {
      for (int y = box.y0; y <= box.y1; ++y) {
        for (int x = box.x0; x <= box.x1; ++x) {
          const int b = g.Index(x, y, z);
          if (b <= a || w->row_offset[b] == Pvs::kNoRow || !GetBit(row, box.Bit(x, y, z))) continue;
          const RowBox bbox = g.RowBoxOf({x, y, z});
          SetBit(w->words.data() + w->row_offset[b], bbox.Bit(ca.x, ca.y, ca.z));
        }
      }
    }
  }
}

// Pass 4 for one row, from `mirrored` (every row after pass 3): the row becomes the union of its
// own and its six face neighbours' rows (a viewer near the cell's face sees what the cell next
// door sees), widened by one cell in every direction (26 neighbours of each visible cell).
// Returns the row's visible share of the open cells within range.
double WidenRow(Work* w, int a, const std::vector<uint64_t>& mirrored, std::vector<uint64_t>* merged) {
  const PvsGrid& g = w->grid;
  uint64_t* row = w->words.data() + w->row_offset[a];
  const CellCoord ca = g.Coord(a);
  const RowBox box = g.RowBoxOf(ca);
  const size_t nwords = (static_cast<size_t>(box.bits()) + 63) / 64;
  const uint64_t* own = mirrored.data() + w->row_offset[a];
  merged->assign(own, own + nwords);
  const CellCoord faces[6] = {{ca.x - 1, ca.y, ca.z}, {ca.x + 1, ca.y, ca.z}, {ca.x, ca.y - 1, ca.z},
                              {ca.x, ca.y + 1, ca.z}, {ca.x, ca.y, ca.z - 1}, {ca.x, ca.y, ca.z + 1}};
  for (const CellCoord& f : faces) {
    if (f.x < 0 || f.y < 0 || f.z < 0 || f.x >= g.nx || f.y >= g.ny || f.z >= g.nz) continue;
    const uint32_t off = w->row_offset[g.Index(f.x, f.y, f.z)];
    if (off == Pvs::kNoRow) continue;
    const RowBox fbox = g.RowBoxOf(f);
    const uint64_t* frow = mirrored.data() + off;
    for (int z = fbox.z0; z <= fbox.z1; ++z) {
      for (int y = fbox.y0; y <= fbox.y1; ++y) {
        for (int x = fbox.x0; x <= fbox.x1; ++x) {
          if (box.Contains(x, y, z) && GetBit(frow, fbox.Bit(x, y, z))) SetBit(merged->data(), box.Bit(x, y, z));
        }
      }
    }
  }
  const uint64_t* orig = merged->data();
  for (int z = box.z0; z <= box.z1; ++z) {
    for (int y = box.y0; y <= box.y1; ++y) {
      for (int x = box.x0; x <= box.x1; ++x) {
        if (!GetBit(orig, box.Bit(x, y, z))) continue;
        for (int nz = std::max(box.z0, z - 1); nz <= std::min(box.z1, z + 1); ++nz) {
          for (int ny = std::max(box.y0, y - 1); ny <= std::min(box.y1, y + 1); ++ny) {
            for (int nx = std::max(box.x0, x - 1); nx <= std::min(box.x1, x + 1); ++nx) {
              SetBit(row, box.Bit(nx, ny, nz));
            }
          }
        }
      }
    }
  }
  const float range2 = w->params.range_units * w->params.range_units;
  int in_range = 0, seen = 0;
  for (int z = box.z0; z <= box.z1; ++z) {
    for (int y = box.y0; y <= box.y1; ++y) {
      for (int x = box.x0; x <= box.x1; ++x) {
        if (w->sample_count[g.Index(x, y, z)] == 0) continue;
        if (GapSquared(g, x - ca.x, y - ca.y, z - ca.z) > range2) continue;
        ++in_range;
        seen += GetBit(row, box.Bit(x, y, z));
      }
    }
  }
  return in_range == 0 ? 1.0 : static_cast<double>(seen) / in_range;
}

core::Status CheckParams(const PvsParams& p) {
  if (!(p.range_units >= 64 && p.range_units <= 65536)) {
    return core::Status::InvalidArgument("pvs: range_units must be in 64..65536");
  }
  if (!(p.min_cell_units >= 16 && p.min_cell_units <= 4096)) {
    return core::Status::InvalidArgument("pvs: min_cell_units must be in 16..4096");
  }
  if (p.rays_per_pair < 1 || p.rays_per_pair > kMaxSamples * kMaxSamples) {
    return core::Status::InvalidArgument("pvs: rays_per_pair must be in 1..81");
  }
  if (p.work_budget < 1000) return core::Status::InvalidArgument("pvs: work_budget too small");
  return core::Status::OK();
}

}  // namespace

PvsGrid ChooseGrid(const core::Bounds& world, const PvsParams& params) {
  PvsGrid g;
  g.origin = world.mins;
  g.range_units = params.range_units;
  const Vec3 size = world.Size();
  for (float c = params.min_cell_units;; c += kCellStepUnits) {
    g.cell_units = c;
    g.nx = std::max(1, static_cast<int>(std::ceil(size.x / c)));
    g.ny = std::max(1, static_cast<int>(std::ceil(size.y / c)));
    g.nz = std::max(1, static_cast<int>(std::ceil(size.z / c)));
    g.reach_cells = static_cast<int>(std::ceil(params.range_units / c)) + 1;
    const uint64_t span = 2 * static_cast<uint64_t>(g.reach_cells) + 1;
    const uint64_t row = std::min<uint64_t>(span, g.nx) * std::min<uint64_t>(span, g.ny) *
                         std::min<uint64_t>(span, g.nz);
    // The count in 64 bits: a map near its +-1000000 bounds has billions of small cells, and
    // nx * ny * nz in an int wrapped to a small count, accepted here, then allocated for real.
    const uint64_t cells = static_cast<uint64_t>(g.nx) * static_cast<uint64_t>(g.ny) * static_cast<uint64_t>(g.nz);
    if (cells <= static_cast<uint64_t>(format::kMaxCells) && cells * row <= params.work_budget) return g;
  }
}

namespace {

// PvsProgressReporter's calls during pass 2: the first at Start, then from Traced, which the
// build's threads call after each chunk of rows.
class ProgressCalls {
 public:
  ProgressCalls(const PvsProgressReporter& reporter, std::chrono::steady_clock::time_point t0,
                int rows)
      : reporter_(reporter), t0_(t0), rows_(rows) {}

  void Start() EXCLUDES(mu_) {
    core::MutexLock lock(&mu_);
    Call(0);
  }

  // `n` more rows decided. The thread that decides the last row tells it; the others tell the
  // count so far when `every_s` has passed and no other thread is telling. The count is read
  // under the lock, so the calls see it grow, and a call that would see every row leaves it to
  // that thread, so the last call is the one with every row.
  void Traced(int n) EXCLUDES(mu_) {
    const bool last = traced_.fetch_add(n, std::memory_order_relaxed) + n == rows_;
    if (!reporter_.fn) return;
    if (last) {
      core::MutexLock lock(&mu_);
      Call(rows_);
      return;
    }
    if (!mu_.TryLock()) return;
    const int done = traced_.load(std::memory_order_relaxed);
    if (Seconds() - last_s_ >= reporter_.every_s && done < rows_) Call(done);
    mu_.Unlock();
  }

 private:
  double Seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
  }
  void Call(int done) REQUIRES(mu_) {
    if (!reporter_.fn) return;
    last_s_ = Seconds();
    reporter_.fn(PvsProgress{done, rows_, last_s_});
  }

  const PvsProgressReporter& reporter_;
  const std::chrono::steady_clock::time_point t0_;
  const int rows_;
  std::atomic<int> traced_{0};
  core::Mutex mu_;
  double last_s_ GUARDED_BY(mu_) = 0;
};

}  // namespace

std::string DescribeProgress(const PvsProgress& p) {
  char text[160];
  if (p.rows_traced == 0) {
    std::snprintf(text, sizeof text, "not cached: building, %d rows to trace", p.rows);
  } else if (p.rows_traced < p.rows) {
    // The rows decided so far at the rate so far; the first ones wait for the passes before.
    const double left = p.elapsed_s * (p.rows - p.rows_traced) / p.rows_traced;
    std::snprintf(text, sizeof text, "%d of %d rows traced in %.0f s, about %.0f s left",
                  p.rows_traced, p.rows, p.elapsed_s, left);
  } else {
    std::snprintf(text, sizeof text, "all %d rows traced in %.1f s", p.rows, p.elapsed_s);
  }
  return text;
}

core::Status BuildPvs(const maps::Map& map, const collision::CollisionWorld& collision,
                      const PvsParams& params, Pvs* out, PvsBuildStats* stats,
                      const PvsProgressReporter& progress) {
  core::Status s = CheckParams(params);
  if (!s.ok()) return s;
  if (map.bounds.IsEmpty()) {
    return core::Status::InvalidArgument("pvs: map " + map.path + " has no solid brushes");
  }
  const auto t0 = std::chrono::steady_clock::now();
  const int threads = params.threads > 0
                          ? params.threads
                          : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  Work w{map, collision, params, ChooseGrid(map.bounds, params), {}, {}, {}, {}, {}, {}, {}};
  const PvsGrid& g = w.grid;
  const int cells = g.cell_count();

  MarkClosedCells(&w);
  core::Bounds grid_box{g.origin, g.origin + Vec3{g.nx * g.cell_units, g.ny * g.cell_units,
                                                 g.nz * g.cell_units}};
  w.inside.Build(map, collision, grid_box, g.cell_units / kVoxelsPerCell, threads);
  w.samples.resize(static_cast<size_t>(cells) * kMaxSamples);
  w.sample_count.assign(cells, 0);
  ParallelFor(cells, threads, [&w](int begin, int end) {
    for (int c = begin; c < end; ++c) SampleCell(&w, c);
  });

  w.row_offset.assign(cells, Pvs::kNoRow);
  size_t nwords = 0;
  for (int c = 0; c < cells; ++c) {
    if (w.sample_count[c] == 0) continue;
    w.row_offset[c] = static_cast<uint32_t>(nwords);
    nwords += (static_cast<size_t>(g.RowBoxOf(g.Coord(c)).bits()) + 63) / 64;
  }
  if (nwords >= Pvs::kNoRow) return core::Status::InvalidArgument("pvs: grid too large");
  w.words.assign(nwords, 0);

  // Centre to centre first, then every other pair of samples in a fixed shuffled order.
  for (uint8_t i = 0; i < kMaxSamples; ++i) {
    for (uint8_t j = 0; j < kMaxSamples; ++j) w.ray_order.emplace_back(i, j);
  }
  uint64_t shuffle = core::Mix64(params.seed);
  for (size_t k = w.ray_order.size() - 1; k > 1; --k) {
    shuffle = core::Mix64(shuffle + k);
    std::swap(w.ray_order[k], w.ray_order[1 + shuffle % k]);
  }

  int rows = 0;
  for (int c = 0; c < cells; ++c) rows += w.row_offset[c] != Pvs::kNoRow;
  ProgressCalls calls(progress, t0, rows);
  calls.Start();
  ParallelFor(cells, threads, [&w, &calls](int begin, int end) {
    int traced = 0;
    for (int c = begin; c < end; ++c) {
      if (w.row_offset[c] == Pvs::kNoRow) continue;
      TraceRow(&w, c);
      ++traced;
    }
    if (traced > 0) calls.Traced(traced);
  });
  MirrorRows(&w);
  const std::vector<uint64_t> mirrored = w.words;
  std::vector<double> share(cells, -1.0);
  ParallelFor(cells, threads, [&w, &share, &mirrored](int begin, int end) {
    std::vector<uint64_t> merged;
    for (int c = begin; c < end; ++c) {
      if (w.row_offset[c] != Pvs::kNoRow) share[c] = WidenRow(&w, c, mirrored, &merged);
    }
  });

  PvsBuildStats st;
  st.cells = cells;
  double sum = 0;
  for (int c = 0; c < cells; ++c) {
    st.closed_cells += w.closed[c];
    if (share[c] < 0) continue;
    ++st.open_cells;
    sum += share[c];
  }
  st.visible_fraction = st.open_cells > 0 ? sum / st.open_cells : 0;
  st.pairs_traced = w.pairs_traced.load();
  st.rays = w.rays.load();
  *out = Pvs(g, std::move(w.row_offset), std::move(w.words));
  st.build_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (stats != nullptr) *stats = st;
  return core::Status::OK();
}

}  // namespace vis
