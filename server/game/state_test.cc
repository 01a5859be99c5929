// State tests: the object layout, the Mut contract (every changed object was announced to the
// write hook first, and reported to the written hook after the call), hashing, save/load, persistent players and refusal of bad input.
#include <catch2/catch.hpp>

#include <cstring>
#include <map>
#include <set>

#include "server/game/cmd_script.h"
#include "server/game/free_ids.h"
#include "server/game/game_constants.h"
#include "server/game/game_test_util.h"

namespace game {
namespace {

using testing::CmdSpec;
using testing::RunCmds;

testing::TestWorld SmallArena(int max_players = 8) {
  testing::TestMap m;
  m.Floor(1024).Box({-1024, -1024, 0}, {-1000, 1024, 256}).Box({1000, -1024, 0}, {1024, 1024, 256});
  m.Box({-1024, -1024, 0}, {1024, -1000, 256}).Box({-1024, 1000, 0}, {1024, 1024, 256});
  m.Box({-100, -100, 0}, {100, 100, 48});
  for (int i = 0; i < 6; ++i) m.Spawn({-800.0f + 300 * i, -800.0f + 250 * (i % 3), 24});
  m.Pickup("item_health", {500, 500, 0}).Pickup("item_armor1", {-500, 500, 0});
  m.Pickup("weapon_rocketlauncher", {500, -500, 0}).Pickup("item_rockets", {-500, -500, 0});
  m.Pickup("light", {0, 0, 100});  // not an item: not placed
  m.Teleporter({-600, 0, 0}, {-560, 40, 64}, {600, 0, 24}).JumpPad({0, 600, 0}, {40, 640, 8}, {0, 300, 600});
  WorldConfig config;
  config.max_players = max_players;
  return testing::MakeWorld(m.Finish(), config);
}

TEST_CASE("the state is one array of 256-byte objects laid out by id") {
  auto t = SmallArena(8);
  World* w = t.world.get();
  CHECK(w->pickup_count() == 4);
  CHECK(w->object_count() == 1 + 8 + 8 * kRocketsPerPlayer + 4 + WorldConfig{}.max_records);
  CHECK(w->first_record() == 1 + 8 + 8 * kRocketsPerPlayer + 4);
  CHECK(w->StateBytes().size() == static_cast<size_t>(w->object_count()) * kObjectSize);
  CHECK(w->RocketSlot(1, 0) == 9);
  CHECK(w->first_pickup() == 9 + 32);
  EntityId a = testing::JoinOrDie(w, "first");
  EntityId b = testing::JoinOrDie(w, "second");
  CHECK(a == 1);
  CHECK(b == 2);
  const auto* base = w->StateBytes().data();
  Edict copy;
  std::memcpy(&copy, base + b * kObjectSize, sizeof copy);
  CHECK(std::strcmp(copy.name, "second") == 0);
  Globals g;
  std::memcpy(&g, base, sizeof g);
  CHECK(g.magic == kStateMagic);
  CHECK(g.object_count == static_cast<uint32_t>(w->object_count()));
}

TEST_CASE("every object that changes was announced to the write hook before") {
  auto t = SmallArena(8);
  World* w = t.world.get();
  std::set<int> hooked;
  std::vector<uint8_t> before;
  w->set_write_hook([&](int id) {
    // The hook runs before the first write: the object still holds its old bytes.
    if (hooked.count(id) == 0) REQUIRE(std::memcmp(w->StateBytes().data() + id * kObjectSize, before.data() + id * kObjectSize,
                        kObjectSize) == 0);
    hooked.insert(id);
  });
  testing::ScriptOptions opts;
  opts.attack_percent = 40;
  std::vector<testing::ScriptedPlayer> bots;
  for (int i = 0; i < 8; ++i) {
    w->SaveState(&before);
    EntityId id = testing::JoinOrDie(w, "bot" + std::to_string(i), i);
    Edict& e = w->Mut(id);
    e.weapons_owned |= 1u << kWeaponRocketLauncher;
    e.ammo_rockets = 50;
    bots.emplace_back(id, i + 1, opts);
  }
  int changed_objects = 0;
  for (int tick = 0; tick < 300; ++tick) {
    w->SaveState(&before);
    hooked.clear();
    w->RunWorldPhase();
    for (auto& bot : bots) {
      if (w->Get(bot.player()).flags & kFlagConnected) {
        REQUIRE(w->ExecuteCommand(bot.player(), bot.Next(*w)).ok());
      }
    }
    if (tick == 150) REQUIRE(w->Leave(bots[3].player()).ok());
    if (tick == 200) REQUIRE(w->Join("bot3", 3).resumed);
    auto now = w->StateBytes();
    for (int id = 0; id < w->object_count(); ++id) {
      if (std::memcmp(now.data() + id * kObjectSize, before.data() + id * kObjectSize, kObjectSize) != 0) {
        ++changed_objects;
        INFO("object " << id << " changed without Mut at tick " << tick);
        CHECK(hooked.count(id) == 1);
      }
    }
  }
  CHECK(changed_objects > 300 * 8);
}

TEST_CASE("every object a World call wrote is reported to the written hook, with its final bytes") {
  auto t = SmallArena(8);
  World* w = t.world.get();
  testing::ScriptOptions opts;
  opts.attack_percent = 40;
  std::vector<testing::ScriptedPlayer> bots;
  for (int i = 0; i < 8; ++i) {
    EntityId id = testing::JoinOrDie(w, "bot" + std::to_string(i), i);
    Edict& e = w->Mut(id);
    e.weapons_owned |= 1u << kWeaponRocketLauncher;
    e.ammo_rockets = 50;
    bots.emplace_back(id, i + 1, opts);
  }
  std::map<int, std::vector<uint8_t>> reported;  // id -> its bytes when reported
  w->set_written_hook([&](int id) {
    REQUIRE(reported.count(id) == 0);  // once per call
    const uint8_t* o = w->StateBytes().data() + id * kObjectSize;
    reported[id].assign(o, o + kObjectSize);
  });
  // After each call: everything that changed was reported, and with the bytes it has now (the
  // hook ran when the call's writes were done).
  std::vector<uint8_t> before;
  auto check_call = [&](const char* what, int tick) {
    auto now = w->StateBytes();
    for (int id = 0; id < w->object_count(); ++id) {
      const uint8_t* o = now.data() + id * kObjectSize;
      if (std::memcmp(o, before.data() + id * kObjectSize, kObjectSize) != 0) {
        INFO(what << " at tick " << tick << " changed object " << id << " without reporting it");
        REQUIRE(reported.count(id) == 1);
      }
      if (reported.count(id)) {
        INFO(what << " at tick " << tick << " reported object " << id << " before its last write");
        REQUIRE(std::memcmp(o, reported[id].data(), kObjectSize) == 0);
      }
    }
    reported.clear();
  };
  for (int tick = 0; tick < 200; ++tick) {
    w->SaveState(&before);
    w->RunWorldPhase();
    check_call("world phase", tick);
    for (auto& bot : bots) {
      if (w->Get(bot.player()).flags & kFlagConnected) {
        w->SaveState(&before);
        REQUIRE(w->ExecuteCommand(bot.player(), bot.Next(*w)).ok());
        check_call("command", tick);
      }
    }
    w->SaveState(&before);
    if (tick == 100) REQUIRE(w->Leave(bots[3].player()).ok());
    if (tick == 150) REQUIRE(w->Join("bot3", 3).resumed);
    check_call("leave/join", tick);
  }
  w->set_written_hook(nullptr);
}

TEST_CASE("a player resumes by name and token, and a wrong token is refused") {
  auto t = SmallArena(2);
  World* w = t.world.get();
  EntityId a = testing::JoinOrDie(w, "alice", 1234);
  RunCmds(w, a, 20, CmdSpec{.yaw = 90, .forward = 400});
  w->Mut(a).frags = 3;
  const Edict saved = w->Get(a);
  REQUIRE(w->Leave(a).ok());
  // Leaving frees the player slot; the player lives on as an offline record.
  CHECK(!(w->Get(a).flags & kFlagConnected));
  CHECK(!w->tree().IsLinked(a));
  CHECK(w->FindPlayer("alice") == 0);
  CHECK(w->FindRecord("alice") != 0);
  CHECK(!w->Leave(a).ok());
  UserCmd cmd;
  cmd.sequence = saved.last_cmd_sequence + 1;
  cmd.duration_ms = 33;
  CHECK(w->ExecuteCommand(a, cmd).code() == core::Status::Code::kInvalidArgument);

  JoinResult wrong = w->Join("alice", 999);
  CHECK(wrong.status.code() == core::Status::Code::kRefused);
  CHECK(w->FindRecord("alice") != 0);  // a refused join leaves the record alone
  // A new name takes the lowest free slot, alice's; with both slots online any join is refused,
  // the returning player's too.
  EntityId b = testing::JoinOrDie(w, "bob", 5);
  CHECK(b == a);
  CHECK(testing::JoinOrDie(w, "carol", 6) != a);
  CHECK(w->Join("dave", 7).status.code() == core::Status::Code::kRefused);  // full (2 slots)
  CHECK(w->Join("alice", 1234).status.code() == core::Status::Code::kRefused);
  CHECK(w->FindRecord("alice") != 0);
  CHECK(w->Join("", 6).status.code() == core::Status::Code::kInvalidArgument);
  CHECK(w->Join(std::string(32, 'x'), 6).status.code() == core::Status::Code::kInvalidArgument);

  // Bob leaves, so alice's old slot is free again: she resumes into it, as she left.
  REQUIRE(w->Leave(b).ok());
  JoinResult back = w->Join("alice", 1234);
  REQUIRE(back.status.ok());
  CHECK(back.resumed);
  CHECK(back.player == a);
  CHECK(w->FindRecord("alice") == 0);
  const Edict& e = w->Get(a);
  CHECK(e.origin == saved.origin);
  CHECK(e.frags == 3);
  CHECK(e.health == saved.health);
  CHECK(e.ammo_shells == saved.ammo_shells);
  CHECK(e.last_cmd_sequence == saved.last_cmd_sequence);
  CHECK(w->tree().IsLinked(a));
}

TEST_CASE("bad commands are refused without changing the state") {
  auto t = SmallArena(2);
  World* w = t.world.get();
  EntityId a = testing::JoinOrDie(w, "a");
  RunCmds(w, a, 3, CmdSpec{.forward = 400});
  const uint64_t hash = w->StateHash();
  UserCmd cmd;
  cmd.sequence = 3;  // already applied
  cmd.duration_ms = 33;
  CHECK(w->ExecuteCommand(a, cmd).code() == core::Status::Code::kRefused);
  cmd.sequence = 4;
  cmd.duration_ms = 0;
  CHECK(!w->ExecuteCommand(a, cmd).ok());
  cmd.duration_ms = 251;
  CHECK(!w->ExecuteCommand(a, cmd).ok());
  cmd.duration_ms = 33;
  cmd.view_angles = {std::numeric_limits<float>::quiet_NaN(), 0, 0};
  CHECK(!w->ExecuteCommand(a, cmd).ok());
  CHECK(!w->ExecuteCommand(0, cmd).ok());
  CHECK(!w->ExecuteCommand(99, cmd).ok());
  CHECK(w->StateHash() == hash);
}

// Runs `ticks` ticks of scripted play, joining `players` bots at the start.
void Play(World* w, std::vector<testing::ScriptedPlayer>* bots, int ticks) {
  for (int tick = 0; tick < ticks; ++tick) {
    w->RunWorldPhase();
    for (auto& bot : *bots) REQUIRE(w->ExecuteCommand(bot.player(), bot.Next(*w)).ok());
  }
}

std::vector<testing::ScriptedPlayer> JoinBots(World* w, int n) {
  testing::ScriptOptions opts;
  opts.attack_percent = 30;
  opts.min_duration_ms = 10;
  opts.max_duration_ms = 120;
  std::vector<testing::ScriptedPlayer> bots;
  for (int i = 0; i < n; ++i) {
    bots.emplace_back(testing::JoinOrDie(w, "p" + std::to_string(i), i), 100 + i, opts);
  }
  return bots;
}

TEST_CASE("save and load give the same hash and the same future") {
  auto t1 = SmallArena(8);
  auto t2 = SmallArena(8);
  auto bots1 = JoinBots(t1.world.get(), 8);
  auto bots2 = bots1;
  Play(t1.world.get(), &bots1, 200);
  std::vector<uint8_t> bytes;
  t1.world->SaveState(&bytes);
  REQUIRE(t2.world->LoadState(bytes).ok());
  CHECK(t2.world->StateHash() == t1.world->StateHash());
  bots2 = bots1;  // the scripts' own state travels with them
  Play(t1.world.get(), &bots1, 200);
  Play(t2.world.get(), &bots2, 200);
  CHECK(t2.world->StateHash() == t1.world->StateHash());
  std::vector<uint8_t> bytes2;
  t2.world->SaveState(&bytes2);
  t1.world->SaveState(&bytes);
  CHECK(bytes == bytes2);

  std::vector<uint8_t> bad = bytes;
  bad.pop_back();
  CHECK(t2.world->LoadState(bad).code() == core::Status::Code::kCorruption);
  bad = bytes;
  bad[0] ^= 1;
  CHECK(!t2.world->LoadState(bad).ok());
  CHECK(t2.world->StateHash() == t1.world->StateHash());  // unchanged on error
}

TEST_CASE("FreeIds gives the lowest free id of its range, across words and after erases") {
  FreeIds ids;
  ids.Reset(100, 300);  // 200 ids: four words, the last one partly used
  CHECK(ids.empty());
  for (int id : {299, 164, 163, 100, 227}) ids.Insert(id);
  CHECK(ids.size() == 5);
  CHECK(ids.Lowest() == 100);
  ids.Erase(100);
  CHECK(ids.Lowest() == 163);
  ids.Erase(163);
  ids.Erase(164);
  CHECK(ids.Lowest() == 227);
  ids.Erase(227);
  CHECK(ids.Lowest() == 299);
  ids.Insert(101);
  CHECK(ids.Lowest() == 101);
  ids.Erase(101);
  ids.Erase(299);
  CHECK(ids.empty());
  ids.Reset(5, 5);  // an empty range
  CHECK(ids.empty());
}

}  // namespace
}  // namespace game
