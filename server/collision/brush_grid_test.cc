// BrushGrid::Query against a brute force: every brush whose box meets the query, once each, in
// the order the header promises (cells row by row, then id), with boxes that share faces and
// edges with the query and with cell boundaries, and cells holding more brushes than one block.
#include "server/collision/brush_grid.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <tuple>
#include <vector>

namespace collision {
namespace {

using core::Bounds;
using core::Vec3;

Bounds RandomBox(std::mt19937* rng) {
  // Corners on a 16-unit lattice over about 10 cells of 64 units, so that boxes often touch the
  // query and the cell boundaries exactly; Z is narrow, as floors are.
  std::uniform_int_distribution<int> at(0, 40), size(0, 12), z(0, 8), height(0, 4);
  const Vec3 lo{16.0f * at(*rng), 16.0f * at(*rng), 16.0f * z(*rng)};
  return {lo, lo + Vec3{16.0f * size(*rng), 16.0f * size(*rng), 16.0f * height(*rng)}};
}

TEST_CASE("BrushGrid: Query reports exactly the brushes whose boxes meet it, once, in cell order",
          "[collision][grid]") {
  std::mt19937 rng(20261128);
  for (int map = 0; map < 20; ++map) {
    std::vector<Bounds> boxes;
    const int count = map == 0 ? 1 : 20 + map * 15;
    for (int i = 0; i < count; ++i) boxes.push_back(RandomBox(&rng));
    BrushGrid grid;
    grid.Build(boxes);  // 64-unit cells: the lattice spans fewer than 128 of them
    Bounds world = Bounds::Empty();
    for (const Bounds& b : boxes) world.Add(b);
    auto cell = [&](float v, float origin) { return static_cast<int>((v - origin) / 64.0f); };
    for (int q = 0; q < 200; ++q) {
      const Bounds query = RandomBox(&rng);
      std::vector<std::tuple<int, int, uint32_t>> expected;  // (reference row, column, id)
      for (uint32_t id = 0; id < boxes.size(); ++id) {
        if (!boxes[id].Intersects(query)) continue;
        // Query cells are clamped to the grid; every brush lies inside it.
        const int qx = std::max(0, cell(query.mins.x, world.mins.x));
        const int qy = std::max(0, cell(query.mins.y, world.mins.y));
        expected.emplace_back(std::max(qy, cell(boxes[id].mins.y, world.mins.y)),
                              std::max(qx, cell(boxes[id].mins.x, world.mins.x)), id);
      }
      std::sort(expected.begin(), expected.end());
      std::vector<uint32_t> want, got;
      for (const auto& e : expected) want.push_back(std::get<2>(e));
      grid.Query(query, [&](uint32_t id) {
        got.push_back(id);
        return true;
      });
      REQUIRE(got == want);
      if (want.size() >= 2) {  // stopping early stops at once
        got.clear();
        grid.Query(query, [&](uint32_t id) {
          got.push_back(id);
          return got.size() < 2;
        });
        REQUIRE(got == std::vector<uint32_t>(want.begin(), want.begin() + 2));
      }
    }
  }
}

TEST_CASE("BrushGrid: an empty grid and a query beside the world report nothing",
          "[collision][grid]") {
  BrushGrid empty;
  empty.Build({});
  int calls = 0;
  empty.Query(Bounds{{0, 0, 0}, {10, 10, 10}}, [&](uint32_t) { return ++calls > 0; });
  BrushGrid grid;
  grid.Build({Bounds{{0, 0, 0}, {100, 100, 10}}});
  grid.Query(Bounds{{0, 0, 11}, {100, 100, 20}}, [&](uint32_t) { return ++calls > 0; });   // above
  grid.Query(Bounds{{101, 0, 0}, {200, 100, 10}}, [&](uint32_t) { return ++calls > 0; });  // beside
  REQUIRE(calls == 0);
  // Touching the brush's corner only.
  grid.Query(Bounds{{100, 100, 10}, {200, 200, 20}}, [&](uint32_t) { return ++calls > 0; });
  REQUIRE(calls == 1);
}

}  // namespace
}  // namespace collision
