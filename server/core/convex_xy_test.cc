// Tests for ConvexXY: the hull holds the swept rectangle and nothing farther, and the rectangle
// tests agree with a brute-force geometric check.
#include <catch2/catch.hpp>

#include <random>

#include "server/core/convex_xy.h"

using core::Bounds;
using core::ConvexXY;
using core::Vec3;

namespace {

bool SegmentsCross(Vec3 a, Vec3 b, Vec3 c, Vec3 d) {
  auto turn = [](Vec3 o, Vec3 p, Vec3 q) {
    return double(p.x - o.x) * (q.y - o.y) - double(p.y - o.y) * (q.x - o.x);
  };
  const double d1 = turn(c, d, a), d2 = turn(c, d, b), d3 = turn(a, b, c), d4 = turn(a, b, d);
  return ((d1 > 0) != (d2 > 0)) && ((d3 > 0) != (d4 > 0)) && d1 != 0 && d2 != 0 && d3 != 0 && d4 != 0;
}

// Rectangle and convex polygon meet iff a vertex of one lies in the other or two edges cross.
bool BruteIntersects(const ConvexXY& c, const Bounds& box) {
  const Vec3 corners[4] = {{box.mins.x, box.mins.y, 0}, {box.maxs.x, box.mins.y, 0},
                           {box.maxs.x, box.maxs.y, 0}, {box.mins.x, box.maxs.y, 0}};
  for (const Vec3& p : corners) {
    if (c.Contains(p)) return true;
  }
  for (int i = 0; i < c.size(); ++i) {
    const Vec3 v = c.vertex(i);
    if (v.x >= box.mins.x && v.x <= box.maxs.x && v.y >= box.mins.y && v.y <= box.maxs.y) return true;
  }
  for (int i = 0; i < c.size(); ++i) {
    for (int k = 0; k < 4; ++k) {
      if (SegmentsCross(c.vertex(i), c.vertex((i + 1) % c.size()), corners[k], corners[(k + 1) % 4])) return true;
    }
  }
  return false;
}

struct Case {
  Bounds rect;
  Vec3 offsets[5];
  ConvexXY poly;
};

Case RandomCase(std::mt19937* rng) {
  std::uniform_real_distribution<float> pos(-2000, 2000), size(1, 300), off(-3000, 3000);
  Case c;
  const Vec3 lo{pos(*rng), pos(*rng), 0};
  c.rect = Bounds{lo, lo + Vec3{size(*rng), size(*rng), 50}};
  c.offsets[0] = Vec3{};
  for (int i = 1; i < 5; ++i) c.offsets[i] = Vec3{off(*rng), off(*rng), off(*rng)};
  c.poly = ConvexXY::SweptRect(c.rect, c.offsets);
  return c;
}

}  // namespace

TEST_CASE("ConvexXY: the hull of a swept rectangle holds every swept point", "[core]") {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> unit(0, 1);
  for (int round = 0; round < 200; ++round) {
    const Case c = RandomCase(&rng);
    REQUIRE(c.poly.size() >= 4);
    REQUIRE(c.poly.size() <= 9);  // a rectangle plus a pentagon, in the Minkowski sense
    for (int s = 0; s < 50; ++s) {
      float w[5], total = 0;
      for (float& x : w) total += (x = unit(rng));
      Vec3 p{c.rect.mins.x + unit(rng) * (c.rect.maxs.x - c.rect.mins.x),
             c.rect.mins.y + unit(rng) * (c.rect.maxs.y - c.rect.mins.y), 0};
      for (int i = 0; i < 5; ++i) p = p + c.offsets[i] * (w[i] / total);
      CHECK(c.poly.Intersects(Bounds{p, p}, 0.05f));
    }
  }
}

TEST_CASE("ConvexXY: nothing beyond an edge is contained", "[core]") {
  std::mt19937 rng(11);
  for (int round = 0; round < 200; ++round) {
    const Case c = RandomCase(&rng);
    for (int i = 0; i < c.poly.size(); ++i) {
      const Vec3 a = c.poly.vertex(i), b = c.poly.vertex((i + 1) % c.poly.size());
      const Vec3 mid = (a + b) * 0.5f;
      const Vec3 out = Normalize(Vec3{b.y - a.y, a.x - b.x, 0});  // clockwise turn: outward
      CHECK_FALSE(c.poly.Contains(mid + out * 0.5f));
      CHECK_FALSE(c.poly.Intersects(Bounds{mid + out * 2.0f, mid + out * 2.0f}, 1.0f));
      CHECK(c.poly.Intersects(Bounds{mid + out * 2.0f, mid + out * 2.0f}, 2.5f));
    }
  }
}

TEST_CASE("ConvexXY: rectangle tests agree with a brute-force check", "[core]") {
  std::mt19937 rng(13);
  std::uniform_real_distribution<float> pos(-5000, 5000), size(0, 1500);
  int hits = 0, misses = 0;
  for (int round = 0; round < 100; ++round) {
    const Case c = RandomCase(&rng);
    for (int s = 0; s < 100; ++s) {
      const Vec3 lo{pos(rng), pos(rng), 0};
      const Bounds box{lo, lo + Vec3{size(rng), size(rng), 10}};
      const bool brute = BruteIntersects(c.poly, box);
      CHECK(c.poly.Intersects(box, 0) == brute);
      (brute ? hits : misses)++;
      const bool all_in = c.poly.Contains(Vec3{box.mins.x, box.mins.y, 0}) &&
                          c.poly.Contains(Vec3{box.maxs.x, box.mins.y, 0}) &&
                          c.poly.Contains(Vec3{box.mins.x, box.maxs.y, 0}) &&
                          c.poly.Contains(Vec3{box.maxs.x, box.maxs.y, 0});
      CHECK(c.poly.Contains(box) == all_in);
    }
  }
  CHECK(hits > 500);  // both outcomes were exercised
  CHECK(misses > 500);
}

TEST_CASE("ConvexXY: boxes open beyond the world's edge and the empty polygon", "[core]") {
  const Vec3 offsets[2] = {{0, 0, 0}, {1000, 1000, 0}};
  const ConvexXY c = ConvexXY::SweptRect(Bounds{{0, 0, 0}, {10, 10, 10}}, offsets);
  // A half-plane y >= 2000 open to the left and right: beyond the diagonal's end.
  CHECK_FALSE(c.Intersects(Bounds{{-1e30f, 2000, 0}, {1e30f, 1e30f, 0}}, 1));
  CHECK(c.Intersects(Bounds{{-1e30f, 500, 0}, {1e30f, 1e30f, 0}}, 0));
  CHECK_FALSE(c.Intersects(Bounds{{600, -1e30f, 0}, {1e30f, 300, 0}}, 1));  // below the diagonal
  const ConvexXY none;
  CHECK(none.empty());
  CHECK_FALSE(none.Contains(Vec3{}));
  CHECK_FALSE(none.Intersects(Bounds{{-1e30f, -1e30f, 0}, {1e30f, 1e30f, 0}}, 1));
}
