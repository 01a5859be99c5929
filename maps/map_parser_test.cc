// Tests for the .map syntax: both dialects, integer and float points, comments, quoting, and the
// "FILE:LINE:COL: expected X, found Y" errors for broken input.
#include <catch2/catch.hpp>

#include <string>

#include "maps/map_loader.h"
#include "maps/map_parser.h"
#include "maps/map_test_util.h"

namespace maps {
namespace {

// TrenchBroom's default brush, standard dialect, integer points.
const char* const kStandardMap = R"(// Game: Quake
// Format: Standard
// entity 0
{
"classname" "worldspawn"
"wad" "/gfx/base.wad"
// brush 0
{
( -64 -64 -16 ) ( -64 -63 -16 ) ( -64 -64 -15 ) __TB_empty 0 0 0 1 1
( -64 -64 -16 ) ( -64 -64 -15 ) ( -63 -64 -16 ) __TB_empty 0 0 0 1 1
( -64 -64 -16 ) ( -63 -64 -16 ) ( -64 -63 -16 ) __TB_empty 0 0 0 1 1
( 64 64 16 ) ( 64 65 16 ) ( 65 64 16 ) __TB_empty 0 0 0 1 1
( 64 64 16 ) ( 65 64 16 ) ( 64 64 17 ) __TB_empty 0 0 0 1 1
( 64 64 16 ) ( 64 64 17 ) ( 64 65 16 ) __TB_empty 0 0 0 1 1
}
}
// entity 1
{
"classname" "info_player_deathmatch"
"origin" "0 0 40"
"angle" "90"
}
)";

// The same brush in the Valve 220 dialect, with float points (the +x face is moved to 64.5).
const char* const kValveMap = R"(// Game: Quake
// Format: Valve
{
"mapversion" "220"
"classname" "worldspawn"
{
( -64.0 -64.0 -16.0 ) ( -64 -63 -16 ) ( -64 -64 -15 ) rock [ 0 -1 0 0 ] [ 0 0 -1 0 ] 0 1 1
( -64 -64 -16 ) ( -64 -64 -15 ) ( -63 -64 -16 ) rock [ 1 0 0 0 ] [ 0 0 -1 0 ] 0 1 1
( -64 -64 -16 ) ( -63 -64 -16 ) ( -64 -63 -16 ) rock [ -1 0 0 0 ] [ 0 -1 0 0 ] 0 1 1
( 64 64 16 ) ( 64 65 16 ) ( 65 64 16 ) rock [ 1 0 0 0 ] [ 0 -1 0 0 ] 0 1 1
( 64 64 16 ) ( 65 64 16 ) ( 64 64 17 ) rock [ -1 0 0 0 ] [ 0 0 -1 0 ] 0 1 1
( 64.5 64.25 16.75 ) ( 64.5 64.25 17.75 ) ( 64.5 65.25 16.75 ) rock [ 0 1 0 0 ] [ 0 0 -1 0 ] 0 1 1
}
}
)";

TEST_CASE("standard dialect with integer points loads the box") {
  Map map;
  core::Status s = ParseMap(kStandardMap, "std.map", &map);
  REQUIRE(s.ok());
  CHECK_FALSE(map.valve220);
  REQUIRE(map.brushes.size() == 1);
  const Brush& b = map.brushes[0];
  CHECK(b.planes.size() == 6);
  CHECK(b.vertices.size() == 8);
  CHECK(b.bounds == Bounds{{-64, -64, -16}, {64, 64, 16}});
  CHECK(b.line == 8);
  CHECK(map.bounds == b.bounds);
  REQUIRE(map.spawns.size() == 1);
  CHECK(map.spawns[0].origin == Vec3{0, 0, 40});
  CHECK(map.spawns[0].angle_deg == 90);
  CHECK(map.entities[0].Get("wad", "") == "/gfx/base.wad");
  CHECK(map.warnings.empty());
}

TEST_CASE("valve 220 dialect with float points loads the box") {
  Map map;
  REQUIRE(ParseMap(kValveMap, "valve.map", &map).ok());
  CHECK(map.valve220);
  REQUIRE(map.brushes.size() == 1);
  CHECK(map.brushes[0].bounds == Bounds{{-64, -64, -16}, {64.5f, 64, 16}});
  CHECK(map.brushes[0].vertices.size() == 8);
}

TEST_CASE("valve dialect is detected from faces, header or mapversion alone") {
  using testing::BoxBrush;
  Map map;
  std::string faces_only = testing::World(BoxBrush({0, 0, 0}, {8, 8, 8}, "a", true));
  REQUIRE(ParseMap(faces_only, "faces.map", &map).ok());
  CHECK(map.valve220);
  std::string version_only = "{\n\"classname\" \"worldspawn\"\n\"mapversion\" \"220\"\n}\n";
  REQUIRE(ParseMap(version_only, "version.map", &map).ok());
  CHECK(map.valve220);
  REQUIRE(ParseMap("// Format: Valve\n{\n\"classname\" \"worldspawn\"\n}\n", "hdr.map", &map).ok());
  CHECK(map.valve220);
}

TEST_CASE("comments, odd spacing, quoted textures and face flags are accepted") {
  const char* text =
      "// comment before everything\n"
      "{ // comment after a brace\n"
      "\"classname\" \"worldspawn\" \"message\" \"say \\\"hi\\\" // not a comment\"\n"
      "{\n"
      "(-8 -8 -8)(-8 -7 -8)(-8 -8 -7) \"my tex\" 0 0 0 1 1 0 0 0\n"
      "( -8 -8 -8 ) ( -8 -8 -7 ) ( -7 -8 -8 ) {fence 0 0 0 1 1\n"
      "( -8 -8 -8 ) ( -7 -8 -8 ) ( -8 -7 -8 ) +0button 0 0 0 1 1 // trailing\n"
      "( 8 8 8 ) ( 8 9 8 ) ( 9 8 8 ) *water1 0 0 0 1 1\n"
      "( 8 8 8 ) ( 9 8 8 ) ( 8 8 9 ) a 1e1 -2.5 0 .5 1.\n"
      "\t( 8 8 8 )\t( 8 8 9 ) ( 8 9 8 ) a +0 0 0 1 1\r\n"
      "}\n}";
  Map map;
  core::Status s = ParseMap(text, "odd.map", &map);
  INFO(s.ToString());
  REQUIRE(s.ok());
  CHECK(map.entities[0].Get("message", "") == "say \"hi\" // not a comment");
  REQUIRE(map.brushes.size() == 1);
  CHECK(map.brushes[0].bounds == Bounds{{-8, -8, -8}, {8, 8, 8}});
  CHECK(map.brushes[0].contents == Contents::kSolid);  // first face "my tex" decides
}

TEST_CASE("a UTF-8 byte order mark and CRLF line ends are accepted") {
  std::string text = "\xEF\xBB\xBF" + testing::World(testing::BoxBrush({0, 0, 0}, {8, 8, 8}, "a"));
  for (size_t at = text.find('\n'); at != std::string::npos; at = text.find('\n', at + 2)) {
    text.insert(at, "\r");
  }
  Map map;
  REQUIRE(ParseMap(text, "bom.map", &map).ok());
  CHECK(map.brushes.size() == 1);
}

TEST_CASE("ParseNumber accepts Quake numbers and rejects the rest") {
  double v = 0;
  CHECK((ParseNumber("12", &v) && v == 12));
  CHECK((ParseNumber("-0.5", &v) && v == -0.5));
  CHECK((ParseNumber("+4", &v) && v == 4));
  CHECK((ParseNumber("1e3", &v) && v == 1000));
  for (const char* bad : {"", "+", "-", "nan", "-nan", "inf", "-inf", "infinity", "1e999", "0x10",
                          "1.5.2", "12a", "++1", "--1", " 1"}) {
    INFO(bad);
    CHECK_FALSE(ParseNumber(bad, &v));
  }
  CHECK_FALSE(ParseNumber(std::string(65, '1'), &v));
}

// Each broken input and the exact message it must produce.
struct BrokenCase {
  const char* what;
  std::string text;
  std::string message;
};

TEST_CASE("malformed maps fail with FILE:LINE:COL: expected X, found Y") {
  const std::string face = "( 0 0 0 ) ( 0 1 0 ) ( 0 0 1 ) tex 0 0 0 1 1\n";
  const std::string head = "{\n\"classname\" \"worldspawn\"\n";
  const BrokenCase cases[] = {
      {"unterminated quote", "{\n\"classname\" \"worldspawn\n}\n",
       "bad.map:2:24: expected closing '\"', found end of line (string opened at 2:13)"},
      {"missing value", "{\n\"classname\"\n}\n",
       "bad.map:3:1: expected a quoted value for key \"classname\", found '}'"},
      {"missing entity brace", head, "bad.map:3:1: expected a \"key\", '{' or '}' (entity opened "
                                     "at 1:1), found end of file"},
      {"missing brush brace", head + "{\n" + face,
       "bad.map:5:1: expected '(' or '}' (brush opened at 3:1), found end of file"},
      {"EOF in brush", head + "{\n( 0 0 0 ) ( 0 1 0 ) ( 0 0", "bad.map:4:26: expected a coordinate "
                                                             "(a finite number), found end of file"},
      {"bad number", head + "{\n( 0 0 0 ) ( 0 1x 0 ) ( 0 0 1 ) tex 0 0 0 1 1\n}\n}\n",
       "bad.map:4:15: expected a coordinate (a finite number), found '1x'"},
      {"NaN coordinate", head + "{\n( 0 nan 0 ) ( 0 1 0 ) ( 0 0 1 ) tex 0 0 0 1 1\n}\n}\n",
       "bad.map:4:5: expected a coordinate (a finite number), found 'nan'"},
      {"inf texture scale", head + "{\n( 0 0 0 ) ( 0 1 0 ) ( 0 0 1 ) tex 0 0 0 inf 1\n}\n}\n",
       "bad.map:4:41: expected a texture offset, rotation or scale (a finite number), found 'inf'"},
      {"too few points", head + "{\n( 0 0 0 ) ( 0 1 0 ) tex 0 0 0 1 1\n}\n}\n",
       "bad.map:4:21: expected '(' to open a plane point, found 'tex'"},
      {"too few coordinates", head + "{\n( 0 0 ) ( 0 1 0 ) ( 0 0 1 ) tex 0 0 0 1 1\n}\n}\n",
       "bad.map:4:7: expected a coordinate (a finite number), found ')'"},
      {"missing texture", head + "{\n( 0 0 0 ) ( 0 1 0 ) ( 0 0 1 )\n}\n}\n",
       "bad.map:5:1: expected a texture name, found '}'"},
      {"garbage token", head + "garbage\n}\n",
       "bad.map:3:1: expected a \"key\", '{' or '}' (entity opened at 1:1), found 'garbage'"},
      {"garbage at top level", "{\n\"classname\" \"worldspawn\"\n}\n)",
       "bad.map:4:1: expected '{' or end of file, found ')'"},
      {"empty file", "// nothing\n", "bad.map:2:1: expected '{' to open an entity, found end of file"},
      {"unclosed valve axis", head + "{\n( 0 0 0 ) ( 0 1 0 ) ( 0 0 1 ) t [ 1 0 0 0 [ 0 1 0 0 ] 0 1 1",
       "bad.map:4:43: expected ']' to close a texture axis, found '['"},
      {"huge coordinate", head + "{\n( 0 0 1e9 ) ( 0 1 0 ) ( 0 0 1 ) tex 0 0 0 1 1\n}\n}\n",
       "bad.map:4:7: expected a coordinate within -1000000..1000000, found '1e9'"},
      {"first entity not worldspawn", "{\n\"classname\" \"light\"\n}\n",
       "bad.map:1:1: expected worldspawn as the first entity, found classname \"light\""},
      {"bad origin", "{\n\"classname\" \"worldspawn\"\n}\n{\n\"classname\" \"info_player_start\"\n"
                     "\"origin\" \"1 2 nan\"\n}\n",
       "bad.map:6:10: expected \"origin\" as 3 coordinates within -1000000..1000000, found "
       "\"1 2 nan\""},
      {"bad speed", "{\n\"classname\" \"worldspawn\"\n}\n{\n\"classname\" \"trigger_push\"\n"
                    "\"speed\" \"fast\"\n}\n",
       "bad.map:6:9: expected \"speed\" as a number of units/s, found \"fast\""},
  };
  for (const BrokenCase& c : cases) {
    INFO(c.what);
    Map map;
    core::Status s = ParseMap(c.text, "bad.map", &map);
    REQUIRE_FALSE(s.ok());
    CHECK(s.code() == core::Status::Code::kInvalidArgument);
    CHECK(s.message() == c.message);
    CHECK(map.brushes.empty());
    CHECK(map.entities.empty());
  }
}

TEST_CASE("a string longer than the limit is an error, not a runaway value") {
  std::string text = "{\n\"classname\" \"" + std::string(kMaxStringBytes + 10, 'x') + "\"\n}\n";
  Map map;
  core::Status s = ParseMap(text, "long.map", &map);
  REQUIRE_FALSE(s.ok());
  CHECK(s.message().find("long.map:2:") == 0);
  CHECK(s.message().find("found a string longer than 8192 bytes") != std::string::npos);
}

TEST_CASE("too many faces in one brush is an error") {
  std::string text = "{\n\"classname\" \"worldspawn\"\n{\n";
  for (int i = 0; i <= kMaxFacesPerBrush; ++i) text += "( 0 0 0 ) ( 0 1 0 ) ( 0 0 1 ) t 0 0 0 1 1\n";
  text += "}\n}\n";
  Map map;
  core::Status s = ParseMap(text, "many.map", &map);
  REQUIRE_FALSE(s.ok());
  CHECK(s.message() == "many.map:260:1: expected '}' (at most 256 faces per brush), found '('");
}

}  // namespace
}  // namespace maps
