// InsideVolume: open voxels by point tests (parallel over Z slices), then a 6-connected
// breadth-first flood from the seeds.
#include "server/vis/inside.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <thread>

namespace vis {

namespace {

// Seeds: where the map puts entities. Origins sit on floors, so each is lifted a little.
std::vector<core::Vec3> SeedPoints(const maps::Map& map) {
  std::vector<core::Vec3> seeds;
  const core::Vec3 lift{0, 0, 8};
  for (const maps::SpawnPoint& s : map.spawns) seeds.push_back(s.origin + lift);
  for (const maps::Pickup& p : map.pickups) seeds.push_back(p.origin + lift);
  for (const maps::Teleporter& t : map.teleporters) seeds.push_back(t.dest_origin + lift);
  return seeds;
}

}  // namespace

void InsideVolume::Build(const maps::Map& map, const collision::CollisionWorld& collision,
                         const core::Bounds& bounds, float voxel_units, int threads) {
  origin_ = bounds.mins;
  voxel_ = voxel_units;
  const core::Vec3 size = bounds.Size();
  nx_ = std::max(1, static_cast<int>(std::ceil(size.x / voxel_)));
  ny_ = std::max(1, static_cast<int>(std::ceil(size.y / voxel_)));
  nz_ = std::max(1, static_cast<int>(std::ceil(size.z / voxel_)));
  std::vector<uint8_t> open(static_cast<size_t>(nx_) * ny_ * nz_, 0);
  std::atomic<int> next_z{0};
  auto fill = [&] {
    for (int z; (z = next_z.fetch_add(1)) < nz_;) {
      for (int y = 0; y < ny_; ++y) {
        for (int x = 0; x < nx_; ++x) {
          open[Index(x, y, z)] = collision.PointContents(Centre(x, y, z)) != maps::Contents::kSolid;
        }
      }
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(fill);
  fill();
  for (std::thread& t : pool) t.join();

  inside_.assign(open.size(), 0);
  std::vector<size_t> queue;
  for (const core::Vec3& p : SeedPoints(map)) {
    const core::Vec3 f = (p - origin_) * (1.0f / voxel_);
    if (!(f.x >= 0 && f.y >= 0 && f.z >= 0)) continue;
    const int x = static_cast<int>(f.x), y = static_cast<int>(f.y), z = static_cast<int>(f.z);
    if (x >= nx_ || y >= ny_ || z >= nz_) continue;
    const size_t i = Index(x, y, z);
    if (open[i] && !inside_[i]) {
      inside_[i] = 1;
      queue.push_back(i);
    }
  }
  if (queue.empty()) {  // nothing to flood from: every open voxel counts
    inside_ = open;
  }
  const size_t plane = static_cast<size_t>(nx_) * ny_;
  for (size_t head = 0; head < queue.size(); ++head) {
    const size_t i = queue[head];
    const int x = static_cast<int>(i % nx_), y = static_cast<int>((i / nx_) % ny_);
    const int z = static_cast<int>(i / plane);
    const size_t nbr[6] = {x > 0 ? i - 1 : i,           x + 1 < nx_ ? i + 1 : i,
                           y > 0 ? i - nx_ : i,         y + 1 < ny_ ? i + nx_ : i,
                           z > 0 ? i - plane : i,       z + 1 < nz_ ? i + plane : i};
    for (size_t n : nbr) {
      if (open[n] && !inside_[n]) {
        inside_[n] = 1;
        queue.push_back(n);
      }
    }
  }
  inside_count_ = std::count(inside_.begin(), inside_.end(), uint8_t{1});
}

bool InsideVolume::Inside(core::Vec3 p) const {
  const core::Vec3 f = (p - origin_) * (1.0f / voxel_);
  if (!(f.x >= 0 && f.y >= 0 && f.z >= 0)) return false;
  const int x = static_cast<int>(f.x), y = static_cast<int>(f.y), z = static_cast<int>(f.z);
  if (x >= nx_ || y >= ny_ || z >= nz_) return false;
  return inside_[Index(x, y, z)] != 0;
}

}  // namespace vis
