// Tests for BoxColumns: the four-at-a-time box test returns exactly what Bounds::Intersects
// says, in order, through pushes, overwrites and pops that leave partial blocks.
#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "server/core/box_columns.h"

namespace {

using core::BoxColumns;
using core::Bounds;
using core::Vec3;

constexpr float kInf = std::numeric_limits<float>::infinity();

Bounds RandomBox(std::mt19937* rng) {
  // Coordinates on a coarse grid, so that many boxes touch a query exactly on a face.
  std::uniform_int_distribution<int> at(-20, 20), size(0, 6);
  const Vec3 lo{static_cast<float>(at(*rng)), static_cast<float>(at(*rng)),
                static_cast<float>(at(*rng))};
  return {lo, lo + Vec3{static_cast<float>(size(*rng)), static_cast<float>(size(*rng)),
                        static_cast<float>(size(*rng))}};
}

std::vector<int32_t> BruteForce(const std::vector<Bounds>& boxes, const std::vector<int32_t>& ids,
                                const Bounds& query) {
  std::vector<int32_t> out;
  for (size_t i = 0; i < boxes.size(); ++i) {
    if (boxes[i].Intersects(query)) out.push_back(ids[i]);
  }
  return out;
}

}  // namespace

TEST_CASE("BoxColumns: scans agree with Intersects through pushes, sets and pops",
          "[areanode]") {
  std::mt19937 rng(7);
  BoxColumns columns;
  std::vector<Bounds> boxes;  // the same list, kept the plain way
  std::vector<int32_t> ids;
  int32_t next_id = 100;
  std::uniform_int_distribution<int> op(0, 9);
  for (int step = 0; step < 4000; ++step) {
    const int o = op(rng);
    if (o < 5 || boxes.empty()) {
      const Bounds b = RandomBox(&rng);
      columns.push_back(b);
      boxes.push_back(b);
      ids.push_back(next_id++);
    } else if (o < 7) {
      const size_t i = std::uniform_int_distribution<size_t>(0, boxes.size() - 1)(rng);
      const Bounds b = RandomBox(&rng);
      columns.Set(i, b);
      boxes[i] = b;
    } else {
      columns.pop_back();
      boxes.pop_back();
      ids.pop_back();
    }
    REQUIRE(columns.size() == boxes.size());
    for (size_t i = 0; i < boxes.size(); ++i) REQUIRE(columns.Get(i) == boxes[i]);
    const Bounds query = RandomBox(&rng);
    std::vector<int32_t> got = {-1};  // appended to, not replaced
    columns.AppendIntersecting(query, ids.data(), &got);
    std::vector<int32_t> want = {-1};
    for (int32_t id : BruteForce(boxes, ids, query)) want.push_back(id);
    REQUIRE(got == want);
  }
}

TEST_CASE("BoxColumns: the unused lanes of a block never match, even an infinite query",
          "[areanode]") {
  BoxColumns columns;
  const std::vector<int32_t> ids = {1, 2, 3, 4, 5, 6};
  for (int n = 1; n <= 6; ++n) {
    columns.push_back(Bounds{{0, 0, 0}, {1, 1, 1}});
    std::vector<int32_t> got;
    columns.AppendIntersecting(Bounds{{-kInf, -kInf, -kInf}, {kInf, kInf, kInf}}, ids.data(), &got);
    REQUIRE(got == std::vector<int32_t>(ids.begin(), ids.begin() + n));
    got.clear();
    columns.AppendIntersecting(Bounds{{5, 5, 5}, {6, 6, 6}}, ids.data(), &got);
    REQUIRE(got.empty());
    // A NaN query meets nothing, as Intersects says.
    const float nan = std::numeric_limits<float>::quiet_NaN();
    columns.AppendIntersecting(Bounds{{nan, 0, 0}, {nan, 1, 1}}, ids.data(), &got);
    REQUIRE(got.empty());
  }
  while (!columns.empty()) columns.pop_back();
  std::vector<int32_t> got;
  columns.AppendIntersecting(Bounds{{-kInf, -kInf, -kInf}, {kInf, kInf, kInf}}, ids.data(), &got);
  REQUIRE(got.empty());
}
