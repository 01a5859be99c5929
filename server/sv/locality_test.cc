// LocalityAssignment on a real World: a player runs on the owner of its leaf, migrates once when
// it walks deep into another thread's leaves, does not bounce while it walks along a border, and
// the leaves are rebalanced when players crowd one thread's part; and the tree depth the server
// and aftershock-replay default to under --assign locality; and how its players spread over the
// worker ports.
#include "server/sv/locality.h"

#include <catch2/catch.hpp>

#include <string>
#include <utility>
#include <vector>

#include "server/game/game_test_util.h"
#include "server/sv/replay_options.h"
#include "server/sv/server_options.h"

namespace gt = game::testing;

namespace {

struct Fixture {
  gt::TestWorld t;
  Fixture() {
    gt::TestMap m;
    m.Floor(1024).Spawn({0, 0, 24});
    game::WorldConfig config;
    config.max_players = 64;
    t = gt::MakeWorld(m.Finish(), config);
  }
  game::World* w() { return t.world.get(); }
  const areanode::AreanodeTree& tree() { return t.world->tree(); }
  // A point well inside leaf `leaf` (its region's centre, at standing height).
  core::Vec3 Centre(int leaf) {
    const core::Bounds& r = tree().node(tree().LeafNode(leaf)).bounds;
    return {0.5f * (r.mins.x + r.maxs.x), 0.5f * (r.mins.y + r.maxs.y), 24};
  }
  // A leaf of `thread` and a neighbouring leaf of another thread.
  std::pair<int, int> BorderPair(const sv::LocalityAssignment& a, int thread) {
    const areanode::LeafPartition& p = a.partition();
    for (int l = 0; l < p.leaf_count(); ++l) {
      if (p.owner(l) != thread) continue;
      for (int n : p.neighbours(l)) {
        if (p.owner(n) != thread) return {l, n};
      }
    }
    FAIL("no border");
    return {-1, -1};
  }
};

sv::LocalityOptions Options(int rebalance_ticks = 1000000, float margin = 64) {
  sv::LocalityOptions o;
  o.rebalance_ticks = rebalance_ticks;
  o.rebalance_threshold = 0.25;
  o.margin = margin;
  return o;
}

}  // namespace

TEST_CASE("a joined player runs on the owner of its leaf, and an unconnected one nowhere") {
  Fixture f;
  sv::LocalityAssignment a(f.tree(), 2, 64, Options());
  const game::EntityId p = gt::JoinOrDie(f.w(), "a");
  for (int leaf : {0, f.tree().leaf_count() - 1}) {
    gt::Place(f.w(), p, f.Centre(leaf));
    sv::LocalityAssignment fresh(f.tree(), 2, 64, Options());
    fresh.Update(*f.w(), 1);
    CHECK(fresh.ThreadOf(p) == fresh.partition().owner(leaf));
  }
  a.Update(*f.w(), 1);
  CHECK(a.ThreadOf(p + 1) == -1);  // never joined
  CHECK(a.ThreadOf(0) == -1);
  CHECK(a.ThreadOf(1000) == -1);
  // Both threads own leaves (the start splits the map in halves).
  int owned[2] = {0, 0};
  for (int l = 0; l < f.tree().leaf_count(); ++l) ++owned[a.partition().owner(l)];
  CHECK(owned[0] == owned[1]);
}

TEST_CASE("a player migrates once when it walks deep into another thread's leaf") {
  Fixture f;
  sv::LocalityAssignment a(f.tree(), 2, 64, Options());
  const game::EntityId p = gt::JoinOrDie(f.w(), "walker");
  const auto [mine, theirs] = f.BorderPair(a, 0);
  gt::Place(f.w(), p, f.Centre(mine));
  a.Update(*f.w(), 1);
  REQUIRE(a.ThreadOf(p) == 0);
  gt::Place(f.w(), p, f.Centre(theirs));
  a.Update(*f.w(), 2);
  CHECK(a.ThreadOf(p) == a.partition().owner(theirs));
  CHECK(a.migrations() == 1);
  a.Update(*f.w(), 3);  // staying put: no further migration
  CHECK(a.migrations() == 1);
}

TEST_CASE("a player walking along a border within the margin does not bounce") {
  Fixture f;
  sv::LocalityAssignment a(f.tree(), 2, 64, Options());
  const game::EntityId p = gt::JoinOrDie(f.w(), "borderline");
  const auto [mine, theirs] = f.BorderPair(a, 0);
  const core::Bounds& rm = f.tree().node(f.tree().LeafNode(mine)).bounds;
  const core::Bounds& rt = f.tree().node(f.tree().LeafNode(theirs)).bounds;
  // The shared plane, and the axis across it.
  const int axis = rm.maxs.x == rt.mins.x || rt.maxs.x == rm.mins.x ? 0 : 1;
  const float plane = rm.maxs[axis] == rt.mins[axis] ? rm.maxs[axis] : rm.mins[axis];
  const float into_theirs = rm.maxs[axis] == rt.mins[axis] ? 1.0f : -1.0f;
  core::Vec3 at = f.Centre(mine);
  at[axis] = plane - into_theirs * 8;
  gt::Place(f.w(), p, at);
  a.Update(*f.w(), 1);
  REQUIRE(a.ThreadOf(p) == 0);
  for (int step = 0; step < 20; ++step) {  // zig-zag 8 units either side of the plane
    at[axis] = plane + (step % 2 == 0 ? 1.0f : -1.0f) * into_theirs * 8;
    gt::Place(f.w(), p, at);
    a.Update(*f.w(), 2 + step);
    CHECK(a.ThreadOf(p) == 0);
  }
  CHECK(a.migrations() == 0);
  // With no margin the same walk migrates at every crossing.
  sv::LocalityAssignment strict(f.tree(), 2, 64, Options(1000000, 0));
  for (int step = 0; step < 4; ++step) {
    at[axis] = plane + (step % 2 == 0 ? 1.0f : -1.0f) * into_theirs * 8;
    gt::Place(f.w(), p, at);
    strict.Update(*f.w(), 1 + step);
  }
  CHECK(strict.migrations() == 3);
}

TEST_CASE("players crowding one thread's part move leaves to the other thread") {
  Fixture f;
  sv::LocalityAssignment a(f.tree(), 2, 64, Options(/*rebalance_ticks=*/10));
  std::vector<game::EntityId> players;
  // 20 players spread over thread 0's leaves, none on thread 1's.
  std::vector<int> zero_leaves;
  for (int l = 0; l < f.tree().leaf_count(); ++l) {
    if (a.partition().owner(l) == 0) zero_leaves.push_back(l);
  }
  for (int i = 0; i < 20; ++i) {
    const game::EntityId p = gt::JoinOrDie(f.w(), "crowd" + std::to_string(i));
    gt::Place(f.w(), p, f.Centre(zero_leaves[static_cast<size_t>(i) % zero_leaves.size()]));
    players.push_back(p);
  }
  a.Update(*f.w(), 5);  // before the period: all on thread 0
  for (game::EntityId p : players) CHECK(a.ThreadOf(p) == 0);
  CHECK(a.rebalances() == 0);
  a.Update(*f.w(), 10);
  CHECK(a.rebalances() == 1);
  CHECK(a.leaves_moved() > 0);
  int on_one = 0;
  for (game::EntityId p : players) on_one += a.ThreadOf(p) == 1 ? 1 : 0;
  CHECK(on_one >= 6);
  CHECK(on_one <= 14);
  for (int part = 0; part < 2; ++part) CHECK(a.partition().Connected(part));
}

// Both binaries' --areanode-depth defaults to 2,048 leaves under --assign locality (the threads
// share fewer leaves the finer they are) and stays at the paper's 16 otherwise, unless given;
// aftershock-replay follows the server.
TEST_CASE("the areanode depth defaults to 11 under --assign locality, else 4, unless given") {
  // The depth `parse` leaves in `options` for the command line `args` (program name first).
  auto depth = [](auto parse, auto options, std::vector<std::string> args) {
    std::vector<const char*> argv;
    for (const std::string& a : args) argv.push_back(a.c_str());
    REQUIRE(parse(static_cast<int>(argv.size()), argv.data(), &options).outcome == sv::ParseOutcome::kRun);
    return options.areanode_depth;
  };
  const std::vector<std::pair<std::vector<std::string>, int>> cases = {
      {{}, 4},
      {{"--assign", "block"}, 4},
      {{"--assign", "round-robin"}, 4},
      {{"--assign", "locality"}, 11},
      {{"--assign", "locality", "--areanode-depth", "8"}, 8},
      {{"--assign", "locality", "--areanode-depth", "6"}, 6},
      {{"--areanode-depth", "7"}, 7},
      {{"--areanode-depth", "9"}, 9},
      {{"--assign", "locality", "--areanode-depth", "12"}, 12},
  };
  for (const auto& [args, want] : cases) {
    INFO(args.size() << " arguments, want depth " << want);
    std::vector<std::string> server = {"aftershock-server"}, replay = {"aftershock-replay", "--data-dir", "d"};
    server.insert(server.end(), args.begin(), args.end());
    replay.insert(replay.end(), args.begin(), args.end());
    CHECK(depth(sv::ParseServerOptions, sv::ServerOptions{}, server) == want);
    CHECK(depth(sv::ParseReplayOptions, sv::ReplayOptions{}, replay) == want);
  }
}

// Under locality the port only sends a player's replies, so the ports are dealt round-robin: a
// server a quarter full still spreads its players over every worker's port. Block keeps the
// paper's contiguous ranges.
TEST_CASE("locality deals session slots to the worker ports round-robin at any fill") {
  constexpr int kThreads = 4, kMaxPlayers = 64;
  std::vector<int> locality(kThreads, 0), block(kThreads, 0);
  for (int slot = 0; slot < kMaxPlayers / 4; ++slot) {
    ++locality[sv::WorkerForSlot(sv::Assignment::kLocality, slot, kThreads, kMaxPlayers)];
    ++block[sv::WorkerForSlot(sv::Assignment::kBlock, slot, kThreads, kMaxPlayers)];
  }
  CHECK(locality == std::vector<int>{4, 4, 4, 4});
  CHECK(block == std::vector<int>{16, 0, 0, 0});
}
