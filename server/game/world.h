// World: the game. Owns the persistent state (one contiguous array of fixed-size objects), the
// derived areanode links, and the rules: player commands, the world phase, joins and leaves.
//
// State layout (see entity.h and docs/game.md): object 0 is the Globals; objects
// 1..max_players are the online players' edicts; then kRocketsPerPlayer rocket slots per player
// (player p owns RocketSlot(p, 0..3)); then one edict per map pickup; then the record store:
// max_records objects holding offline players' records (EntityKind::kRecord). object_count()
// objects of kObjectSize bytes each, at StateBytes().data() + id * kObjectSize. Edict id ==
// areanode entity id; entities (what snapshots may show) are the ids below first_record().
//
// The Mut contract. Every write to persistent state goes through Mut(id) or MutGlobals(), which
// call the write hook (if set) with the object id BEFORE returning the reference. The returned
// reference may be written until the current call into the World returns (a command, the world
// phase, a join/leave/evict); it must not be kept across calls. When that call returns, the
// written hook (if set) is called once for every object it wrote, on the same thread (for a
// command: still under the caller's region locks). Nothing else writes the state.
// Reads go through the const accessors. Derived data (areanode links) is not persistent: it is
// rebuilt from kFlagLinked and the edict boxes by LoadState().
//
// Threading contract. World is created, loaded, joined/left and advanced by RunWorldPhase() on
// one thread at a time (the serial parts of the frame). ExecuteCommand() may run concurrently on
// several threads for different players provided the caller holds the areanode leaf locks of
// every leaf touched by RegionOf(player, cmd) (all leaves if NeedsWholeMap) and the tree's
// parent locking is on. Commands never write the Globals; each player owns its rocket slots,
// so concurrent commands need no allocator. The write hook may then be called concurrently, for
// different objects. Const readers (snapshots) must not overlap commands or serial phases.
//
// Determinism. The state after a tick is a pure function of the state before it and the ordered
// joins/leaves/commands applied: randomness comes from generators stored in the state, there is
// no clock, iteration is by id, and every object byte is initialised. Commands of one tick that
// ran in parallel either touched disjoint regions (they commute) or were serialised by their
// leaf locks, so a serial replay in the order they were logged under those locks gives the same
// state (tests/game/game_parallel_test.cc).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "maps/map.h"
#include "server/core/check.h"
#include "server/core/populated_memory.h"
#include "server/areanode/areanode_tree.h"
#include "server/collision/brush_grid.h"
#include "server/collision/collision_world.h"
#include "server/core/status.h"
#include "server/game/entity.h"
#include "server/game/free_ids.h"
#include "server/game/move_clip.h"
#include "server/game/region.h"
#include "server/game/user_cmd.h"

namespace game {

struct WorldConfig {
  int max_players = 64;                         // 1..4096 online at once
  int max_records = 1024;                       // 1..1000000 offline player records (the server: --max-records)
  int tick_ms = 33;                             // world phase step, 1..1000
  int areanode_depth = areanode::kDefaultDepth;
  uint64_t seed = 1;
};

struct JoinResult {
  core::Status status;   // Refused (wrong token, server full) or InvalidArgument (bad name)
  EntityId player = 0;
  bool resumed = false;  // an existing record was resumed
};

// Called with an object id before that object is written (recovery's copy-on-update hook), or,
// as the written hook, after the World call that wrote it (recovery's ping-pong hook).
using WriteHook = std::function<void(int object_id)>;

class World {
 public:
  // What Create refuses about `map` itself, checked before anything is built: no spawn points or
  // no solid geometry (maps::CheckPlayable), or teleporters or jump pads whose grid would pass
  // collision::BrushGrid::kMaxEntries (a volume counts once per cell it covers). The server and
  // aftershock-mapcheck call it right after loading.
  static core::Status CheckMap(const maps::Map& map);

  // Builds the initial state for `map`: pickups placed, no players. `collision` must be built
  // from the same map and outlive the World; `map` is copied where needed.
  static core::Status Create(const maps::Map& map, const collision::CollisionWorld& collision,
                             const WorldConfig& config, std::unique_ptr<World>* out);
  ~World();
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  // ---- Layout ----
  int object_count() const { return object_count_; }
  // The points players spawn at, in the order ChooseSpawn indexes them (Edict::index): the
  // map's deathmatch spawns, or all of its spawns if it has none.
  const std::vector<maps::SpawnPoint>& spawn_points() const { return spawns_; }
  int max_players() const { return max_players_; }
  bool IsPlayerId(EntityId id) const { return id >= 1 && id <= max_players_; }
  EntityId RocketSlot(EntityId player, int k) const {
    return first_rocket_ + (player - 1) * kRocketsPerPlayer + k;
  }
  EntityId first_pickup() const { return first_pickup_; }
  int pickup_count() const { return first_record_ - first_pickup_; }
  EntityId first_record() const { return first_record_; }
  int record_capacity() const { return object_count_ - first_record_; }
  int tick_ms() const { return tick_ms_; }

  // ---- Reads (any thread that does not overlap writers) ----
  const Globals& globals() const { return objects_[0].globals; }
  // Region-checked while a command runs on this thread (set_region_check).
  const Edict& Get(EntityId id) const;
  std::span<const uint8_t> StateBytes() const;
  // Online player id with this name, or 0.
  EntityId FindPlayer(std::string_view name) const;
  // Record-store id of the offline record with this name, or 0.
  EntityId FindRecord(std::string_view name) const;
  int offline_records() const { return static_cast<int>(record_by_name_.size()); }
  bool RecordStoreFull() const { return free_records_.empty(); }
  // The offline record whose player left longest ago (lowest seen_stamp), or 0 if none.
  EntityId LeastRecentlySeenRecord() const;
  // True if `token` is the secret of player record `player` (what Join would accept).
  bool TokenMatches(EntityId player, uint64_t token) const;

  // ---- Writes: the only mutation calls ----
  Edict& Mut(EntityId id);
  Globals& MutGlobals();
  void set_write_hook(WriteHook hook) { write_hook_ = std::move(hook); }
  void set_written_hook(WriteHook hook) { written_hook_ = std::move(hook); }

  // ---- Serial phases ----
  // Joins by name and secret token. An online player of that name with that token stays as it
  // is; an offline record of that name is resumed into the lowest free player slot if the token
  // matches (refused otherwise) and leaves the store; a new name takes the lowest free player
  // slot. Refused when every player slot is online.
  JoinResult Join(std::string_view name, uint64_t token);
  // Moves the player into the record store (the lowest free record object, stamped with the next
  // leave_stamp) and frees its player slot and rocket slots. The store must have a free object:
  // Refused otherwise (evict first; durability::ApplyLeave does).
  core::Status Leave(EntityId player);
  // Frees offline record `record` (the player of that name starts afresh if it joins again).
  // InvalidArgument if `record` is not an offline record.
  core::Status EvictRecord(EntityId record);
  // Advances everything that is not a player command by tick_ms: rockets, explosions, item
  // respawns, dead players' respawns, the tick counter.
  void RunWorldPhase();

  // ---- Commands ----
  // The entity's current box (origin + mins/maxs). For a player this is stable during the
  // request phase: only the player's own commands move it (others change its velocity, health,
  // flags, never its origin), so it may be read without locks between commands.
  Bounds BoxOf(EntityId id) const;
  // What ExecuteCommand(player, cmd) may touch, from the current state. Cheap (no traces).
  // It reads the player's edict, which other players' commands may write (knockback, damage,
  // death), so in the request phase call it holding the leaf locks of LeavesTouching(BoxOf(
  // player)) (any command that writes this player holds those leaves too). Locking protocol:
  //   held = lock(leaves(BoxOf(player)));
  //   loop { need = held + leaves(RegionOf(player, cmd)); if need == held break;
  //          unlock(held); held = lock(need) in ascending order; }   // sets only grow
  //   ExecuteCommand(player, cmd); unlock(held);
  // game::RegionLocker::LockCommandRegion (region_locker.h) implements it for the server and tests.
  Region RegionOf(EntityId player, const UserCmd& cmd) const;
  // Applies one command of a connected player: weapon switch, movement (split into sub-steps of
  // <= kMaxSubstepMs), item/teleporter/jump pad touches, attack. Refuses (and changes nothing)
  // bad input: unknown/disconnected player, duration outside 1..kMaxCmdMs, non-finite angles,
  // a sequence not above the last applied one.
  core::Status ExecuteCommand(EntityId player, const UserCmd& cmd);
  // Debug check: while a command runs, every entity it reads or writes and every tree query must
  // lie inside the command's declared (optimized) region, else AS_CHECK aborts naming both.
  void set_region_check(bool on) { region_check_ = on; }
  bool region_check() const { return region_check_; }

  // ---- State ----
  uint64_t StateHash() const;
  // Appends nothing else: *out becomes exactly the object array (object_count() * kObjectSize).
  void SaveState(std::vector<uint8_t>* out) const;
  // Replaces the state with `bytes` (from SaveState of a World of the same map and config) and
  // relinks every entity. On error the state is unchanged.
  core::Status LoadState(std::span<const uint8_t> bytes);
  // Rebuilds the derived data from the state: the areanode links, the record store's indexes and
  // which players may be dead (after recovery wrote object bytes directly).
  void RelinkAll();
  // The object array itself, for the two users below the write path (World::Mut): recovery's
  // restore writes it (then call RelinkAll()), and the checkpointer keeps it as its live base
  // (it reads objects the write hook reports). Nothing else may write through it.
  std::span<uint8_t> MutableStateBytes();

  areanode::AreanodeTree& tree() { return *tree_; }
  const areanode::AreanodeTree& tree() const { return *tree_; }
  const collision::CollisionWorld& collision() const { return collision_; }

 private:
  struct TriggerVolume {
    Bounds bounds;
    std::vector<Bounds> brushes;  // exact-ish test: any brush box
    Vec3 dest_origin;             // teleporters
    float dest_yaw = 0;
    Vec3 velocity;                // jump pads
  };
  struct PickupSpot {
    ItemType item;
    Vec3 origin;
  };
  // Opened by each public call that may write: collects the objects Mut hands out on this thread
  // and reports them to the written hook when the outermost one closes.
  class WrittenScope {
   public:
    explicit WrittenScope(World* world);
    ~WrittenScope();
    WrittenScope(const WrittenScope&) = delete;
    WrittenScope& operator=(const WrittenScope&) = delete;

   private:
    World* world_;
  };

  World(const collision::CollisionWorld& collision, const WorldConfig& config);
  void InitState(uint64_t map_hash);
  void NoteWritten(EntityId id);

  // Links/unlinks an entity in the tree from origin+mins/maxs and keeps kFlagLinked in step.
  void LinkEdict(EntityId id);
  void UnlinkEdict(EntityId id);
  // Tree queries, region-checked during commands. QuerySegment: the entities within
  // kSegmentQueryPad of the segment (AreanodeTree::QuerySegment), ascending. QueryBox: ascending;
  // QueryBoxUnordered: the same entities in the tree's order, for a caller whose result cannot
  // depend on the order (the sort is a few percent of a command's time).
  void QueryBox(const Bounds& box, std::vector<EntityId>* out) const;
  void QueryBoxUnordered(const Bounds& box, std::vector<EntityId>* out) const;
  void QuerySegment(Vec3 start, Vec3 end, std::vector<EntityId>* out) const;
  // QuerySegment(start, ends[k], &outs[k]) for k < count (at most
  // areanode::AreanodeTree::kMaxSegments), in one walk of the tree.
  void QuerySegments(Vec3 start, const Vec3* ends, int count, std::vector<EntityId>* outs) const;
  void CheckAccess(EntityId id, const char* what) const;
  void CheckBox(const Bounds& box, const char* what) const;

  // command.cc
  Bounds MoveCore(const Edict& p, const UserCmd& cmd) const;
  // ExecuteCommand's effects, once its checks passed (and its region is declared, under the
  // region check).
  core::Status ApplyCommand(EntityId player, const UserCmd& cmd);
  bool RunMovement(EntityId player, const UserCmd& cmd);
  void TouchItems(EntityId player, const Bounds& box, std::vector<EntityId>* items);
  void Teleport(EntityId player, const TriggerVolume& tp);
  // combat.cc
  void Fire(EntityId player, int weapon);
  void FireMelee(EntityId player);
  void FireShotgun(EntityId player);
  void FireRocket(EntityId player);
  // Flies rocket `id` from its origin by `distance`; explodes on impact. Returns true if it exploded.
  bool FlyRocket(EntityId id, float distance);
  void Explode(EntityId rocket, Vec3 at, EntityId direct_hit);
  // Nearest solid player the ray start->end hits (excluding `skip`; ties to the lower id), with
  // its fraction; -1 if none.
  EntityId RayHitEntity(Vec3 start, Vec3 end, EntityId skip, float* fraction) const;
  // As RayHitEntity, choosing among `candidates`: the ascending result of a tree query that
  // returns every entity the ray meets (QueryBox of a box holding the ray's, or QuerySegment).
  EntityId NearestHit(Vec3 start, Vec3 end, EntityId skip, const std::vector<EntityId>& candidates,
                      float* fraction) const;
  void Damage(EntityId target, EntityId attacker, int damage, Vec3 knockback_dir);
  void Kill(EntityId victim, EntityId attacker);
  void Telefrag(EntityId mover, const Bounds& box);
  // Ticks that cover `duration_ms`, rounded up (respawn and lifetime timers).
  int TicksFor(int duration_ms) const { return (duration_ms + tick_ms_ - 1) / tick_ms_; }
  // player_records.cc
  void RebuildRecordIndex();
  void FreeRocketSlots(EntityId player);
  // Moves offline record `record` into free player slot `player` and frees the record object.
  void ResumeRecord(EntityId record, EntityId player);
  // world_phase.cc
  // The solid players' origins, one array per coordinate, so that ChooseSpawn's scan keeps four
  // independent minimums (one chain of minss was most of its time). Their order does not matter.
  struct LiveOrigins {
    std::vector<float> xs, ys, zs;
    void Add(Vec3 p) {
      xs.push_back(p.x);
      ys.push_back(p.y);
      zs.push_back(p.z);
    }
  };
  void GatherLiveOrigins(LiveOrigins* live) const;
  // Spawns `player` at ChooseSpawn(*live) and adds it to *live; live == nullptr: gathers them
  // first. *live must hold every solid player's origin (the order aside), `player` not among them.
  void SpawnPlayer(EntityId player, LiveOrigins* live = nullptr);
  int ChooseSpawn(const LiveOrigins& live);

  const collision::CollisionWorld& collision_;
  std::unique_ptr<areanode::AreanodeTree> tree_;
  // The persistent state: populated at once, not a page fault per 4 KiB (populated_memory.h).
  std::vector<Object, core::PopulatedAllocator<Object>> objects_;
  WriteHook write_hook_;
  WriteHook written_hook_;
  bool region_check_ = false;

  // Fixed at creation (not persistent; equal for every World of the same map and config).
  int max_players_ = 0;
  int tick_ms_ = 0;
  int object_count_ = 0;
  EntityId first_rocket_ = 0;
  EntityId first_pickup_ = 0;
  EntityId first_record_ = 0;
  uint64_t seed_ = 0;
  float hitscan_range_ = 0;  // how far a pellet flies: the map's diagonal + kHitscanRangeMargin
  float max_pad_speed_ = 0;
  std::vector<maps::SpawnPoint> spawns_;
  std::vector<PickupSpot> pickups_;
  std::vector<TriggerVolume> teleporters_;
  std::vector<TriggerVolume> jump_pads_;
  // The box of every volume's bounds (Empty() if none): a box apart from it meets none of them.
  Bounds teleporters_bounds_ = Bounds::Empty();
  Bounds jump_pads_bounds_ = Bounds::Empty();
  // The volumes' bounds in grids (id i is teleporters_[i], jump_pads_[i]): a command looks at
  // the triggers near it, not at every one of the map's (up to maps::kMaxEntities).
  collision::BrushGrid teleporter_grid_;
  collision::BrushGrid jump_pad_grid_;

  // Per player id: nonzero if the player may be dead, so that the world phase reads only those
  // players' edicts, not every player's every tick (their lines belong to the command threads'
  // caches). Kill sets it (on any command thread: one byte per player, written only by the command
  // that holds the player's region); SpawnPlayer and the world phase clear it; RelinkAll rebuilds
  // it from kFlagDead. Invariant: every dead player's byte is nonzero.
  std::vector<uint8_t> may_be_dead_;
  // Per player id: what the map told its recent traces (MapTraceMemo), used and written only by
  // the command that holds the player's region. Not state: no other code reads it, and an empty
  // or stale memo only costs map traces.
  std::vector<MapTraceMemo> map_trace_memos_;
  // Derived from the record store (rebuilt by RelinkAll, kept in step by Leave/Join/EvictRecord).
  std::unordered_map<std::string, EntityId> record_by_name_;
  std::map<uint64_t, EntityId> record_by_stamp_;  // LRU order: oldest leave first
  FreeIds free_records_;                          // lowest free first
};

// Inline: every command calls them a few times per entity it meets.
inline const Edict& World::Get(EntityId id) const {
  AS_CHECK(id > 0 && id < object_count_, "edict id out of range");
  if (region_check_) CheckAccess(id, "read");
  return objects_[id].edict;
}

inline Edict& World::Mut(EntityId id) {
  AS_CHECK(id > 0 && id < object_count_, "edict id out of range");
  if (region_check_) CheckAccess(id, "write");
  if (write_hook_) write_hook_(id);
  if (written_hook_) NoteWritten(id);
  return objects_[id].edict;
}

}  // namespace game
