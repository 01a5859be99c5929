// InsideVolume: the part of a map where entities can be, as a voxel grid flood-filled from the
// map's spawn points, pickups and teleport destinations through voxels whose centre is not in a
// solid brush. A sealed map keeps the flood inside; the void around a map's hull (a LibreQuake
// map's outside) is left out. Immutable after Build(); const queries are thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "maps/map.h"
#include "server/collision/collision_world.h"

namespace vis {

class InsideVolume {
 public:
  // Voxels of `voxel_units` over `bounds`. With no seed in open space every open voxel is
  // inside. Uses up to `threads` threads for the point tests.
  void Build(const maps::Map& map, const collision::CollisionWorld& collision,
             const core::Bounds& bounds, float voxel_units, int threads);

  // True if p's voxel was reached by the flood (false outside the bounds).
  bool Inside(core::Vec3 p) const;
  // Voxel-level access for samplers: dims, centre, and the inside flag.
  int nx() const { return nx_; }
  int ny() const { return ny_; }
  int nz() const { return nz_; }
  float voxel_units() const { return voxel_; }
  core::Vec3 Centre(int x, int y, int z) const {
    return origin_ + core::Vec3{(x + 0.5f) * voxel_, (y + 0.5f) * voxel_, (z + 0.5f) * voxel_};
  }
  bool InsideVoxel(int x, int y, int z) const { return inside_[Index(x, y, z)] != 0; }
  int64_t inside_count() const { return inside_count_; }

 private:
  size_t Index(int x, int y, int z) const {
    return (static_cast<size_t>(z) * ny_ + y) * nx_ + x;
  }

  core::Vec3 origin_;
  float voxel_ = 1;
  int nx_ = 0, ny_ = 0, nz_ = 0;
  std::vector<uint8_t> inside_;
  int64_t inside_count_ = 0;
};

}  // namespace vis
