// Concurrency test (TSAN): four threads run the same random sweeps, rays, point and line-of-sight
// queries on one shared CollisionWorld at once; every result must equal the single-threaded one.
// Run under ThreadSanitizer (AFTERSHOCK_SANITIZE=thread) it proves the queries share no state.
#include <catch2/catch.hpp>
#include <cstring>
#include <thread>
#include <vector>

#include "server/collision/collision_test_util.h"
#include "server/collision/collision_world.h"

namespace collision {
namespace {

struct Result {
  Trace trace;
  maps::Contents contents = maps::Contents::kEmpty;
  bool line_of_sight = false;

  bool operator==(const Result& o) const {
    return std::memcmp(&trace.fraction, &o.trace.fraction, sizeof(float)) == 0 &&
           trace.end == o.trace.end && trace.normal == o.trace.normal &&
           trace.start_solid == o.trace.start_solid && trace.all_solid == o.trace.all_solid &&
           trace.brush == o.trace.brush && contents == o.contents &&
           line_of_sight == o.line_of_sight;
  }
};

std::vector<Result> RunAll(const CollisionWorld& world, const std::vector<testing::Query>& qs) {
  std::vector<Result> out;
  out.reserve(qs.size());
  for (const testing::Query& q : qs) {
    Result r;
    r.trace = world.TraceBox(q.start, q.end, q.mins, q.maxs);
    r.contents = world.PointContents(q.end);
    r.line_of_sight = world.LineOfSight(q.start, q.end);
    out.push_back(r);
  }
  return out;
}

TEST_CASE("queries from four threads on one world match the single-threaded results") {
  const Narrowphase phase = GENERATE(Narrowphase::kBrushPlanes, Narrowphase::kBulletHull);
  INFO("narrowphase " << static_cast<int>(phase));
  const maps::Map map = testing::RandomMap(3, 200);
  auto world = CollisionWorld::Build(map, {phase});
  const auto queries = testing::RandomQueries(map, 17, 2000);
  const std::vector<Result> expected = RunAll(*world, queries);

  constexpr int kThreads = 4;
  std::vector<std::vector<Result>> got(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] { got[i] = RunAll(*world, queries); });
  }
  for (std::thread& t : threads) t.join();

  int hits = 0;
  for (const Result& r : expected) hits += r.trace.hit() ? 1 : 0;
  CHECK(hits > 100);
  for (int i = 0; i < kThreads; ++i) {
    REQUIRE(got[i].size() == expected.size());
    int mismatches = 0;
    for (size_t k = 0; k < expected.size(); ++k) mismatches += got[i][k] == expected[k] ? 0 : 1;
    CHECK(mismatches == 0);
  }
}

}  // namespace
}  // namespace collision
