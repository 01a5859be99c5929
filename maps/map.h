// The in-memory form of a loaded Quake .map: brushes as convex polyhedra, entities as ordered
// key/values, and the point entities the game uses, already extracted. Produced by LoadMap()
// (map_loader.h); immutable afterwards and safe to read from any number of threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "server/core/bounds.h"
#include "server/core/vec3.h"

namespace maps {

using core::Bounds;
using core::Vec3;

// A brush face plane. A point p is inside the brush iff Dot(normal, p) - dist <= 0 for every plane.
struct Plane {
  Vec3 normal;  // unit length, pointing out of the brush
  float dist = 0;
};

// What a brush does to things that touch it, decided from its entity, then its textures:
//  - trigger_* entities: kTrigger. func_detail_illusionary and func_illusionary: kEmpty.
//  - otherwise the first face whose texture is not skip/hint/hintskip decides (as in qbsp;
//    a brush mixing liquid and other textures gets a warning): '*' textures are kLiquid, the
//    'trigger' texture kTrigger, anything else (clip and sky* too) kSolid. All skip/hint: kEmpty.
//  - So worldspawn, func_group, func_detail and func_detail_wall brushes join the solid world,
//    and the brushes of func_door, func_plat, func_wall, func_button, func_train and of unknown
//    brush entities are static solids (nothing moves them yet).
// Texture names compare case-insensitively.
enum class Contents : uint8_t {
  kSolid,    // walls, floors, clip, sky, func_detail/func_group, doors and plats (static for now)
  kLiquid,   // '*' textures: not solid (water, slime, lava)
  kTrigger,  // trigger_* brushes: volumes, not walls
  kEmpty,    // visual only: func_detail_illusionary, all-skip/hint brushes
};

struct Brush {
  std::vector<Plane> planes;   // deduplicated, each bounding a face (redundant ones dropped); >= 4
  std::vector<Vec3> vertices;  // corners of the polyhedron (intersection of the half-spaces)
  Bounds bounds;               // of the vertices
  Contents contents = Contents::kSolid;
  int entity = 0;              // index into Map::entities (0 = worldspawn)
  int index_in_entity = 0;     // "brush N" as TrenchBroom numbers them inside the entity
  int line = 0;                // 1-based line of the brush's '{' in the file
};

// One entity as written in the file, keys in file order (duplicate keys: last one wins in Get()).
// Map::warnings keeps the first kMaxWarningsKept and counts the rest (a file of degenerate
// entities would otherwise cost a warning string for every few bytes).
inline constexpr size_t kMaxWarningsKept = 1000;

struct Entity {
  std::string classname;
  std::vector<std::pair<std::string, std::string>> keys;
  std::vector<int> brushes;  // indices into Map::brushes (skipped degenerate brushes not listed)
  int line = 0;              // 1-based line of the entity's '{'

  // Value of `key`, or `fallback` if absent. Returns a copy, so Get("k", "") is safe to keep.
  std::string Get(const std::string& key, const std::string& fallback) const;
};

struct SpawnPoint {
  Vec3 origin;
  float angle_deg = 0;  // yaw, from "angle" or the second number of "angles"
  bool deathmatch = true;  // info_player_deathmatch (true) or info_player_start (false)
};

// item_* and weapon_* point entities.
struct Pickup {
  std::string classname;
  Vec3 origin;
};

// trigger_teleport brush entity resolved through its "target" to the first
// info_teleport_destination with that "targetname". One without valid brushes or whose target
// is not found is left out, with a warning.
struct Teleporter {
  Bounds trigger;       // union of the trigger brushes' bounds
  std::vector<int> brushes;  // the trigger brushes (indices into Map::brushes), for exact tests
  Vec3 dest_origin;
  float dest_angle_deg = 0;
};

// trigger_push brush entity (jump pad). Direction from "angle" (-1 = straight up, -2 = down) or
// "angles" "pitch yaw roll"; speed from "speed" (Quake default 1000 means 1000 units/s here).
// As in Quake's SetMovedir: "angle" sets the yaw, "angles" all three, the later key wins;
// otherwise the direction is makevectors' forward (positive pitch points down; none = +x).
struct JumpPad {
  Bounds trigger;
  std::vector<int> brushes;
  Vec3 velocity;  // units/s given to whoever enters
};

struct Map {
  std::string path;
  std::vector<Entity> entities;  // entities[0] is worldspawn
  std::vector<Brush> brushes;    // every valid brush of every entity, in file order
  std::vector<SpawnPoint> spawns;
  std::vector<Pickup> pickups;
  std::vector<Teleporter> teleporters;
  std::vector<JumpPad> jump_pads;
  Bounds bounds;                            // of all solid brushes (Bounds::Empty() if none)
  std::map<std::string, int> classname_counts;  // every entity, by classname (sorted)
  int unknown_entities = 0;  // classnames the loader does not interpret (light, info_null...)
  int solid_brushes = 0;
  // "file:line: brush N of entity M (classname): why" or "file:line: entity M (classname): why".
  // Degenerate brushes (skipped), dropped duplicate/zero-area planes, unresolved teleporters.
  // At most kMaxWarningsKept are kept; warnings_not_kept counts the rest.
  std::vector<std::string> warnings;
  size_t warnings_not_kept = 0;
  bool valve220 = false;                    // dialect detected
};

}  // namespace maps
