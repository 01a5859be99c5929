// Mutation test for the .map loader: thousands of damaged variants of the real LibreQuake maps
// (byte flips, deletions, inserted braces/quotes/parentheses, odd numbers, truncations) and
// random byte strings, with a fixed seed. Each parse must return; a success must be a sound map,
// a failure must be a "name:line:col: expected X, found Y" message pointing inside the text.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "maps/map_loader.h"
#include "maps/map_test_util.h"

namespace maps {
namespace {

constexpr const char* kRealMaps[] = {"maps/librequake/lqdm1.map", "maps/librequake/lqdm3.map",
                                     "maps/librequake/lqdm6.map"};

// Top-level entity spans of a map written one brace per line, as TrenchBroom does.
std::vector<std::string> SplitEntities(const std::string& text) {
  std::vector<std::string> entities;
  size_t start = 0;
  int depth = 0;
  for (size_t line = 0; line < text.size();) {
    size_t end = text.find('\n', line);
    end = end == std::string::npos ? text.size() : end + 1;
    std::string_view s(text.data() + line, end - line);
    if (s.starts_with("{")) {
      if (depth++ == 0) start = line;
    } else if (s.starts_with("}") && --depth == 0) {
      entities.push_back(text.substr(start, end - start));
    }
    line = end;
  }
  return entities;
}

// A small valid map: the worldspawn cut after a few brushes, then a few other entities.
std::string BaseMap(const std::vector<std::string>& entities, std::mt19937* rng) {
  const std::string& world = entities[0];
  size_t cut = world.find("\n}\n", std::uniform_int_distribution<size_t>(500, 6000)(*rng));
  std::string out = cut == std::string::npos ? world : world.substr(0, cut + 3) + "}\n";
  std::uniform_int_distribution<size_t> pick(1, entities.size() - 1);
  for (int i = 0; i < 6; ++i) out += entities[pick(*rng)];
  return out;
}

void Mutate(std::string* text, std::mt19937* rng) {
  static const char* const kInserts[] = {"{", "}", "(", ")", "[", "]", "\"", "//", "\n", " ",
                                         "nan", "inf", "1e999", "-", "1e-320", "99999999", "{\n(",
                                         "\"classname\" \"trigger_push\"", "\"angle\" \"-1\""};
  auto pos = [&](size_t n) { return std::uniform_int_distribution<size_t>(0, n)(*rng); };
  auto line_at = [&](size_t* begin, size_t* end) {  // the line around a random position
    size_t at = pos(text->size());
    size_t b = text->rfind('\n', at == 0 ? 0 : at - 1);
    *begin = b == std::string::npos || at == 0 ? 0 : b + 1;
    size_t e = text->find('\n', at);
    *end = e == std::string::npos ? text->size() : e + 1;
  };
  size_t begin = 0, end = 0;
  switch (std::uniform_int_distribution<int>(0, 8)(*rng)) {
    case 0:  // byte flip
      if (!text->empty()) (*text)[pos(text->size() - 1)] = static_cast<char>(pos(255));
      break;
    case 1: {  // deletion
      size_t at = pos(text->size());
      text->erase(at, 1 + pos(63));
      break;
    }
    case 2:  // insertion of punctuation, quotes, odd numbers
      text->insert(pos(text->size()), kInserts[pos(std::size(kInserts) - 1)]);
      break;
    case 3:  // truncation
      text->resize(pos(text->size()));
      break;
    case 4: {  // duplicate a range somewhere else
      size_t at = pos(text->size());
      std::string piece = text->substr(at, 1 + pos(255));
      text->insert(pos(text->size()), piece);
      break;
    }
    case 5: {  // replace a digit with a letter or a dot
      size_t at = text->find_first_of("0123456789", pos(text->size()));
      if (at != std::string::npos) (*text)[at] = ".x-e"[pos(3)];
      break;
    }
    case 6: {  // replace a number by another valid one: the syntax holds, the geometry breaks
      size_t at = text->find_first_of("0123456789", pos(text->size()));
      if (at == std::string::npos) break;
      size_t stop = text->find_first_not_of("0123456789.", at);
      static const char* const kNumbers[] = {"0", "1", "-1", "64", "0.001", "4096", "-999999"};
      text->replace(at, (stop == std::string::npos ? text->size() : stop) - at,
                    kNumbers[pos(std::size(kNumbers) - 1)]);
      break;
    }
    case 7:  // delete a whole line (a face, a key, a brace)
      line_at(&begin, &end);
      text->erase(begin, end - begin);
      break;
    case 8:  // repeat a whole line
      line_at(&begin, &end);
      text->insert(begin, text->substr(begin, end - begin));
      break;
  }
}

std::string RandomBytes(std::mt19937* rng) {
  static const std::string kAlphabet = "{}()[]\"/ \n\t0123456789.-+eE*abcxyz_";
  size_t n = std::uniform_int_distribution<size_t>(0, 3000)(*rng);
  std::string out(n, ' ');
  std::uniform_int_distribution<int> byte(0, 255), choose(0, 9);
  for (char& c : out) {
    c = choose(*rng) == 0 ? static_cast<char>(byte(*rng))
                          : kAlphabet[byte(*rng) % kAlphabet.size()];
  }
  return out;
}

// Returns "" if the outcome of parsing `text` is sound, else what is wrong.
std::string CheckOutcome(const std::string& text, const core::Status& s, const Map& map) {
  if (!s.ok()) {
    const std::string& m = s.message();
    int line = 0, col = 0;
    if (std::sscanf(m.c_str(), "mut.map:%d:%d: expected", &line, &col) != 2) return "bad message: " + m;
    if (m.find(", found ") == std::string::npos) return "no 'found': " + m;
    int lines = 1;
    for (char c : text) lines += c == '\n' ? 1 : 0;
    if (line < 1 || line > lines || col < 1) return "position outside the text: " + m;
    return map.entities.empty() && map.brushes.empty() ? "" : "error left a partial map";
  }
  if (map.entities.empty() || map.entities[0].classname != "worldspawn") return "no worldspawn";
  int solid = 0;
  for (const Brush& b : map.brushes) {
    if (b.planes.size() < 4 || b.vertices.size() < 4) return "brush with too few planes/corners";
    for (Vec3 v : b.vertices) {
      if (!IsFinite(v) || !b.bounds.Contains(v)) return "bad vertex";
    }
    if (b.entity < 0 || b.entity >= static_cast<int>(map.entities.size())) return "bad entity";
    if (b.contents == Contents::kSolid) {
      ++solid;
      if (!map.bounds.Contains(b.bounds)) return "map bounds miss a solid brush";
    }
  }
  if (solid != map.solid_brushes) return "solid_brushes miscounted";
  for (const Teleporter& t : map.teleporters) {
    for (int b : t.brushes) {
      if (b < 0 || b >= static_cast<int>(map.brushes.size())) return "bad teleporter brush";
    }
  }
  for (const JumpPad& j : map.jump_pads) {
    if (!IsFinite(j.velocity)) return "bad jump pad velocity";
  }
  return "";
}

struct Tally {
  int ok = 0, errors = 0, ok_with_warnings = 0;
  std::vector<std::string> failures;
  void Run(const std::string& text) {
    Map map;
    core::Status s = ParseMap(text, "mut.map", &map);
    (s.ok() ? ok : errors) += 1;
    ok_with_warnings += s.ok() && !map.warnings.empty() ? 1 : 0;
    std::string problem = CheckOutcome(text, s, map);
    if (!problem.empty() && failures.size() < 10) failures.push_back(problem);
  }
};

TEST_CASE("mutated real maps and random bytes never crash or hang the loader") {
  std::mt19937 rng(20240611);
  std::vector<std::vector<std::string>> entities;
  std::vector<std::string> full;
  for (const char* path : kRealMaps) {
    full.push_back(testing::ReadFile(path));
    REQUIRE(!full.back().empty());
    entities.push_back(SplitEntities(full.back()));
    REQUIRE(entities.back().size() > 100);
  }
  Tally tally;
  for (int i = 0; i < 6000; ++i) {
    std::string text = BaseMap(entities[i % 3], &rng);
    int mutations = 1 + static_cast<int>(rng() % 4);
    for (int m = 0; m < mutations; ++m) Mutate(&text, &rng);
    tally.Run(text);
  }
  for (int i = 0; i < 1000; ++i) tally.Run(RandomBytes(&rng));
  for (int i = 0; i < 30; ++i) {
    std::string text = full[i % 3];
    Mutate(&text, &rng);
    tally.Run(text);
  }
  INFO("ok " << tally.ok << " (" << tally.ok_with_warnings << " with warnings), errors "
             << tally.errors);
  CHECK(tally.failures.empty());
  for (const std::string& f : tally.failures) WARN(f);
  // The mutations reach every outcome (clean, degenerate brushes, error), so all were exercised.
  CHECK(tally.ok > 600);
  CHECK(tally.ok_with_warnings > 100);
  CHECK(tally.errors > 600);
}

}  // namespace
}  // namespace maps
