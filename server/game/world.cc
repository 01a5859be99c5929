// World: creation, the object table and its single mutation path, the region check, joins and
// leaves, hashing, save/load and the interest helper. Rules live in command.cc, combat.cc and
// world_phase.cc.
#include "server/game/world.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <utility>

#include "maps/map_loader.h"
#include "server/core/check.h"
#include "server/game/command_scope.h"
#include "server/game/game_constants.h"
#include "server/core/hash.h"
#include "server/game/items.h"

namespace game {

using core::Hash64;
using core::Mix64;

namespace {

thread_local const CommandScope* t_scope = nullptr;

// The objects handed out by Mut during the current outermost World call on this thread (only
// while a written hook is set), and the nesting depth of WrittenScopes.
struct WrittenObjects {
  int depth = 0;
  std::vector<EntityId> ids;
};
thread_local WrittenObjects t_written;

constexpr uint64_t kTokenSalt = 0x746f6b656e5f5f31ULL;

uint64_t HashMap(const maps::Map& map) {
  uint64_t h = Hash64(&map.bounds, sizeof(map.bounds), map.brushes.size());
  for (const auto& s : map.spawns) h = Hash64(&s.origin, sizeof(s.origin), h);
  for (const auto& p : map.pickups) {
    h = Hash64(p.classname.data(), p.classname.size(), h);
    h = Hash64(&p.origin, sizeof(p.origin), h);
  }
  for (const auto& t : map.teleporters) h = Hash64(&t.dest_origin, sizeof(t.dest_origin), h);
  for (const auto& j : map.jump_pads) h = Hash64(&j.velocity, sizeof(j.velocity), h);
  return h;
}

bool ValidName(std::string_view name) {
  if (name.empty() || name.size() > static_cast<size_t>(kMaxNameLength)) return false;
  return std::all_of(name.begin(), name.end(), [](char c) { return c >= 0x20 && c <= 0x7e; });
}

}  // namespace

const CommandScope* CurrentCommandScope() { return t_scope; }

ScopedCommand::ScopedCommand(CommandScope* scope) {
  scope->previous = t_scope;
  t_scope = scope;
}

ScopedCommand::~ScopedCommand() { t_scope = t_scope->previous; }

World::World(const collision::CollisionWorld& collision, const WorldConfig& config)
    : collision_(collision),
      max_players_(config.max_players),
      tick_ms_(config.tick_ms),
      seed_(config.seed) {}

World::~World() = default;

World::WrittenScope::WrittenScope(World* world) : world_(world) { ++t_written.depth; }

World::WrittenScope::~WrittenScope() {
  if (--t_written.depth > 0 || t_written.ids.empty()) return;
  // Each object once, in id order; the ids are few (the objects one call touched).
  std::vector<EntityId>& ids = t_written.ids;
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  if (world_->written_hook_) {
    for (EntityId id : ids) world_->written_hook_(id);
  }
  ids.clear();
}

void World::NoteWritten(EntityId id) {
  AS_CHECK(t_written.depth > 0, "World::Mut outside a World call while a written hook is set");
  t_written.ids.push_back(id);
}

namespace {

// The trigger volumes' boxes, in the map's order: one source for the grids Create builds and for
// what CheckMap counts.
struct TriggerBoxes {
  std::vector<Bounds> teleporters, jump_pads;
};

TriggerBoxes TriggerBoxesOf(const maps::Map& map) {
  TriggerBoxes t;
  for (const auto& tp : map.teleporters) t.teleporters.push_back(tp.trigger);
  for (const auto& pad : map.jump_pads) t.jump_pads.push_back(pad.trigger);
  return t;
}

}  // namespace

core::Status World::CheckMap(const maps::Map& map) {
  if (core::Status playable = maps::CheckPlayable(map); !playable.ok()) return playable;
  const TriggerBoxes triggers = TriggerBoxesOf(map);
  for (const auto& [boxes, what] : {std::pair{&triggers.teleporters, "teleporters"},
                                    std::pair{&triggers.jump_pads, "jump pads"}}) {
    const uint64_t entries = collision::BrushGrid::CountEntries(*boxes);
    if (entries > collision::BrushGrid::kMaxEntries) {
      return core::Status::InvalidArgument(
          map.path + ": too many " + what + " for their grid: " + std::to_string(boxes->size()) +
          " of them cover " + std::to_string(entries) + " grid cells in all (at most " +
          std::to_string(collision::BrushGrid::kMaxEntries) + ")");
    }
  }
  return core::Status::OK();
}

core::Status World::Create(const maps::Map& map, const collision::CollisionWorld& collision,
                           const WorldConfig& config, std::unique_ptr<World>* out) {
  if (config.max_players < 1 || config.max_players > 4096) {
    return core::Status::InvalidArgument("world config: max_players must be in 1..4096");
  }
  if (config.max_records < 1 || config.max_records > 1000000) {
    return core::Status::InvalidArgument("world config: max_records must be in 1..1000000");
  }
  if (config.tick_ms < 1 || config.tick_ms > 1000) {
    return core::Status::InvalidArgument("world config: tick_ms must be in 1..1000");
  }
  if (config.areanode_depth < areanode::kMinDepth || config.areanode_depth > areanode::kMaxDepth) {
    return core::Status::InvalidArgument("world config: areanode_depth must be in " +
                                         std::to_string(areanode::kMinDepth) + ".." +
                                         std::to_string(areanode::kMaxDepth));
  }
  if (core::Status checked = CheckMap(map); !checked.ok()) return checked;
  core::Status tree_ok = areanode::AreanodeTree::CheckParams(map.bounds, config.areanode_depth, 1);
  if (!tree_ok.ok()) return tree_ok;
  std::unique_ptr<World> w(new World(collision, config));
  for (const auto& s : map.spawns) {
    if (s.deathmatch) w->spawns_.push_back(s);
  }
  if (w->spawns_.empty()) w->spawns_ = map.spawns;
  for (const auto& p : map.pickups) {
    ItemType item = ItemForClassname(p.classname);
    if (item != ItemType::kNone) w->pickups_.push_back({item, p.origin});
  }
  auto volume = [&map](const Bounds& trigger, const std::vector<int>& brushes) {
    TriggerVolume v;
    v.bounds = trigger;
    for (int b : brushes) {
      if (b >= 0 && b < static_cast<int>(map.brushes.size())) v.brushes.push_back(map.brushes[b].bounds);
    }
    if (v.brushes.empty()) v.brushes.push_back(trigger);
    return v;
  };
  for (const auto& t : map.teleporters) {
    TriggerVolume v = volume(t.trigger, t.brushes);
    v.dest_origin = t.dest_origin;
    v.dest_yaw = t.dest_angle_deg;
    w->teleporters_.push_back(std::move(v));
  }
  for (const auto& j : map.jump_pads) {
    TriggerVolume v = volume(j.trigger, j.brushes);
    v.velocity = j.velocity;
    w->max_pad_speed_ = std::max(w->max_pad_speed_, Length(j.velocity));
    w->jump_pads_.push_back(std::move(v));
  }
  const TriggerBoxes triggers = TriggerBoxesOf(map);
  AS_CHECK(triggers.teleporters.size() == w->teleporters_.size() &&
               triggers.jump_pads.size() == w->jump_pads_.size(),
           "trigger grids and volumes disagree");
  for (const TriggerVolume& v : w->teleporters_) w->teleporters_bounds_.Add(v.bounds);
  for (const TriggerVolume& v : w->jump_pads_) w->jump_pads_bounds_.Add(v.bounds);
  w->teleporter_grid_.Build(triggers.teleporters);
  w->jump_pad_grid_.Build(triggers.jump_pads);
  w->hitscan_range_ = Length(map.bounds.Size()) + kHitscanRangeMargin;
  w->first_rocket_ = 1 + config.max_players;
  w->first_pickup_ = w->first_rocket_ + config.max_players * kRocketsPerPlayer;
  w->first_record_ = w->first_pickup_ + static_cast<int>(w->pickups_.size());
  w->object_count_ = w->first_record_ + config.max_records;
  w->tree_ = std::make_unique<areanode::AreanodeTree>(map.bounds, config.areanode_depth,
                                                      w->object_count_);
  w->InitState(HashMap(map));
  *out = std::move(w);
  return core::Status::OK();
}

// Zeroes every object byte, then fills the globals and places the pickups.
void World::InitState(uint64_t map_hash) {
  objects_.assign(object_count_, Object{});
  may_be_dead_.assign(static_cast<size_t>(max_players_) + 1, 0);
  map_trace_memos_.assign(static_cast<size_t>(max_players_) + 1, MapTraceMemo{});
  std::memset(static_cast<void*>(objects_.data()), 0, objects_.size() * sizeof(Object));
  Globals& g = objects_[0].globals;
  g.magic = kStateMagic;
  g.version = kStateVersion;
  g.object_size = kObjectSize;
  g.object_count = object_count_;
  g.max_players = max_players_;
  g.rockets_per_player = kRocketsPerPlayer;
  g.first_rocket = first_rocket_;
  g.first_pickup = first_pickup_;
  g.pickup_count = static_cast<uint32_t>(pickups_.size());
  g.tick_ms = tick_ms_;
  g.map_hash = map_hash;
  g.seed = seed_;
  g.first_record = static_cast<uint32_t>(first_record_);
  g.record_capacity = static_cast<uint32_t>(object_count_ - first_record_);
  g.rng = Mix64(seed_ ^ 0x5eedULL);
  for (int i = 0; i < static_cast<int>(pickups_.size()); ++i) {
    Edict& e = objects_[first_pickup_ + i].edict;
    e.kind = EntityKind::kPickup;
    e.item = pickups_[i].item;
    e.index = i;
    e.origin = pickups_[i].origin;
    e.mins = kItemMins;
    e.maxs = kItemMaxs;
    e.flags = kFlagInUse | kFlagAvailable;
    LinkEdict(first_pickup_ + i);
  }
  RebuildRecordIndex();
}

// ---- Accessors and the mutation path ----

Globals& World::MutGlobals() {
  if (region_check_) {
    AS_CHECK(t_scope == nullptr || t_scope->world != this, "a command wrote the globals");
  }
  if (write_hook_) write_hook_(0);
  if (written_hook_) NoteWritten(0);
  return objects_[0].globals;
}

std::span<const uint8_t> World::StateBytes() const {
  return {reinterpret_cast<const uint8_t*>(objects_.data()), objects_.size() * sizeof(Object)};
}

std::span<uint8_t> World::MutableStateBytes() {
  return {reinterpret_cast<uint8_t*>(objects_.data()), objects_.size() * sizeof(Object)};
}

Bounds World::BoxOf(EntityId id) const {
  AS_CHECK(id > 0 && id < object_count_, "edict id out of range");
  return EdictBox(objects_[id].edict);
}

EntityId World::FindPlayer(std::string_view name) const {
  for (EntityId id = 1; id <= max_players_; ++id) {
    const Edict& e = objects_[id].edict;
    if (e.kind == EntityKind::kPlayer && name == e.name) return id;
  }
  return 0;
}

// ---- Region check ----

// An entity may be touched by a command if it is the command's own player or one of its rocket
// slots, or if its box lies inside the declared region.
void World::CheckAccess(EntityId id, const char* what) const {
  const CommandScope* s = t_scope;
  if (s == nullptr || s->world != this) return;
  if (id == s->player) return;
  const Edict& e = objects_[id].edict;
  // A player's rocket slots are written only by its own commands (while free) and by the world
  // phase, so the owner may always read them and may write a free one.
  if (id >= first_rocket_ && id < first_pickup_ &&
      (id - first_rocket_) / kRocketsPerPlayer + 1 == s->player) {
    if (std::strcmp(what, "read") == 0 || !(e.flags & kFlagLinked)) return;
  }
  if ((e.flags & kFlagLinked) && s->region.Covers(EdictBox(e))) return;
  char msg[256];
  std::snprintf(msg, sizeof msg,
                "region check: command seq %u of player %d %s entity %d (kind %d, linked %d) at "
                "(%.1f %.1f %.1f) outside its declared region",
                s->sequence, s->player, what, id, static_cast<int>(e.kind),
                (e.flags & kFlagLinked) ? 1 : 0, e.origin.x, e.origin.y, e.origin.z);
  AS_CHECK(false, msg);
}

void World::CheckBox(const Bounds& box, const char* what) const {
  const CommandScope* s = t_scope;
  if (s == nullptr || s->world != this || s->region.Covers(box)) return;
  char msg[256];
  std::snprintf(msg, sizeof msg,
                "region check: command seq %u of player %d: %s box (%.1f %.1f %.1f)-(%.1f %.1f "
                "%.1f) outside its declared region",
                s->sequence, s->player, what, box.mins.x, box.mins.y, box.mins.z, box.maxs.x,
                box.maxs.y, box.maxs.z);
  AS_CHECK(false, msg);
}

// ---- Links (derived data) ----

void World::LinkEdict(EntityId id) {
  Edict& e = Mut(id);
  const Bounds box = EdictBox(e);
  if (region_check_) CheckBox(box, "link");
  tree_->Relink(id, box);
  e.flags |= kFlagLinked;
}

void World::UnlinkEdict(EntityId id) {
  Edict& e = Mut(id);
  if (tree_->IsLinked(id)) tree_->Unlink(id);
  e.flags &= ~kFlagLinked;
}

void World::QueryBox(const Bounds& box, std::vector<EntityId>* out) const {
  QueryBoxUnordered(box, out);
  std::sort(out->begin(), out->end());
}

void World::QueryBoxUnordered(const Bounds& box, std::vector<EntityId>* out) const {
  if (region_check_) CheckBox(box, "query");
  tree_->QueryUnordered(box, out);
}

void World::QuerySegment(Vec3 start, Vec3 end, std::vector<EntityId>* out) const {
  QuerySegments(start, &end, 1, out);
}

void World::QuerySegments(Vec3 start, const Vec3* ends, int count,
                          std::vector<EntityId>* outs) const {
  if (const CommandScope* s = t_scope; region_check_ && s != nullptr && s->world == this) {
    for (int k = 0; k < count; ++k) {
      if (!s->region.CoversSegment(start, ends[k], kSegmentQueryPad)) {
        CheckBox(Bounds::Spanning(start, ends[k]).Expanded(kSegmentQueryPad),
                 "segment query");  // aborts
      }
    }
  }
  tree_->QuerySegments(start, ends, count, kSegmentQueryPad, outs);
  for (int k = 0; k < count; ++k) std::sort(outs[k].begin(), outs[k].end());
}

void World::RelinkAll() {
  WrittenScope written(this);
  tree_->UnlinkAll();
  for (EntityId id = 1; id < object_count_; ++id) {
    const Edict& e = objects_[id].edict;
    if (e.flags & kFlagLinked) tree_->Link(id, EdictBox(e));
  }
  for (EntityId id = 1; id <= max_players_; ++id) {
    may_be_dead_[static_cast<size_t>(id)] = (objects_[id].edict.flags & kFlagDead) ? 1 : 0;
  }
  RebuildRecordIndex();
}

// ---- Joins and leaves (serial) ----

bool World::TokenMatches(EntityId player, uint64_t token) const {
  return IsPlayerId(player) && objects_[player].edict.token_hash == Hash64(&token, sizeof token, kTokenSalt);
}

JoinResult World::Join(std::string_view name, uint64_t token) {
  WrittenScope written(this);
  JoinResult r;
  if (!ValidName(name)) {
    r.status = core::Status::InvalidArgument("join: name must be 1..31 printable characters");
    return r;
  }
  const uint64_t token_hash = Hash64(&token, sizeof token, kTokenSalt);
  EntityId id = FindPlayer(name);
  if (id != 0) {  // online already: the same session's identity (idempotent)
    if (objects_[id].edict.token_hash != token_hash) {
      r.status = core::Status::Refused("join: wrong token for player '" + std::string(name) + "'");
      return r;
    }
    r.player = id;
    r.resumed = true;
    return r;
  }
  const EntityId record = FindRecord(name);
  if (record != 0 && objects_[record].edict.token_hash != token_hash) {
    r.status = core::Status::Refused("join: wrong token for player '" + std::string(name) + "'");
    return r;
  }
  // A returning player gets its old slot back if it is free, so its id stays the same.
  const EntityId home = record != 0 ? objects_[record].edict.last_slot : 0;
  if (IsPlayerId(home) && objects_[home].edict.kind == EntityKind::kFree) {
    id = home;
  } else {
    for (id = 1; id <= max_players_; ++id) {
      if (objects_[id].edict.kind == EntityKind::kFree) break;
    }
  }
  if (id > max_players_) {
    r.status = core::Status::Refused("join: server full");
    return r;
  }
  if (record != 0) {
    ResumeRecord(record, id);
    r.player = id;
    r.resumed = true;
    return r;
  }
  Globals& g = MutGlobals();
  g.players_allocated++;
  const uint64_t rng = Mix64(g.rng + static_cast<uint64_t>(id));
  g.rng = Mix64(g.rng ^ 0xA5A5A5A5ULL);
  Edict& e = Mut(id);
  std::memset(static_cast<void*>(&e), 0, sizeof e);
  e.kind = EntityKind::kPlayer;
  std::memcpy(e.name, name.data(), name.size());
  e.token_hash = token_hash;
  e.rng = rng;
  e.flags = kFlagInUse | kFlagConnected;
  SpawnPlayer(id);
  r.player = id;
  return r;
}

// ---- Hash, save, load ----

uint64_t World::StateHash() const {
  return Hash64(objects_.data(), objects_.size() * sizeof(Object), 0x41667465727368ULL);
}

void World::SaveState(std::vector<uint8_t>* out) const {
  auto bytes = StateBytes();
  out->assign(bytes.begin(), bytes.end());
}

core::Status World::LoadState(std::span<const uint8_t> bytes) {
  if (bytes.size() != objects_.size() * sizeof(Object)) {
    return core::Status::Corruption("load state: size " + std::to_string(bytes.size()) +
                                    " does not match " + std::to_string(object_count_) +
                                    " objects of " + std::to_string(kObjectSize) + " bytes");
  }
  Globals g;
  std::memcpy(&g, bytes.data(), sizeof g);
  const Globals& mine = globals();
  if (g.magic != kStateMagic || g.version != kStateVersion) {
    return core::Status::Corruption("load state: bad magic or version");
  }
  if (g.object_size != kObjectSize || !(ConfigurationOf(g) == ConfigurationOf(mine))) {
    return core::Status::InvalidArgument("load state: saved for another map or configuration");
  }
  std::memcpy(static_cast<void*>(objects_.data()), bytes.data(), bytes.size());
  RelinkAll();
  return core::Status::OK();
}

}  // namespace game
