// Tests for Vec3 and Bounds.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

#include "server/core/bounds.h"
#include "server/core/vec3.h"

using core::Bounds;
using core::Vec3;

TEST_CASE("Vec3 arithmetic, dot, cross and normalize", "[core]") {
  Vec3 a{1, 2, 3}, b{4, 5, 6};
  REQUIRE(a + b == Vec3{5, 7, 9});
  REQUIRE(b - a == Vec3{3, 3, 3});
  REQUIRE(Dot(a, b) == 32.0f);
  REQUIRE(Cross(Vec3{1, 0, 0}, Vec3{0, 1, 0}) == Vec3{0, 0, 1});
  REQUIRE(Length(Normalize(Vec3{3, 4, 0})) == Approx(1.0f));
  REQUIRE(Normalize(Vec3{}) == Vec3{});
}

TEST_CASE("Bounds grow, intersect and contain", "[core]") {
  Bounds b = Bounds::Empty();
  REQUIRE(b.IsEmpty());
  b.Add(Vec3{0, 0, 0});
  b.Add(Vec3{10, 10, 10});
  REQUIRE_FALSE(b.IsEmpty());
  REQUIRE(b.Contains(Vec3{5, 5, 5}));
  REQUIRE(b.Intersects(Bounds{{10, 10, 10}, {20, 20, 20}}));  // touching counts
  REQUIRE_FALSE(b.Intersects(Bounds{{11, 0, 0}, {20, 20, 20}}));
  REQUIRE(b.Contains(Bounds{{1, 1, 1}, {2, 2, 2}}));
  REQUIRE(b.Expanded(1).mins == Vec3{-1, -1, -1});
}

// IsFinite sums x - x over the coordinates (0 for a finite one, NaN for an infinity or a NaN):
// it must agree with std::isfinite on every kind of float, the extremes included.
TEST_CASE("IsFinite is false exactly when a coordinate is an infinity or a NaN", "[core]") {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float values[] = {0.0f, -0.0f, 1.0f, -1e-45f, std::numeric_limits<float>::denorm_min(),
                          std::numeric_limits<float>::max(), -std::numeric_limits<float>::max(),
                          inf, -inf, nan};
  for (float x : values) {
    for (float y : values) {
      for (float z : values) {
        const bool want = std::isfinite(x) && std::isfinite(y) && std::isfinite(z);
        REQUIRE(core::IsFinite(Vec3{x, y, z}) == want);
      }
    }
  }
}
