// Meaning pass of the .map loader: turns the parsed entities (map_parser.h) into a maps::Map.
// Order: every entity in file order (classname counts, brushes -> polyhedra with contents, point
// entities), then the trigger entities that refer to others (teleporters need their destinations,
// which may come later in the file). Values of keys the loader interprets (origin, angle, angles,
// speed) must be numbers: a bad one is an error naming the value's position.
#include "maps/map_loader.h"

#include <cmath>
#include <sstream>
#include <unordered_map>

#include "maps/brush_polyhedron.h"
#include "maps/map_parser.h"
#include "server/core/file_kind.h"

namespace maps {
namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr float kDefaultPushSpeed = 1000;

bool StartsWith(const std::string& s, std::string_view prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

// Classnames whose meaning the loader knows (anything else counts in Map::unknown_entities).
bool IsKnownClassname(const std::string& c) {
  static const char* const kKnown[] = {
      "worldspawn", "func_group", "func_detail", "func_detail_wall", "func_detail_illusionary",
      "func_illusionary", "func_door", "func_door_secret", "func_plat", "func_wall",
      "func_button", "func_train", "func_episodegate", "func_bossgate", "info_player_deathmatch",
      "info_player_start", "info_teleport_destination"};
  for (const char* k : kKnown) {
    if (c == k) return true;
  }
  return StartsWith(c, "item_") || StartsWith(c, "weapon_") || StartsWith(c, "trigger_");
}

bool IsToolTexture(const std::string& lower) {
  return lower == "skip" || lower == "hint" || lower == "hintskip";
}

// Contents from the textures: the first face that is not skip/hint decides, as in qbsp.
Contents TextureContents(const RawBrush& brush, bool* mixed) {
  *mixed = false;
  const RawFace* first = nullptr;
  bool first_liquid = false;
  for (const RawFace& face : brush.faces) {
    std::string tex = Lower(face.texture);
    if (IsToolTexture(tex)) continue;
    bool liquid = StartsWith(tex, "*");
    if (first == nullptr) {
      first = &face;
      first_liquid = liquid;
    } else if (liquid != first_liquid) {
      *mixed = true;
    }
  }
  if (first == nullptr) return Contents::kEmpty;
  if (first_liquid) return Contents::kLiquid;
  if (Lower(first->texture) == "trigger") return Contents::kTrigger;
  return Contents::kSolid;
}

Contents BrushContents(const std::string& classname, const RawBrush& brush, bool* mixed) {
  *mixed = false;
  if (StartsWith(classname, "trigger_")) return Contents::kTrigger;
  if (classname == "func_detail_illusionary" || classname == "func_illusionary") {
    return Contents::kEmpty;
  }
  return TextureContents(brush, mixed);
}

// The last value of `key`, or nullptr (Entity::Get has the same last-wins rule).
const RawKey* FindKey(const RawEntity& e, std::string_view key) {
  for (auto it = e.keys.rbegin(); it != e.keys.rend(); ++it) {
    if (it->key == key) return &*it;
  }
  return nullptr;
}

// Splits `text` on whitespace into exactly `n` finite numbers.
bool ParseNumbers(const std::string& text, int n, double* out) {
  std::istringstream in(text);
  std::string word;
  int count = 0;
  while (in >> word) {
    if (count == n || !ParseNumber(word, &out[count])) return false;
    ++count;
  }
  return count == n;
}

float SnapToInteger(double v) {
  double r = std::round(v);
  return static_cast<float>(std::fabs(v - r) < 1e-4 ? r : v);
}

Vec3 ToVec3(const DVec3& v) { return {SnapToInteger(v.x), SnapToInteger(v.y), SnapToInteger(v.z)}; }

// Quake's SetMovedir: angles (0 -1 0) is straight up, (0 -2 0) straight down, otherwise the
// forward vector of makevectors(angles) (positive pitch looks down).
Vec3 MoveDirection(Vec3 angles_deg) {
  if (angles_deg == Vec3{0, -1, 0}) return {0, 0, 1};
  if (angles_deg == Vec3{0, -2, 0}) return {0, 0, -1};
  double pitch = angles_deg.x * kPi / 180, yaw = angles_deg.y * kPi / 180;
  return {static_cast<float>(std::cos(pitch) * std::cos(yaw)),
          static_cast<float>(std::cos(pitch) * std::sin(yaw)),
          static_cast<float>(-std::sin(pitch))};
}

class Builder {
 public:
  Builder(const std::string& name, const RawMap& raw, Map* map) : name_(name), raw_(raw), map_(map) {}
  core::Status Build();

 private:
  core::Status ValueError(const RawKey& key, std::string_view expected) const;
  core::Status ReadOrigin(int entity, Vec3* origin);
  core::Status ReadAngles(int entity, Vec3* angles_deg);
  void Warn(int line, const std::string& what);
  std::string Label(int entity) const;
  void AddBrushes(int entity);
  core::Status AddPointEntity(int entity);
  void AddTeleporter(int entity);
  core::Status AddJumpPad(int entity);
  Bounds BrushesBounds(const std::vector<int>& brushes) const;

  const std::string& name_;
  const RawMap& raw_;
  Map* map_;
  struct Destination {
    Vec3 origin;
    float yaw_deg = 0;
  };
  std::unordered_map<std::string, Destination> destinations_;  // by targetname; first one wins
};

core::Status Builder::ValueError(const RawKey& key, std::string_view expected) const {
  const std::string shown = EscapeForMessage(key.value);
  return core::Status::InvalidArgument(
      name_ + ":" + std::to_string(key.value_pos.line) + ":" + std::to_string(key.value_pos.col) +
      ": expected " + std::string(expected) + ", found \"" + shown + "\"");
}

void Builder::Warn(int line, const std::string& what) {
  if (map_->warnings.size() >= kMaxWarningsKept) {
    ++map_->warnings_not_kept;
    return;
  }
  map_->warnings.push_back(name_ + ":" + std::to_string(line) + ": " + what);
}

std::string Builder::Label(int entity) const {
  return "entity " + std::to_string(entity) + " (" +
         EscapeForMessage(map_->entities[entity].classname) + ")";
}

// Missing origin: Quake's default of 0 0 0, with a warning.
core::Status Builder::ReadOrigin(int entity, Vec3* origin) {
  *origin = {};
  const RawKey* key = FindKey(raw_.entities[entity], "origin");
  if (key == nullptr) {
    Warn(raw_.entities[entity].line, Label(entity) + ": no \"origin\", using 0 0 0");
    return core::Status::OK();
  }
  double v[3];
  if (!ParseNumbers(key->value, 3, v) || std::fabs(v[0]) > kMaxCoord ||
      std::fabs(v[1]) > kMaxCoord || std::fabs(v[2]) > kMaxCoord) {
    return ValueError(*key, "\"origin\" as 3 coordinates within -1000000..1000000");
  }
  *origin = {static_cast<float>(v[0]), static_cast<float>(v[1]), static_cast<float>(v[2])};
  return core::Status::OK();
}

// As Quake's ED_ParseEdict: "angle" sets the yaw, "angles" all three, the later key wins.
core::Status Builder::ReadAngles(int entity, Vec3* angles_deg) {
  *angles_deg = {};
  for (const RawKey& key : raw_.entities[entity].keys) {
    double v[3];
    if (key.key == "angle") {
      if (!ParseNumbers(key.value, 1, v) || std::fabs(v[0]) > 1e6) {
        return ValueError(key, "\"angle\" as a number of degrees");
      }
      *angles_deg = {0, static_cast<float>(v[0]), 0};
    } else if (key.key == "angles") {
      if (!ParseNumbers(key.value, 3, v) || std::fabs(v[0]) > 1e6 || std::fabs(v[1]) > 1e6 ||
          std::fabs(v[2]) > 1e6) {
        return ValueError(key, "\"angles\" as 3 numbers (pitch yaw roll)");
      }
      *angles_deg = {static_cast<float>(v[0]), static_cast<float>(v[1]), static_cast<float>(v[2])};
    }
  }
  return core::Status::OK();
}

Bounds Builder::BrushesBounds(const std::vector<int>& brushes) const {
  Bounds b = Bounds::Empty();
  for (int i : brushes) b.Add(map_->brushes[i].bounds);
  return b;
}

void Builder::AddBrushes(int entity) {
  const RawEntity& raw = raw_.entities[entity];
  Entity& ent = map_->entities[entity];
  for (size_t i = 0; i < raw.brushes.size(); ++i) {
    const RawBrush& rb = raw.brushes[i];
    std::string where = "brush " + std::to_string(i) + " of " + Label(entity) + ": ";
    Polyhedron poly;
    std::vector<std::string> notes;
    std::string why;
    bool ok = BuildPolyhedron(rb, &poly, &notes, &why);
    for (const std::string& note : notes) Warn(rb.line, where + note);
    if (!ok) {
      Warn(rb.line, where + "skipped: " + why);
      continue;
    }
    Brush brush;
    bool mixed = false;
    brush.contents = BrushContents(ent.classname, rb, &mixed);
    if (mixed) Warn(rb.line, where + "mixes liquid and solid textures; the first face decides");
    for (const DPlane& p : poly.planes) {
      brush.planes.push_back({{static_cast<float>(p.normal.x), static_cast<float>(p.normal.y),
                               static_cast<float>(p.normal.z)},
                              static_cast<float>(p.dist)});
    }
    brush.bounds = Bounds::Empty();
    for (const DVec3& v : poly.vertices) {
      brush.vertices.push_back(ToVec3(v));
      brush.bounds.Add(brush.vertices.back());
    }
    brush.entity = entity;
    brush.index_in_entity = static_cast<int>(i);
    brush.line = rb.line;
    if (brush.contents == Contents::kSolid) {
      ++map_->solid_brushes;
      map_->bounds.Add(brush.bounds);
    }
    ent.brushes.push_back(static_cast<int>(map_->brushes.size()));
    map_->brushes.push_back(std::move(brush));
  }
}

core::Status Builder::AddPointEntity(int entity) {
  const std::string& classname = map_->entities[entity].classname;
  bool spawn = classname == "info_player_deathmatch" || classname == "info_player_start";
  bool pickup = StartsWith(classname, "item_") || StartsWith(classname, "weapon_");
  bool destination = classname == "info_teleport_destination";
  if (!spawn && !pickup && !destination) return core::Status::OK();
  Vec3 origin, angles;
  if (auto s = ReadOrigin(entity, &origin); !s.ok()) return s;
  if (auto s = ReadAngles(entity, &angles); !s.ok()) return s;
  if (spawn) {
    map_->spawns.push_back({origin, angles.y, classname == "info_player_deathmatch"});
  } else if (pickup) {
    map_->pickups.push_back({classname, origin});
  } else {
    std::string targetname = map_->entities[entity].Get("targetname", "");
    if (targetname.empty()) {
      Warn(raw_.entities[entity].line, Label(entity) + ": no \"targetname\"; unreachable");
    } else {
      destinations_.emplace(targetname, Destination{origin, angles.y});
    }
  }
  return core::Status::OK();
}

void Builder::AddTeleporter(int entity) {
  const Entity& ent = map_->entities[entity];
  int line = raw_.entities[entity].line;
  if (ent.brushes.empty()) {
    Warn(line, Label(entity) + ": no valid brushes; ignored");
    return;
  }
  std::string target = ent.Get("target", "");
  auto it = destinations_.find(target);
  if (it == destinations_.end()) {
    Warn(line, Label(entity) + ": target \"" + EscapeForMessage(target) +
                   "\" names no info_teleport_destination; ignored");
    return;
  }
  Teleporter t;
  t.brushes = ent.brushes;
  t.trigger = BrushesBounds(ent.brushes);
  t.dest_origin = it->second.origin;
  t.dest_angle_deg = it->second.yaw_deg;
  map_->teleporters.push_back(std::move(t));
}

core::Status Builder::AddJumpPad(int entity) {
  const Entity& ent = map_->entities[entity];
  Vec3 angles;
  if (auto s = ReadAngles(entity, &angles); !s.ok()) return s;
  float speed = kDefaultPushSpeed;
  if (const RawKey* key = FindKey(raw_.entities[entity], "speed")) {
    double v;
    if (!ParseNumbers(key->value, 1, &v) || std::fabs(v) > 1e6) {
      return ValueError(*key, "\"speed\" as a number of units/s");
    }
    speed = static_cast<float>(v);
  }
  if (ent.brushes.empty()) {
    Warn(raw_.entities[entity].line, Label(entity) + ": no valid brushes; ignored");
    return core::Status::OK();
  }
  map_->jump_pads.push_back({BrushesBounds(ent.brushes), ent.brushes, MoveDirection(angles) * speed});
  return core::Status::OK();
}

core::Status Builder::Build() {
  map_->bounds = Bounds::Empty();
  map_->valve220 = raw_.valve220;
  const int count = static_cast<int>(raw_.entities.size());
  for (int e = 0; e < count; ++e) {
    const RawEntity& raw = raw_.entities[e];
    Entity ent;
    for (const RawKey& k : raw.keys) ent.keys.emplace_back(k.key, k.value);
    ent.classname = ent.Get("classname", "");
    ent.line = raw.line;
    if (e == 0 && ent.classname != "worldspawn") {
      return core::Status::InvalidArgument(name_ + ":" + std::to_string(raw.line) +
                                           ":1: expected worldspawn as the first entity, found "
                                           "classname \"" + EscapeForMessage(ent.classname) +
                                           "\"");
    }
    if (e == 0 && ent.Get("mapversion", "") == "220") map_->valve220 = true;
    map_->entities.push_back(std::move(ent));
    const std::string& classname = map_->entities[e].classname;
    if (classname.empty()) Warn(raw.line, "entity " + std::to_string(e) + " has no classname");
    ++map_->classname_counts[classname.empty() ? "(none)" : classname];
    if (!IsKnownClassname(classname)) ++map_->unknown_entities;
    AddBrushes(e);
    if (auto s = AddPointEntity(e); !s.ok()) return s;
  }
  for (int e = 0; e < count; ++e) {
    const std::string& classname = map_->entities[e].classname;
    if (classname == "trigger_teleport") AddTeleporter(e);
    if (classname == "trigger_push") {
      if (auto s = AddJumpPad(e); !s.ok()) return s;
    }
  }
  return core::Status::OK();
}

}  // namespace

core::Status ParseMap(std::string_view text, const std::string& name, Map* out) {
  *out = Map{};
  out->path = name;
  RawMap raw;
  core::Status s = ParseRawMap(text, name, &raw);
  if (s.ok()) {
    Map map;
    map.path = name;
    s = Builder(name, raw, &map).Build();
    if (s.ok()) *out = std::move(map);
  }
  return s;
}

core::Status LoadMap(const std::string& path, Map* out) {
  *out = Map{};
  out->path = path;
  std::string text;
  if (core::Status s = core::ReadRegularFile(path, kMaxMapFileBytes, &text, "map file"); !s.ok()) return s;
  return ParseMap(text, path, out);
}

core::Status CheckPlayable(const Map& map) {
  if (map.spawns.empty()) {
    return core::Status::InvalidArgument("map " + map.path + ": no spawn points");
  }
  if (map.bounds.IsEmpty()) {
    return core::Status::InvalidArgument("map " + map.path + ": no solid brushes");
  }
  return core::Status::OK();
}

}  // namespace maps
