// The record store of offline players (World::Leave, ResumeRecord, EvictRecord) and its derived
// indexes. A player's whole edict moves into the store when it leaves and back into a free
// player slot when it returns, so --max-players bounds only the players online, and the store
// (--max-records objects) bounds what offline players cost. The store's objects are ordinary
// state objects: every write goes through Mut, so checkpoints and replay see them like any other.
#include <cstring>

#include "server/core/check.h"
#include "server/game/world.h"

namespace game {

EntityId World::FindRecord(std::string_view name) const {
  const auto it = record_by_name_.find(std::string(name));
  return it == record_by_name_.end() ? 0 : it->second;
}

EntityId World::LeastRecentlySeenRecord() const {
  return record_by_stamp_.empty() ? 0 : record_by_stamp_.begin()->second;
}

void World::RebuildRecordIndex() {
  record_by_name_.clear();
  record_by_stamp_.clear();
  free_records_.Reset(first_record_, object_count_);
  for (EntityId id = first_record_; id < object_count_; ++id) {
    const Edict& e = objects_[id].edict;
    if (e.kind == EntityKind::kRecord) {
      record_by_name_[e.name] = id;
      record_by_stamp_[e.seen_stamp] = id;
    } else {
      free_records_.Insert(id);
    }
  }
}

void World::FreeRocketSlots(EntityId player) {
  for (int k = 0; k < kRocketsPerPlayer; ++k) {
    const EntityId slot = RocketSlot(player, k);
    if (objects_[slot].edict.kind == EntityKind::kFree) continue;
    UnlinkEdict(slot);
    Edict& e = Mut(slot);
    std::memset(static_cast<void*>(&e), 0, sizeof e);
  }
}

core::Status World::Leave(EntityId player) {
  WrittenScope written(this);
  if (!IsPlayerId(player) || !(objects_[player].edict.flags & kFlagConnected)) {
    return core::Status::InvalidArgument("leave: player " + std::to_string(player) +
                                         " is not connected");
  }
  if (free_records_.empty()) {
    return core::Status::Refused("leave: the record store is full (evict a record first)");
  }
  const EntityId record = free_records_.Lowest();
  UnlinkEdict(player);
  FreeRocketSlots(player);  // its rockets and explosions go with it
  const uint64_t stamp = ++MutGlobals().leave_stamp;
  Edict& r = Mut(record);
  r = objects_[player].edict;
  r.kind = EntityKind::kRecord;
  r.flags &= ~(kFlagConnected | kFlagSolid);
  r.seen_stamp = stamp;
  r.last_slot = player;
  Edict& e = Mut(player);
  std::memset(static_cast<void*>(&e), 0, sizeof e);
  free_records_.Erase(record);
  record_by_name_[r.name] = record;
  record_by_stamp_[stamp] = record;
  return core::Status::OK();
}

void World::ResumeRecord(EntityId record, EntityId player) {
  AS_CHECK(objects_[record].edict.kind == EntityKind::kRecord, "ResumeRecord: not a record");
  AS_CHECK(objects_[player].edict.kind == EntityKind::kFree, "ResumeRecord: slot in use");
  const Edict& r = objects_[record].edict;
  record_by_name_.erase(r.name);
  record_by_stamp_.erase(r.seen_stamp);
  Edict& e = Mut(player);
  e = r;
  e.kind = EntityKind::kPlayer;
  e.seen_stamp = 0;
  e.last_slot = 0;
  e.flags |= kFlagConnected;
  Edict& freed = Mut(record);
  std::memset(static_cast<void*>(&freed), 0, sizeof freed);
  free_records_.Insert(record);
  if (e.flags & kFlagDead) {
    SpawnPlayer(player);
  } else {
    e.flags |= kFlagSolid;
    LinkEdict(player);
  }
}

core::Status World::EvictRecord(EntityId record) {
  WrittenScope written(this);
  if (record < first_record_ || record >= object_count_ ||
      objects_[record].edict.kind != EntityKind::kRecord) {
    return core::Status::InvalidArgument("evict: object " + std::to_string(record) +
                                         " is not an offline player record");
  }
  const Edict& r = objects_[record].edict;
  record_by_name_.erase(r.name);
  record_by_stamp_.erase(r.seen_stamp);
  Edict& freed = Mut(record);
  std::memset(static_cast<void*>(&freed), 0, sizeof freed);
  free_records_.Insert(record);
  ++MutGlobals().records_evicted;
  return core::Status::OK();
}

}  // namespace game
