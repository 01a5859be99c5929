// Tests of snapshot interest: distance, PVS culling, nearest first, the count limit, and the
// ring search's early stop agreeing with a full scan.
#include "server/sv/interest.h"

#include <catch2/catch.hpp>

#include "server/game/cmd_script.h"
#include "server/game/game_test_util.h"
#include "server/vis/pvs_build.h"

#include <algorithm>

namespace sv {
namespace {

using game::EntityId;
namespace gt = game::testing;

std::vector<EntityId> Select(const game::World& w, const vis::Pvs& pvs, EntityId player,
                             float radius, size_t max_count) {
  InterestIndex index;
  index.Build(w, pvs);
  std::vector<EntityId> out;
  index.Select(w, player, radius, max_count, &out);
  return out;
}

vis::Pvs BuildFor(const gt::TestWorld& t) {
  vis::Pvs pvs;
  REQUIRE(vis::BuildPvs(t.map, *t.collision, {}, &pvs, nullptr).ok());
  return pvs;
}

TEST_CASE("interest keeps the nearest entities in range, nearest first, without the viewer") {
  gt::TestMap m;
  m.Floor(2048).Spawn({-1500, -1500, 24});
  m.Pickup("item_health", {150, 0, 0});
  auto t = gt::MakeWorld(m.Finish());
  game::World* w = t.world.get();
  const EntityId a = gt::JoinOrDie(w, "a"), c = gt::JoinOrDie(w, "c"), d = gt::JoinOrDie(w, "d");
  gt::Place(w, a, {0, 400, 24});
  gt::Place(w, c, {0, 100, 24});   // 300 away
  gt::Place(w, d, {0, 1900, 24});  // out of radius
  const vis::Pvs pvs = BuildFor(t);  // an open floor: everything is potentially visible
  std::vector<EntityId> seen = Select(*w, pvs, a, 1000, 128);
  REQUIRE(seen.size() == 2);
  CHECK(seen[0] == c);
  CHECK(seen[1] == w->first_pickup());
  CHECK(Select(*w, pvs, a, 1000, 1) == std::vector<EntityId>{c});
  CHECK(Select(*w, pvs, a, 2048, 128).size() == 3);
}

TEST_CASE("interest leaves out what the PVS hides behind a wall, and keeps what it shows") {
  gt::TestMap m;
  // A wall as high as the map splits it in two; the viewer's side is x < 300.
  m.Floor(2048).Spawn({-1500, -1500, 24}).Box({300, -2048, 0}, {800, 2048, 512});
  auto t = gt::MakeWorld(m.Finish());
  game::World* w = t.world.get();
  const vis::Pvs pvs = BuildFor(t);
  const EntityId a = gt::JoinOrDie(w, "a"), b = gt::JoinOrDie(w, "b"), c = gt::JoinOrDie(w, "c");
  gt::Place(w, a, {0, 0, 24});
  gt::Place(w, b, {1200, 0, 24});  // behind the wall, 1200 away
  gt::Place(w, c, {0, 600, 24});   // in the open, 600 away
  CHECK(Select(*w, pvs, a, 2000, 128) == std::vector<EntityId>{c});
  CHECK(Length(w->Get(b).origin - w->Get(a).origin) < 2000);  // hidden by the PVS, not by range
  // Many visible candidates: partial selection keeps exactly the nearest ones, in order.
  std::vector<EntityId> crowd;
  for (int i = 0; i < 40; ++i) {
    const EntityId p = gt::JoinOrDie(w, "p" + std::to_string(i));
    gt::Place(w, p, {-100.0f - 20.0f * ((i * 17) % 40), -600, 24});
    crowd.push_back(p);
  }
  const std::vector<EntityId> seen = Select(*w, pvs, a, 2000, 10);
  REQUIRE(seen.size() == 10);
  for (size_t i = 1; i < seen.size(); ++i) {
    const float d0 = Length(w->Get(seen[i - 1]).origin), d1 = Length(w->Get(seen[i]).origin);
    CHECK(d0 <= d1);
  }
  CHECK(seen[0] == c);  // 600 away, nearer than anyone in the crowd (>= 608)
}

// Dense (300 players spread out: the search stops early), sparse (12: it runs to the radius)
// and stacked (200 players still on the spawn points: many candidates share a distance band).
TEST_CASE("the line search returns exactly the nearest visible entities a full scan finds") {
  const auto [players, ticks] = GENERATE(std::pair{300, 60}, std::pair{12, 60}, std::pair{200, 1});
  auto t = gt::LoadWorld("maps/dm_arena.map", game::WorldConfig{.max_players = players});
  game::World* w = t.world.get();
  const vis::Pvs pvs = BuildFor(t);
  std::vector<gt::ScriptedPlayer> bots;
  for (int i = 0; i < players; ++i) {
    bots.emplace_back(gt::JoinOrDie(w, "p" + std::to_string(i), i + 1), i + 1, gt::ScriptOptions{});
  }
  for (int tick = 0; tick < ticks; ++tick) {  // spread out, shoot: rockets are candidates too
    w->RunWorldPhase();
    for (auto& b : bots) (void)w->ExecuteCommand(b.player(), b.Next(*w));
  }
  InterestIndex index;
  index.Build(*w, pvs);
  for (const float radius : {300.0f, 1000.0f, 2048.0f}) {
    for (EntityId p = 1; p <= players; p += 7) {
      // The reference: every linked entity, filtered and ranked the slow way.
      const game::Vec3 eye = game::EdictEye(w->Get(p));
      const vis::Pvs::View view = pvs.From(eye);
      std::vector<std::pair<float, EntityId>> all;
      for (EntityId id = 1; id < w->object_count(); ++id) {
        const game::Edict& e = w->Get(id);
        if (id == p || !w->tree().IsLinked(id)) continue;
        if (e.kind == game::EntityKind::kPickup && !(e.flags & game::kFlagAvailable)) continue;
        const game::Vec3 d = game::EdictCenter(e) - eye;
        if (Dot(d, d) <= radius * radius && view.Sees(game::EdictCenter(e))) all.emplace_back(Dot(d, d), id);
      }
      std::sort(all.begin(), all.end());
      std::vector<EntityId> want;
      for (size_t i = 0; i < all.size() && i < 64; ++i) want.push_back(all[i].second);
      std::vector<EntityId> got;
      index.Select(*w, p, radius, 64, &got);
      INFO("player " << p << " radius " << radius);
      CHECK(got == want);
    }
  }
}

}  // namespace
}  // namespace sv
