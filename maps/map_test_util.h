// Helpers shared by the as_maps tests: small inline maps in both dialects and a file reader.
// Test-only; not part of the library.
#pragma once

#include <fstream>
#include <sstream>
#include <string>

#include "maps/map_loader.h"

namespace maps::testing {

// Reads a whole file, or returns "" if it cannot be opened.
inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// An axis-aligned box brush written as TrenchBroom does: three faces through the min corner and
// three through the max corner, standard ("TEX 0 0 0 1 1") or Valve 220 texture parameters.
inline std::string BoxBrush(Vec3 mn, Vec3 mx, const std::string& texture, bool valve = false) {
  auto p = [](float x, float y, float z) {
    std::ostringstream s;
    s << "( " << x << ' ' << y << ' ' << z << " ) ";
    return s.str();
  };
  std::string params = valve ? " [ 1 0 0 0 ] [ 0 -1 0 0 ] 0 1 1\n" : " 0 0 0 1 1\n";
  std::string t = texture + params;
  return "{\n" +
         p(mn.x, mn.y, mn.z) + p(mn.x, mn.y + 1, mn.z) + p(mn.x, mn.y, mn.z + 1) + t +
         p(mn.x, mn.y, mn.z) + p(mn.x, mn.y, mn.z + 1) + p(mn.x + 1, mn.y, mn.z) + t +
         p(mn.x, mn.y, mn.z) + p(mn.x + 1, mn.y, mn.z) + p(mn.x, mn.y + 1, mn.z) + t +
         p(mx.x, mx.y, mx.z) + p(mx.x, mx.y + 1, mx.z) + p(mx.x + 1, mx.y, mx.z) + t +
         p(mx.x, mx.y, mx.z) + p(mx.x + 1, mx.y, mx.z) + p(mx.x, mx.y, mx.z + 1) + t +
         p(mx.x, mx.y, mx.z) + p(mx.x, mx.y, mx.z + 1) + p(mx.x, mx.y + 1, mx.z) + t + "}\n";
}

// A point entity with the given classname, origin and extra "key" "value" lines.
inline std::string PointEntity(const std::string& classname, const std::string& origin,
                               const std::string& extra_keys = "") {
  return "{\n\"classname\" \"" + classname + "\"\n\"origin\" \"" + origin + "\"\n" + extra_keys +
         "}\n";
}

// A worldspawn holding `brushes`.
inline std::string World(const std::string& brushes) {
  return "{\n\"classname\" \"worldspawn\"\n" + brushes + "}\n";
}

}  // namespace maps::testing
