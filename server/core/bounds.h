// Bounds: an axis-aligned box given by its minimum and maximum corners (Quake's mins/maxs).
// An empty Bounds (Empty()) has mins > maxs and grows with Add(); Intersects() is inclusive.
#pragma once

#include <algorithm>
#include <limits>

#include "server/core/vec3.h"

namespace core {

struct Bounds {
  Vec3 mins, maxs;

  static constexpr Bounds Empty() {
    constexpr float kBig = std::numeric_limits<float>::max();
    return {{kBig, kBig, kBig}, {-kBig, -kBig, -kBig}};
  }
  constexpr bool IsEmpty() const { return mins.x > maxs.x || mins.y > maxs.y || mins.z > maxs.z; }
  constexpr void Add(Vec3 p) {
    mins = {std::min(mins.x, p.x), std::min(mins.y, p.y), std::min(mins.z, p.z)};
    maxs = {std::max(maxs.x, p.x), std::max(maxs.y, p.y), std::max(maxs.z, p.z)};
  }
  constexpr void Add(const Bounds& b) { Add(b.mins); Add(b.maxs); }
  constexpr bool Intersects(const Bounds& b) const {
    return mins.x <= b.maxs.x && maxs.x >= b.mins.x && mins.y <= b.maxs.y && maxs.y >= b.mins.y &&
           mins.z <= b.maxs.z && maxs.z >= b.mins.z;
  }
  constexpr bool Contains(const Bounds& b) const {
    return mins.x <= b.mins.x && maxs.x >= b.maxs.x && mins.y <= b.mins.y && maxs.y >= b.maxs.y &&
           mins.z <= b.mins.z && maxs.z >= b.maxs.z;
  }
  constexpr bool Contains(Vec3 p) const {
    return p.x >= mins.x && p.x <= maxs.x && p.y >= mins.y && p.y <= maxs.y && p.z >= mins.z &&
           p.z <= maxs.z;
  }
  // The smallest box holding both points (a segment's box).
  static constexpr Bounds Spanning(Vec3 a, Vec3 b) {
    return {{std::min(a.x, b.x), std::min(a.y, b.y), std::min(a.z, b.z)},
            {std::max(a.x, b.x), std::max(a.y, b.y), std::max(a.z, b.z)}};
  }
  // Box grown by `d` units on every side.
  constexpr Bounds Expanded(float d) const {
    return {{mins.x - d, mins.y - d, mins.z - d}, {maxs.x + d, maxs.y + d, maxs.z + d}};
  }
  // Box grown by d.x units on both X sides, d.y on Y, d.z on Z.
  constexpr Bounds Expanded(Vec3 d) const { return {mins - d, maxs + d}; }
  // The box of a hull (mins..maxs relative to an origin) placed at `origin`.
  static constexpr Bounds At(Vec3 origin, Vec3 hull_mins, Vec3 hull_maxs) {
    return {origin + hull_mins, origin + hull_maxs};
  }
  constexpr Vec3 Size() const { return maxs - mins; }
  constexpr Vec3 Center() const { return (mins + maxs) * 0.5f; }
  friend constexpr bool operator==(const Bounds&, const Bounds&) = default;
};

}  // namespace core
