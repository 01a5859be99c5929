// Tests for what the loader makes of a parsed map: brush contents, point entities, teleporters,
// jump pads, degenerate brushes, and the real LibreQuake maps and our own generated maps.
#include <catch2/catch.hpp>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <fstream>
#include <string>

#include "maps/map_loader.h"
#include "maps/map_parser.h"
#include "maps/map_test_util.h"

namespace maps {
namespace {

using testing::BoxBrush;
using testing::PointEntity;
using testing::World;

bool Near(Vec3 a, Vec3 b, float eps = 0.01f) {
  return std::fabs(a.x - b.x) < eps && std::fabs(a.y - b.y) < eps && std::fabs(a.z - b.z) < eps;
}

std::string BrushEntity(const std::string& classname, const std::string& brushes,
                        const std::string& extra_keys = "") {
  return "{\n\"classname\" \"" + classname + "\"\n" + extra_keys + brushes + "}\n";
}

// Checks that `b` is a closed convex polyhedron: every vertex is behind or on every plane and on
// at least three; every plane holds at least three vertices; bounds are the vertices' box.
void CheckPolyhedron(const Brush& b) {
  constexpr float kOn = 0.05f;
  REQUIRE(b.planes.size() >= 4);
  REQUIRE(b.vertices.size() >= 4);
  Bounds box = Bounds::Empty();
  for (Vec3 v : b.vertices) {
    box.Add(v);
    int on = 0;
    for (const Plane& p : b.planes) {
      float d = Dot(p.normal, v) - p.dist;
      REQUIRE(d <= kOn);
      on += std::fabs(d) <= kOn ? 1 : 0;
    }
    REQUIRE(on >= 3);
  }
  for (const Plane& p : b.planes) {
    REQUIRE(std::fabs(Length(p.normal) - 1) < 1e-4f);
    int on = 0;
    for (Vec3 v : b.vertices) on += std::fabs(Dot(p.normal, v) - p.dist) <= kOn ? 1 : 0;
    REQUIRE(on >= 3);
  }
  REQUIRE(box == b.bounds);
}

TEST_CASE("brush contents follow the entity, then the first non-skip texture") {
  std::string text =
      World(BoxBrush({0, 0, 0}, {64, 64, 8}, "floor") + BoxBrush({0, 0, 8}, {64, 64, 16}, "*water1") +
            BoxBrush({0, 0, 16}, {8, 8, 24}, "CLIP") + BoxBrush({0, 0, 24}, {8, 8, 32}, "sky4") +
            BoxBrush({0, 0, 32}, {8, 8, 40}, "skip") + BoxBrush({0, 0, 40}, {8, 8, 48}, "trigger") +
            BoxBrush({5000, 0, 0}, {5008, 8, 8}, "*lava")) +
      BrushEntity("func_group", BoxBrush({0, 0, -8}, {8, 8, 0}, "a")) +
      BrushEntity("func_detail", BoxBrush({0, 0, -16}, {8, 8, -8}, "a")) +
      BrushEntity("func_detail_wall", BoxBrush({0, 0, -24}, {8, 8, -16}, "a")) +
      BrushEntity("func_detail_illusionary", BoxBrush({-900, 0, 0}, {-800, 8, 8}, "a")) +
      BrushEntity("func_illusionary", BoxBrush({-900, 0, 0}, {-800, 8, 8}, "a")) +
      BrushEntity("trigger_once", BoxBrush({0, 900, 0}, {8, 908, 8}, "a")) +
      BrushEntity("func_door", BoxBrush({0, 0, -32}, {8, 8, -24}, "door")) +
      BrushEntity("func_plat", BoxBrush({0, 0, -40}, {8, 8, -32}, "plat")) +
      BrushEntity("func_wall", BoxBrush({0, 0, -48}, {8, 8, -40}, "wall")) +
      BrushEntity("func_mod_specific", BoxBrush({0, 0, -56}, {8, 8, -48}, "x"));
  Map map;
  core::Status s = ParseMap(text, "contents.map", &map);
  INFO(s.ToString());
  REQUIRE(s.ok());
  const Contents expected[] = {
      Contents::kSolid,   Contents::kLiquid, Contents::kSolid, Contents::kSolid,   Contents::kEmpty,
      Contents::kTrigger, Contents::kLiquid, Contents::kSolid, Contents::kSolid,   Contents::kSolid,
      Contents::kEmpty,   Contents::kEmpty,  Contents::kTrigger, Contents::kSolid, Contents::kSolid,
      Contents::kSolid,   Contents::kSolid};
  REQUIRE(map.brushes.size() == std::size(expected));
  for (size_t i = 0; i < map.brushes.size(); ++i) {
    INFO("brush " << i);
    CHECK(map.brushes[i].contents == expected[i]);
    CheckPolyhedron(map.brushes[i]);
  }
  CHECK(map.solid_brushes == 10);
  CHECK(map.bounds == Bounds{{0, 0, -56}, {64, 64, 32}});  // liquids, triggers, illusions left out
  CHECK(map.unknown_entities == 1);
  CHECK(map.classname_counts.at("func_mod_specific") == 1);
  CHECK(map.entities[1].brushes == std::vector<int>{7});
  CHECK(map.brushes[7].entity == 1);
  CHECK(map.warnings.empty());
}

TEST_CASE("skip and hint faces do not decide contents, and a mixed brush warns") {
  std::string mixed = BoxBrush({0, 0, 0}, {8, 8, 8}, "*water");
  mixed.replace(mixed.rfind("*water"), 6, "stone");  // the last face is solid
  std::string skip_first = BoxBrush({0, 0, 8}, {8, 8, 16}, "clip");
  skip_first.replace(skip_first.find("clip"), 4, "SKIP");
  std::string hint_skip = BoxBrush({0, 0, 16}, {8, 8, 24}, "hint");
  hint_skip.replace(hint_skip.rfind("hint"), 4, "skip");
  Map map;
  REQUIRE(ParseMap(World(mixed + skip_first + hint_skip), "skip.map", &map).ok());
  REQUIRE(map.brushes.size() == 3);
  CHECK(map.brushes[0].contents == Contents::kLiquid);
  CHECK(map.brushes[1].contents == Contents::kSolid);
  CHECK(map.brushes[2].contents == Contents::kEmpty);
  REQUIRE(map.warnings.size() == 1);
  CHECK(map.warnings[0] ==
        "skip.map:3: brush 0 of entity 0 (worldspawn): mixes liquid and solid textures; the first "
        "face decides");
}

TEST_CASE("spawns, pickups and unknown entities are extracted") {
  std::string text = World(BoxBrush({-512, -512, -16}, {512, 512, 0}, "floor")) +
                     PointEntity("info_player_deathmatch", "16 -32 24", "\"angle\" \"90\"\n") +
                     PointEntity("info_player_deathmatch", "1.5 2 3", "\"angles\" \"0 45 0\"\n") +
                     PointEntity("info_player_start", "0 0 24") +
                     PointEntity("item_health", "100 0 16") +
                     PointEntity("weapon_rocketlauncher", "-100 0 16") +
                     PointEntity("light", "0 0 200", "\"light\" \"300\"\n") +
                     "{\n\"origin\" \"0 0 0\"\n}\n";
  Map map;
  REQUIRE(ParseMap(text, "ents.map", &map).ok());
  REQUIRE(map.spawns.size() == 3);
  CHECK(map.spawns[0].origin == Vec3{16, -32, 24});
  CHECK(map.spawns[0].angle_deg == 90);
  CHECK(map.spawns[0].deathmatch);
  CHECK(map.spawns[1].origin == Vec3{1.5f, 2, 3});
  CHECK(map.spawns[1].angle_deg == 45);
  CHECK_FALSE(map.spawns[2].deathmatch);
  REQUIRE(map.pickups.size() == 2);
  CHECK(map.pickups[0].classname == "item_health");
  CHECK(map.pickups[1].origin == Vec3{-100, 0, 16});
  CHECK(map.unknown_entities == 2);  // light and the entity without a classname
  CHECK(map.classname_counts.at("(none)") == 1);
  CHECK(map.entities.size() == 8);
  CHECK(map.entities[6].Get("light", "") == "300");
  REQUIRE(map.warnings.size() == 1);
  CHECK(map.warnings[0] == "ents.map:39: entity 7 has no classname");
}

// aftershock-mapcheck passed maps that the server then refused; both now call CheckPlayable.
TEST_CASE("a map without spawn points or without solid brushes is not playable") {
  const std::string floor = World(BoxBrush({-512, -512, -16}, {512, 512, 0}, "floor"));
  const std::string spawn = PointEntity("info_player_deathmatch", "0 0 24");
  Map map;
  REQUIRE(ParseMap(floor + spawn, "ok.map", &map).ok());
  CHECK(CheckPlayable(map).ok());
  REQUIRE(ParseMap(floor, "nospawn.map", &map).ok());
  CHECK(CheckPlayable(map).ToString() == "invalid argument: map nospawn.map: no spawn points");
  REQUIRE(ParseMap("{\n\"classname\" \"worldspawn\"\n}\n" + spawn, "empty.map", &map).ok());
  CHECK(CheckPlayable(map).ToString() == "invalid argument: map empty.map: no solid brushes");
}

// A file of "{}" pairs cost about 290 bytes of memory per 2 bytes of text (two entity records
// and a warning each): 60 MB aborted both tools with std::bad_alloc. Entities and keys are now
// capped, and warnings past kMaxWarningsKept are only counted.
TEST_CASE("map entities and keys are capped and only the first warnings are kept") {
  const std::string world = World(BoxBrush({-512, -512, -16}, {512, 512, 0}, "floor"));
  Map map;
  SECTION("entities") {
    std::string text = world;
    for (int i = 1; i < kMaxEntities; ++i) text += "{}\n";
    REQUIRE(ParseMap(text, "most.map", &map).ok());
    CHECK(map.entities.size() == static_cast<size_t>(kMaxEntities));
    text += "{}\n";
    const core::Status s = ParseMap(text, "more.map", &map);
    CHECK_THAT(s.ToString(), Catch::Contains("expected end of file after 32768 entities"));
  }
  SECTION("keys") {
    REQUIRE(ParseMap(world, "world.map", &map).ok());
    const int world_keys = static_cast<int>(map.entities[0].keys.size());  // worldspawn's own
    std::string keys;
    for (int i = world_keys; i < kMaxKeys; ++i) keys += "\"k\" \"v\"\n";
    REQUIRE(ParseMap(world + "{\n" + keys + "}\n", "most.map", &map).ok());
    const core::Status s = ParseMap(world + "{\n" + keys + "\"k\" \"v\"\n}\n", "more.map", &map);
    CHECK_THAT(s.ToString(), Catch::Contains("expected at most 262144 keys in the whole map"));
  }
  SECTION("warnings") {
    std::string text = world;
    for (size_t i = 0; i < kMaxWarningsKept + 500; ++i) text += "{}\n";
    REQUIRE(ParseMap(text, "warn.map", &map).ok());
    CHECK(map.warnings.size() == kMaxWarningsKept);
    CHECK(map.warnings_not_kept == 500);
  }
}

// Control bytes in a classname or a value reached error messages raw: a NUL cut mapcheck's
// message short, an ESC sequence reached the terminal. They are written as \xHH, as the
// tokenizer's own errors always were.
TEST_CASE("control bytes in names and values are escaped in messages") {
  Map map;
  const core::Status s =
      ParseMap("{\n\"classname\" \"world" + std::string(1, '\0') + "spawn\x1b[31m\"\n}\n",
               "nul.map", &map);
  CHECK(s.ToString() ==
        "invalid argument: nul.map:1:1: expected worldspawn as the first entity, found classname "
        "\"world\\x00spawn\\x1b[31m\"");
}

// Regression: Get() used to return a reference to its fallback, which dangled when the fallback
// was a temporary (found by the ASan mutation run).
TEST_CASE("Entity::Get with a temporary fallback gives a value that stays valid") {
  Entity e;
  e.keys = {{"target", "a"}, {"target", "b"}};
  const std::string& absent = e.Get("targetname", std::string(40, 'x'));
  std::string filler(40, 'y');  // reuses the stack the temporary would have had
  CHECK(absent == std::string(40, 'x'));
  CHECK(e.Get("target", "") == "b");  // the last duplicate wins
}

TEST_CASE("teleporters resolve their target to an info_teleport_destination") {
  std::string text =
      World(BoxBrush({-512, -512, -16}, {512, 512, 0}, "floor")) +
      BrushEntity("trigger_teleport", BoxBrush({0, 0, 0}, {32, 32, 64}, "trigger"),
                  "\"target\" \"later\"\n") +
      BrushEntity("trigger_teleport", BoxBrush({100, 0, 0}, {132, 32, 64}, "trigger"),
                  "\"target\" \"nowhere\"\n") +
      PointEntity("info_teleport_destination", "300 200 24",
                  "\"targetname\" \"later\"\n\"angle\" \"180\"\n");
  Map map;
  REQUIRE(ParseMap(text, "tele.map", &map).ok());
  REQUIRE(map.teleporters.size() == 1);
  const Teleporter& t = map.teleporters[0];
  CHECK(t.trigger == Bounds{{0, 0, 0}, {32, 32, 64}});
  CHECK(t.brushes == std::vector<int>{1});
  CHECK(map.brushes[1].contents == Contents::kTrigger);
  CHECK(t.dest_origin == Vec3{300, 200, 24});
  CHECK(t.dest_angle_deg == 180);
  REQUIRE(map.warnings.size() == 1);
  CHECK(map.warnings[0] == "tele.map:24: entity 2 (trigger_teleport): target \"nowhere\" names no "
                           "info_teleport_destination; ignored");
  CHECK(map.solid_brushes == 1);
}

TEST_CASE("jump pads take direction from angle or angles and speed (default 1000)") {
  auto pad = [](const std::string& keys) {
    return BrushEntity("trigger_push", BoxBrush({0, 0, 0}, {32, 32, 8}, "trigger"), keys);
  };
  std::string text = World(BoxBrush({-512, -512, -16}, {512, 512, 0}, "floor")) +
                     pad("\"angle\" \"-1\"\n") + pad("\"angle\" \"-2\"\n\"speed\" \"300\"\n") +
                     pad("\"angle\" \"90\"\n\"speed\" \"500\"\n") +
                     pad("\"angles\" \"-45 0 0\"\n\"speed\" \"100\"\n") +
                     pad("\"angles\" \"0 -1 0\"\n\"speed\" \"2000\"\n") + pad("");
  Map map;
  REQUIRE(ParseMap(text, "push.map", &map).ok());
  REQUIRE(map.jump_pads.size() == 6);
  CHECK(Near(map.jump_pads[0].velocity, {0, 0, 1000}));
  CHECK(Near(map.jump_pads[1].velocity, {0, 0, -300}));
  CHECK(Near(map.jump_pads[2].velocity, {0, 500, 0}));
  CHECK(Near(map.jump_pads[3].velocity, {70.7107f, 0, 70.7107f}));
  CHECK(Near(map.jump_pads[4].velocity, {0, 0, 2000}));
  CHECK(Near(map.jump_pads[5].velocity, {1000, 0, 0}));
  CHECK(map.jump_pads[0].trigger == Bounds{{0, 0, 0}, {32, 32, 8}});
  CHECK(map.jump_pads[0].brushes == std::vector<int>{1});
}

TEST_CASE("degenerate brushes are skipped with a warning and the rest still loads") {
  const std::string good = BoxBrush({0, 0, 0}, {8, 8, 8}, "a");
  const std::string face_x0 = "( 0 0 0 ) ( 0 1 0 ) ( 0 0 1 ) a 0 0 0 1 1\n";       // x <= 0 side
  const std::string face_xm16 = "( -16 0 0 ) ( -16 0 1 ) ( -16 1 0 ) a 0 0 0 1 1\n";  // x <= -16
  const std::string face_y0 = "( 0 0 0 ) ( 0 0 1 ) ( 1 0 0 ) a 0 0 0 1 1\n";       // -y at 0
  const std::string face_y8 = "( 0 8 0 ) ( 1 8 0 ) ( 0 8 1 ) a 0 0 0 1 1\n";       // +y at 8
  const std::string face_z0 = "( 0 0 0 ) ( 1 0 0 ) ( 0 1 0 ) a 0 0 0 1 1\n";       // -z at 0
  const std::string face_z8 = "( 0 0 8 ) ( 0 1 8 ) ( 1 0 8 ) a 0 0 0 1 1\n";       // +z at 8
  const std::string collinear = "( 0 0 0 ) ( 1 1 1 ) ( 2 2 2 ) a 0 0 0 1 1\n";
  // Brush 6 (a duplicate face) and 7 survive; the others are degenerate.
  std::string with_duplicate = good;
  with_duplicate.insert(2, face_z8);
  const std::string sides = face_x0 + face_y0 + face_y8 + face_z0 + face_z8;
  std::string sliver = "{\n" + sides + "( 0.005 0 0 ) ( 0.005 0 1 ) ( 0.005 1 0 ) a 0 0 0 1 1\n}\n";
  std::string flat = "{\n" + sides + "( 0 0 0 ) ( 0 0 1 ) ( 0 1 0 ) a 0 0 0 1 1\n}\n";  // x <= 0
  std::string brushes =
      "{\n" + face_x0 + face_y0 + face_z0 + "}\n" +                                    // 3 planes
      "{\n" + face_x0 + face_y0 + face_z0 + face_z0 + "}\n" +                         // duplicate
      "{\n" + face_x0 + face_xm16 + face_y0 + face_y8 + face_z0 + face_z8 + "}\n" +   // empty
      sliver + "{\n" + face_y0 + face_y8 + face_z0 + face_z8 + collinear + "}\n" +   // open
      flat + with_duplicate + good;
  Map map;
  core::Status s = ParseMap(World(brushes) + PointEntity("info_player_start", "4 4 40"), "degen.map",
                            &map);
  INFO(s.ToString());
  REQUIRE(s.ok());
  REQUIRE(map.brushes.size() == 2);
  CHECK(map.brushes[0].index_in_entity == 6);
  CHECK(map.brushes[1].index_in_entity == 7);
  CHECK(map.entities[0].brushes == std::vector<int>{0, 1});
  for (const Brush& b : map.brushes) {
    CheckPolyhedron(b);
    CHECK(b.bounds == Bounds{{0, 0, 0}, {8, 8, 8}});
    CHECK(b.planes.size() == 6);
  }
  CHECK(map.spawns.size() == 1);
  const std::vector<std::string> expected = {
      "degen.map:3: brush 0 of entity 0 (worldspawn): skipped: only 3 distinct planes (a brush "
      "needs 4)",
      "degen.map:8: brush 1 of entity 0 (worldspawn): dropped duplicate plane (line 12)",
      "degen.map:8: brush 1 of entity 0 (worldspawn): skipped: only 3 distinct planes (a brush "
      "needs 4)",
      "degen.map:14: brush 2 of entity 0 (worldspawn): skipped: the planes have an empty or flat "
      "intersection",
      "degen.map:22: brush 3 of entity 0 (worldspawn): skipped: flat intersection (thinner than "
      "0.01 units)",
      "degen.map:30: brush 4 of entity 0 (worldspawn): dropped zero-area plane (line 35)",
      "degen.map:30: brush 4 of entity 0 (worldspawn): skipped: the planes do not enclose a "
      "volume (open brush)",
      "degen.map:37: brush 5 of entity 0 (worldspawn): skipped: the planes have an empty or flat "
      "intersection",
      "degen.map:45: brush 6 of entity 0 (worldspawn): dropped duplicate plane (line 50)",
  };
  CHECK(map.warnings == expected);
}

// Expected figures for the LibreQuake maps, counted independently of the loader by
// tools/mapcheck/count_real_maps.py (line-based parsing, contents by the rules in map.h, corners
// by brute-force triple-plane intersection; it shares no code with as_maps).
struct RealMapFacts {
  const char* path;
  size_t entities, brushes;
  int solid_brushes;
  size_t spawns, deathmatch_spawns, pickups, teleporters, vertices;
  Bounds bounds;
};

TEST_CASE("the LibreQuake maps load with the independently counted figures") {
  const RealMapFacts facts[] = {
      {"maps/librequake/lqdm1.map", 130, 389, 387, 9, 8, 37, 1, 3110,
       {{-1248, -896, -32}, {1056, 1152, 608}}},
      {"maps/librequake/lqdm3.map", 216, 607, 588, 9, 8, 31, 2, 4880,
       {{-672, -1472, -256}, {1312, 1040, 896}}},
      {"maps/librequake/lqdm6.map", 323, 1476, 1444, 10, 9, 34, 2, 11537,
       {{-1088, -1280, -32}, {1972, 1088, 1056}}},
  };
  for (const RealMapFacts& f : facts) {
    INFO(f.path);
    Map map;
    core::Status s = LoadMap(f.path, &map);
    INFO(s.ToString());
    REQUIRE(s.ok());
    CHECK(map.valve220);
    CHECK(map.entities.size() == f.entities);
    CHECK(map.brushes.size() == f.brushes);
    CHECK(map.solid_brushes == f.solid_brushes);
    CHECK(map.spawns.size() == f.spawns);
    size_t deathmatch = 0, vertices = 0;
    for (const SpawnPoint& sp : map.spawns) deathmatch += sp.deathmatch ? 1 : 0;
    CHECK(deathmatch == f.deathmatch_spawns);
    CHECK(map.pickups.size() == f.pickups);
    CHECK(map.teleporters.size() == f.teleporters);
    CHECK(map.bounds == f.bounds);
    CHECK(map.warnings.empty());
    CHECK(map.classname_counts.at("worldspawn") == 1);
    for (const Brush& b : map.brushes) {
      vertices += b.vertices.size();
      CheckPolyhedron(b);
    }
    CHECK(vertices == f.vertices);
  }
}

TEST_CASE("LibreQuake teleporters land on their destinations") {
  Map map;
  REQUIRE(LoadMap("maps/librequake/lqdm1.map", &map).ok());
  REQUIRE(map.teleporters.size() == 1);
  CHECK(map.teleporters[0].dest_origin == Vec3{-496, 96, 384});
  CHECK(map.teleporters[0].dest_angle_deg == 0);
  CHECK(map.teleporters[0].trigger.Contains(Vec3{-208, -400, 64}));
  REQUIRE(LoadMap("maps/librequake/lqdm6.map", &map).ok());
  REQUIRE(map.teleporters.size() == 2);
  CHECK(map.teleporters[0].dest_origin == Vec3{1280, 128, 384});  // target t1
  CHECK(map.teleporters[0].dest_angle_deg == 180);
  CHECK(map.teleporters[1].dest_origin == Vec3{-208, -80, 576});  // target t2
  CHECK(map.teleporters[1].dest_angle_deg == 15);
  for (const Teleporter& t : map.teleporters) {
    for (int b : t.brushes) CHECK(map.brushes[b].contents == Contents::kTrigger);
  }
}

// Our own maps (written by tools/mapgen): the minimums the project promises.
TEST_CASE("our generated maps load and meet their minimums") {
  Map map;
  {
    core::Status s = LoadMap("maps/dm_arena.map", &map);
    INFO(s.ToString());
    REQUIRE(s.ok());
    CHECK(map.spawns.size() >= 16);
    CHECK(map.teleporters.size() >= 2);  // two pairs: each pair is 2 or 4 triggers
    CHECK(map.jump_pads.size() >= 1);
    CHECK(map.warnings.empty());
  }
  {
    core::Status s = LoadMap("maps/dm_small.map", &map);
    INFO(s.ToString());
    REQUIRE(s.ok());
    CHECK(map.spawns.size() == 8);
    CHECK(map.warnings.empty());
  }
  {
    core::Status s = LoadMap("maps/metropolis.map", &map);
    INFO(s.ToString());
    REQUIRE(s.ok());
    CHECK(map.spawns.size() >= 1024);
    CHECK(map.bounds.Size().x >= 16384);
    CHECK(map.bounds.Size().y >= 16384);
    CHECK(map.warnings.empty());
  }
}

// A directory given as --map "opened" and reported a size past 256 MiB; a pipe would block; a
// huge file would be allocated whole before the parser saw it.
TEST_CASE("LoadMap refuses a directory, a pipe or a huge file by name, without reading it") {
  Map map;
  core::Status s = LoadMap("maps", &map);
  CHECK(s.code() == core::Status::Code::kIoError);
  CHECK(s.message() == "open maps: not a map file (a directory)");
  const std::string fifo = "/tmp/aftershock_map_loader_fifo_" + std::to_string(::getpid());
  ::unlink(fifo.c_str());
  REQUIRE(::mkfifo(fifo.c_str(), 0644) == 0);
  s = LoadMap(fifo, &map);
  CHECK(s.message() == "open " + fifo + ": not a map file (a pipe)");
  ::unlink(fifo.c_str());
  s = LoadMap("maps/no_such.map", &map);
  CHECK(s.code() == core::Status::Code::kNotFound);
  CHECK(s.message() == "open maps/no_such.map: No such file or directory");
  const std::string huge = "/tmp/aftershock_map_loader_huge_" + std::to_string(::getpid()) + ".map";
  {
    std::ofstream create(huge);
  }
  REQUIRE(::truncate(huge.c_str(), (256 << 20) + 1) == 0);  // sparse: no disk used
  s = LoadMap(huge, &map);
  CHECK(s.code() == core::Status::Code::kInvalidArgument);
  CHECK(s.message() == huge + ": a map file of 268435457 bytes, more than the 268435456 bytes one can hold");
  ::unlink(huge.c_str());
}

}  // namespace
}  // namespace maps
