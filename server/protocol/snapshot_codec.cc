// Snapshot delta encoding. Both sides hold, per snapshot id, the entity list the client decoded
// (sorted by id). A packet names its baseline; entities of the baseline that are not mentioned
// carry over unchanged, `removed` lists baseline ids that are gone, and each entry is either a
// field-mask delta against the baseline entity or a full new entity.
#include "server/protocol/snapshot_codec.h"

#include <algorithm>
#include <array>
#include <bit>
#include <string>

#include "server/core/check.h"
#include "server/protocol/byte_io.h"

namespace proto {
namespace {

using core::Status;

constexpr size_t kHeaderBytes = 1 + 4 + 4 + 4 + 4;  // type, id, baseline, tick, last sequence
constexpr size_t kPlayerStateBytes = 3 * 12 + 2 + 1 + 2 + 1 + 2 * kNumAmmoTypes + 2 + 2 + 1;
constexpr size_t kCountBytes = 3;        // removed_count + entry_count + event_count
constexpr size_t kEventSeqBytes = 4;     // first_event_seq, present when event_count > 0
constexpr size_t kEventBytes = 5;        // killer_id, victim_id, how
constexpr size_t kEntryHeaderBytes = 4;  // id + field mask
constexpr uint16_t kFloatFields =
    kFieldOriginX | kFieldOriginY | kFieldOriginZ | kFieldPitch | kFieldYaw | kFieldRoll;

bool SameBits(float a, float b) { return std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b); }

size_t FieldBytes(uint16_t mask) {
  size_t n = 0;
  for (uint16_t f = kFieldOriginX; f <= kFieldRoll; f = static_cast<uint16_t>(f << 1)) {
    n += (mask & f) ? 4 : 0;
  }
  n += (mask & kFieldType) ? 1 : 0;
  n += (mask & kFieldEffects) ? 1 : 0;
  n += (mask & kFieldModel) ? 1 : 0;
  return n;
}

// Writes little-endian values at a cursor into a buffer the caller sized exactly: no capacity
// check per value (the encoder computes the packet's size first and checks it at the end).
class FixedWriter {
 public:
  explicit FixedWriter(uint8_t* p) : p_(p) {}
  void U8(uint8_t v) { *p_++ = v; }
  void U16(uint16_t v) {
    p_[0] = static_cast<uint8_t>(v);
    p_[1] = static_cast<uint8_t>(v >> 8);
    p_ += 2;
  }
  void I16(int16_t v) { U16(static_cast<uint16_t>(v)); }
  void U32(uint32_t v) {
    p_[0] = static_cast<uint8_t>(v);
    p_[1] = static_cast<uint8_t>(v >> 8);
    p_[2] = static_cast<uint8_t>(v >> 16);
    p_[3] = static_cast<uint8_t>(v >> 24);
    p_ += 4;
  }
  void F32(float v) { U32(std::bit_cast<uint32_t>(v)); }
  const uint8_t* cursor() const { return p_; }

 private:
  uint8_t* p_;
};

// Fields of `to` that differ (bitwise) from `from`.
uint16_t DiffMask(const EntityState& from, const EntityState& to) {
  uint16_t m = 0;
  if (from.type != to.type) m |= kFieldType;
  if (!SameBits(from.origin.x, to.origin.x)) m |= kFieldOriginX;
  if (!SameBits(from.origin.y, to.origin.y)) m |= kFieldOriginY;
  if (!SameBits(from.origin.z, to.origin.z)) m |= kFieldOriginZ;
  if (!SameBits(from.angles.x, to.angles.x)) m |= kFieldPitch;
  if (!SameBits(from.angles.y, to.angles.y)) m |= kFieldYaw;
  if (!SameBits(from.angles.z, to.angles.z)) m |= kFieldRoll;
  if (from.effects != to.effects) m |= kFieldEffects;
  if (from.model != to.model) m |= kFieldModel;
  return m;
}

void WriteFields(FixedWriter& w, const EntityState& e, uint16_t mask) {
  if (mask & kFieldType) w.U8(static_cast<uint8_t>(e.type));
  if (mask & kFieldOriginX) w.F32(e.origin.x);
  if (mask & kFieldOriginY) w.F32(e.origin.y);
  if (mask & kFieldOriginZ) w.F32(e.origin.z);
  if (mask & kFieldPitch) w.F32(e.angles.x);
  if (mask & kFieldYaw) w.F32(e.angles.y);
  if (mask & kFieldRoll) w.F32(e.angles.z);
  if (mask & kFieldEffects) w.U8(e.effects);
  if (mask & kFieldModel) w.U8(e.model);
}

// Reads the fields named by mask over *e, leaving the others as they are.
void ReadFields(ByteReader& r, uint16_t mask, EntityState* e) {
  if (mask & kFieldType) e->type = static_cast<EntityType>(r.U8());
  if (mask & kFieldOriginX) e->origin.x = r.F32();
  if (mask & kFieldOriginY) e->origin.y = r.F32();
  if (mask & kFieldOriginZ) e->origin.z = r.F32();
  if (mask & kFieldPitch) e->angles.x = r.F32();
  if (mask & kFieldYaw) e->angles.y = r.F32();
  if (mask & kFieldRoll) e->angles.z = r.F32();
  if (mask & kFieldEffects) e->effects = r.U8();
  if (mask & kFieldModel) e->model = r.U8();
}

// Copies the fields named by mask from `from` to *to.
void ApplyFields(uint16_t mask, const EntityState& from, EntityState* to) {
  if (mask & kFieldType) to->type = from.type;
  if (mask & kFieldOriginX) to->origin.x = from.origin.x;
  if (mask & kFieldOriginY) to->origin.y = from.origin.y;
  if (mask & kFieldOriginZ) to->origin.z = from.origin.z;
  if (mask & kFieldPitch) to->angles.x = from.angles.x;
  if (mask & kFieldYaw) to->angles.y = from.angles.y;
  if (mask & kFieldRoll) to->angles.z = from.angles.z;
  if (mask & kFieldEffects) to->effects = from.effects;
  if (mask & kFieldModel) to->model = from.model;
}

void WriteVec(FixedWriter& w, core::Vec3 v) {
  w.F32(v.x);
  w.F32(v.y);
  w.F32(v.z);
}

core::Vec3 ReadVec(ByteReader& r) {
  core::Vec3 v;
  v.x = r.F32();
  v.y = r.F32();
  v.z = r.F32();
  return v;
}

void WritePlayer(FixedWriter& w, const PlayerState& p) {
  WriteVec(w, p.origin);
  WriteVec(w, p.velocity);
  WriteVec(w, p.view_angles);
  w.I16(p.health);
  w.U8(p.armor);
  w.U16(p.weapons);
  w.U8(static_cast<uint8_t>(p.current_weapon));
  for (uint16_t a : p.ammo) w.U16(a);
  w.I16(p.frags);
  w.U16(p.deaths);
  w.U8(p.flags);
}

void ReadPlayer(ByteReader& r, PlayerState* p) {
  p->origin = ReadVec(r);
  p->velocity = ReadVec(r);
  p->view_angles = ReadVec(r);
  p->health = r.I16();
  p->armor = r.U8();
  p->weapons = r.U16();
  p->current_weapon = static_cast<WeaponId>(r.U8());
  for (uint16_t& a : p->ammo) a = r.U16();
  p->frags = r.I16();
  p->deaths = r.U16();
  p->flags = r.U8();
}

// A baseline's entities by id: a table over every possible id (128 KiB per thread) whose
// entries carry the generation that wrote them, so each encode indexes its baseline with one
// store per entity and nothing to clear; a lookup is one load, where a hash probed and collided.
class BaseIndex {
 public:
  explicit BaseIndex(const std::vector<EntityState>& base) : base_(base) {
    AS_CHECK(base.size() <= kMaxSnapshotEntities, "a baseline holds at most 64 entities");
    if (++generation_ == kGenerations) {  // wrapped: old entries could look current
      slot_.fill(0);
      generation_ = 1;
    }
    for (size_t i = 0; i < base.size(); ++i) slot_[base[i].id] = generation_ << 8 | static_cast<uint32_t>(i);
  }
  const EntityState* Find(uint16_t id) const {
    const uint32_t v = slot_[id];
    return v >> 8 == generation_ ? &base_[v & 0xFF] : nullptr;
  }

 private:
  static constexpr uint32_t kGenerations = 1u << 24;  // what fits above the 8-bit index
  const std::vector<EntityState>& base_;
  static thread_local std::array<uint32_t, kMaxEntityId + 1> slot_;  // generation << 8 | index
  static thread_local uint32_t generation_;                          // below 2^24
};
thread_local std::array<uint32_t, kMaxEntityId + 1> BaseIndex::slot_{};
thread_local uint32_t BaseIndex::generation_ = 0;

Status Bad(const std::string& why) { return Status::InvalidArgument("Snapshot: " + why); }

}  // namespace

// --- encoder ---------------------------------------------------------------------------------

namespace {
// Buffers of snapshots their encoders forgot, for the next snapshots encoded on this thread: a
// client acknowledges every frame, so each encoder keeps about two snapshots instead of
// kSnapshotRing, and a new snapshot's state goes into memory touched a frame or two ago rather
// than kSnapshotRing frames ago.
constexpr size_t kMaxSpareBuffers = 64;
std::vector<std::vector<EntityState>>& SpareBuffers() {
  thread_local std::vector<std::vector<EntityState>> spare;
  return spare;
}
}  // namespace

const SnapshotEncoder::Held* SnapshotEncoder::Find(uint32_t id) const {
  const Held& h = ring_[id % kSnapshotRing];
  return (id != 0 && h.id == id) ? &h : nullptr;
}

void SnapshotEncoder::PrefetchBaseline(uint32_t client_ack_id) const {
  const Held* base = Find(client_ack_id);
  if (base == nullptr) return;
  const char* p = reinterpret_cast<const char*>(base->entities.data());
  const size_t bytes = base->entities.size() * sizeof(EntityState);
  for (size_t off = 0; off < bytes; off += 64) __builtin_prefetch(p + off);
}

void SnapshotEncoder::Reset() {
  for (Held& h : ring_) h = Held{};
  last_id_ = 0;
  forget_from_ = 1;
  events_.clear();
  events_first_seq_ = 1;
}

namespace {

Status ValidateFrame(const Snapshot& frame, uint32_t last_id) {
  if (frame.snapshot_id == 0 || frame.snapshot_id <= last_id) {
    return Bad("snapshot_id " + std::to_string(frame.snapshot_id) + " not above " +
               std::to_string(last_id));
  }
  if (Status s = Validate(frame.player); !s.ok()) return s;
  for (const EntityState& e : frame.entities) {
    if (Status s = Validate(e); !s.ok()) return s;
  }
  // Duplicates: one bit per possible id (4 KiB, kept per thread), set while walking the offer
  // and cleared again before returning.
  thread_local std::array<uint64_t, (kMaxEntityId + 1) / 64> seen{};
  const auto bit = [](uint16_t id) { return uint64_t{1} << (id & 63); };
  size_t i = 0;
  for (; i < frame.entities.size(); ++i) {
    const uint16_t id = frame.entities[i].id;
    if (seen[id >> 6] & bit(id)) break;
    seen[id >> 6] |= bit(id);
  }
  for (size_t j = 0; j < i; ++j) seen[frame.entities[j].id >> 6] = 0;
  if (i < frame.entities.size()) {
    return Bad("entity id " + std::to_string(frame.entities[i].id) + " offered twice");
  }
  return Status::OK();
}

using Plan = detail::SnapshotPlan;

// Takes offered entities in priority order while the packet, including a 2-byte removal for
// every baseline entity not (yet) taken, stays within budget. Taking an entity never grows
// the removal reserve, so the packet is within budget after every step. Then lists the taken
// ones in id order without sorting them all: the baseline is in id order and holds most of
// them (a client's view changes little between frames), so only the new ones are sorted.
void PlanEntities(const std::vector<EntityState>& offered, const std::vector<EntityState>& base,
                  size_t event_bytes, Plan* plan) {
  Plan& p = *plan;
  p.entries.clear();
  p.sent.clear();
  p.fresh.clear();
  p.taken = 0;
  p.base_key.assign(base.size(), Plan::kNotTaken);
  p.bytes = kHeaderBytes + kPlayerStateBytes + kCountBytes + event_bytes;
  p.base_left = base.size();
  AS_CHECK(p.bytes + 2 * p.base_left <= kMaxSnapshotBytes, "64 removals always fit");
  const BaseIndex index(base);
  for (const EntityState& e : offered) {
    if (p.taken == kMaxSnapshotEntities) break;
    const EntityState* b = index.Find(e.id);
    uint16_t mask = kFieldNew | kAllEntityFields;
    if (b != nullptr && b->type == e.type) mask = DiffMask(*b, e);
    const size_t cost = mask == 0 ? 0 : kEntryHeaderBytes + FieldBytes(mask);
    const size_t left_after = p.base_left - (b != nullptr ? 1 : 0);
    if (p.bytes + cost + 2 * left_after > kMaxSnapshotBytes) break;
    p.bytes += cost;
    p.base_left = left_after;
    ++p.taken;
    // Key: id, then the offer position (< 64) and the mask: ordering keys orders by id.
    const uint64_t key =
        uint64_t{e.id} << 48 | uint64_t{static_cast<uint32_t>(&e - offered.data())} << 16 | mask;
    if (b != nullptr) {
      p.base_key[static_cast<size_t>(b - base.data())] = key;
    } else {
      p.fresh.push_back(key);
    }
  }
  std::sort(p.fresh.begin(), p.fresh.end());
  auto emit = [&](uint64_t key) {
    const EntityState& e = offered[static_cast<size_t>(key >> 16 & 0xFFFFFFFF)];
    const uint16_t mask = static_cast<uint16_t>(key);
    if (mask != 0) p.entries.push_back({&e, mask});
    p.sent.push_back(e);
  };
  size_t f = 0;
  for (size_t i = 0; i < base.size(); ++i) {
    const uint64_t key = p.base_key[i];
    if (key == Plan::kNotTaken) continue;
    while (f < p.fresh.size() && p.fresh[f] < key) emit(p.fresh[f++]);
    emit(key);
  }
  while (f < p.fresh.size()) emit(p.fresh[f++]);
}

size_t EventBytes(size_t n) { return n == 0 ? 0 : kEventSeqBytes + n * kEventBytes; }

// The kill events a snapshot carries: n of them from `first`, numbered from first_seq.
struct EventRun {
  std::deque<KillEvent>::const_iterator first;
  size_t n = 0;
  uint32_t first_seq = 0;
};

// Writes the packet into *out (its capacity reused).
void WriteSnapshot(const Snapshot& frame, uint32_t baseline_id,
                   const std::vector<EntityState>& base, const Plan& p, const EventRun& events,
                   std::vector<uint8_t>* out) {
  const size_t size = p.bytes + 2 * p.base_left;
  AS_CHECK(size <= kMaxSnapshotBytes, "snapshot over budget");
  out->resize(size);
  FixedWriter w(out->data());
  w.U8(static_cast<uint8_t>(MessageType::kSnapshot));
  w.U32(frame.snapshot_id);
  w.U32(baseline_id);
  w.U32(frame.server_tick);
  w.U32(frame.last_applied_sequence);
  WritePlayer(w, frame.player);
  w.U8(static_cast<uint8_t>(p.base_left));
  for (size_t i = 0; i < base.size(); ++i) {
    if (p.base_key[i] == Plan::kNotTaken) w.U16(base[i].id);
  }
  w.U8(static_cast<uint8_t>(p.entries.size()));
  for (const Plan::Entry& en : p.entries) {
    w.U16(en.e->id);
    w.U16(en.mask);
    WriteFields(w, *en.e, en.mask);
  }
  w.U8(static_cast<uint8_t>(events.n));
  if (events.n > 0) {
    w.U32(events.first_seq);
    auto it = events.first;
    for (size_t i = 0; i < events.n; ++i, ++it) {
      w.U16(it->killer_id);
      w.U16(it->victim_id);
      w.U8(it->how);
    }
  }
  AS_CHECK(w.cursor() == out->data() + size, "snapshot size accounting out of step");
}

}  // namespace

Status SnapshotEncoder::Encode(const Snapshot& frame, uint32_t client_ack_id,
                               EncodedSnapshot* out) {
  if (Status s = ValidateFrame(frame, last_id_); !s.ok()) return s;
  if (!frame.events.empty()) return Bad("frame.events is set; queue kill events with QueueEvent");
  // The client decoded the acknowledged snapshot, so it has every event that snapshot carried.
  if (const Held* acked = Find(client_ack_id); acked != nullptr) {
    while (!events_.empty() && events_first_seq_ < acked->events_upto) {
      events_.pop_front();
      ++events_first_seq_;
    }
  }
  const EventRun events{events_.cbegin(), std::min(events_.size(), kMaxSnapshotEvents),
                        events_first_seq_};

  static const std::vector<EntityState> kNoEntities;
  const Held* base = client_ack_id < frame.snapshot_id ? Find(client_ack_id) : nullptr;
  const std::vector<EntityState>& base_entities = base ? base->entities : kNoEntities;
  const uint32_t baseline_id = base ? base->id : 0;

  thread_local detail::SnapshotPlan plan;  // see SnapshotPlan
  if (base != nullptr) ForgetOlderThan(base->id);
  if (plan.sent.capacity() == 0 && !SpareBuffers().empty()) {
    plan.sent = std::move(SpareBuffers().back());
    SpareBuffers().pop_back();
  }
  PlanEntities(frame.entities, base_entities, EventBytes(events.n), &plan);
  WriteSnapshot(frame, baseline_id, base_entities, plan, events, &out->bytes);
  out->baseline_id = baseline_id;
  out->entities_fit = plan.sent.size();
  // After the write: the baseline may sit in the slot taken now. The slot's old buffer goes
  // back to the plan for the next call on this thread.
  Held& slot = ring_[frame.snapshot_id % kSnapshotRing];
  slot.id = frame.snapshot_id;
  std::swap(slot.entities, plan.sent);
  slot.events_upto = events_first_seq_ + static_cast<uint32_t>(events.n);
  last_id_ = frame.snapshot_id;
  return Status::OK();
}

void SnapshotEncoder::ForgetOlderThan(uint32_t ack) {
  std::vector<std::vector<EntityState>>& spare = SpareBuffers();
  const uint32_t oldest = ack > kSnapshotRing ? ack - kSnapshotRing : 1;
  for (uint32_t id = std::max(forget_from_, oldest); id < ack; ++id) {
    Held& h = ring_[id % kSnapshotRing];
    if (h.id != id) continue;
    h.id = 0;
    if (spare.size() < kMaxSpareBuffers) spare.push_back(std::move(h.entities));
    h.entities = {};
  }
  forget_from_ = std::max(forget_from_, ack);
}

Status SnapshotEncoder::QueueEvent(const KillEvent& event) {
  if (Status s = Validate(event); !s.ok()) return s;
  if (events_.size() >= kMaxQueuedEvents) {
    events_.pop_front();
    ++events_first_seq_;
    ++events_dropped_;
  }
  events_.push_back(event);
  return Status::OK();
}

// --- decoder ---------------------------------------------------------------------------------

void SnapshotDecoder::Reset() {
  for (Held& h : ring_) h = Held{};
  last_id_ = 0;
  ack_id_ = 0;
  next_event_seq_ = 1;
}

namespace {

struct WireEntry {
  uint16_t mask = 0;
  EntityState fields;  // only the fields named by mask are meaningful for a delta
};

struct WireSnapshot {
  Snapshot header;  // everything but entities
  uint32_t baseline_id = 0;
  std::vector<uint16_t> removed;
  std::vector<WireEntry> entries;
  std::vector<KillEvent> events;  // as carried, numbered from header.first_event_seq
};

// Parses the packet's structure; values are checked by the caller once merged.
Status Parse(std::span<const uint8_t> packet, WireSnapshot* s) {
  if (packet.size() > kMaxSnapshotBytes) {
    return Status::Corruption("Snapshot: packet of " + std::to_string(packet.size()) +
                              " bytes exceeds " + std::to_string(kMaxSnapshotBytes));
  }
  ByteReader r(packet);
  if (r.U8() != static_cast<uint8_t>(MessageType::kSnapshot) || !r.ok()) {
    return Status::Corruption("Snapshot: empty packet or wrong type byte");
  }
  s->header.snapshot_id = r.U32();
  s->baseline_id = r.U32();
  s->header.server_tick = r.U32();
  s->header.last_applied_sequence = r.U32();
  ReadPlayer(r, &s->header.player);
  uint8_t removed_count = r.U8();
  if (removed_count > kMaxSnapshotEntities) return Bad("removed_count over 64");
  for (uint8_t i = 0; i < removed_count; ++i) s->removed.push_back(r.U16());
  uint8_t entry_count = r.U8();
  if (entry_count > kMaxSnapshotEntities) return Bad("entry_count over 64");
  for (uint8_t i = 0; i < entry_count && r.ok(); ++i) {
    WireEntry en;
    en.fields.id = r.U16();
    en.mask = r.U16();
    if (!r.ok()) break;
    bool full = en.mask == (kFieldNew | kAllEntityFields);
    if (!full && (en.mask == 0 || (en.mask & ~kAllEntityFields) != 0)) {
      return Bad("entity " + std::to_string(en.fields.id) + " has field mask " +
                 std::to_string(en.mask));
    }
    ReadFields(r, en.mask, &en.fields);
    s->entries.push_back(en);
  }
  const uint8_t event_count = r.U8();
  if (event_count > kMaxSnapshotEvents) return Bad("event_count over 16");
  if (event_count > 0) {
    s->header.first_event_seq = r.U32();
    if (r.ok() && s->header.first_event_seq == 0) return Bad("first_event_seq is 0");
  }
  for (uint8_t i = 0; i < event_count && r.ok(); ++i) {
    KillEvent ev;
    ev.killer_id = r.U16();
    ev.victim_id = r.U16();
    ev.how = r.U8();
    if (!r.ok()) break;
    if (Status st = Validate(ev); !st.ok()) return st;
    s->events.push_back(ev);
  }
  if (!r.ok()) return Status::Corruption("Snapshot: truncated");
  if (!r.AtEnd()) {
    return Status::Corruption("Snapshot: " + std::to_string(r.remaining()) + " trailing bytes");
  }
  return Status::OK();
}

// Applies removals and entries to the baseline's entities, checking every merge rule. The
// baseline (a previous merge's output), the removals and the entries are all ascending by id
// (the last two checked here), so one linear merge walk yields the result in id order. Only
// entities the packet wrote are validated: one carried over unchanged was valid when its
// baseline was decoded.
Status Merge(const WireSnapshot& s, const std::vector<EntityState>& base,
             std::vector<EntityState>* out) {
  for (size_t i = 1; i < s.removed.size(); ++i) {
    if (s.removed[i] <= s.removed[i - 1]) return Bad("removed ids not strictly ascending");
  }
  for (size_t i = 0; i < s.entries.size(); ++i) {
    const uint16_t id = s.entries[i].fields.id;
    if (id > kMaxEntityId) {
      return Bad("entity id " + std::to_string(id) + " over " + std::to_string(kMaxEntityId));
    }
    if (i > 0 && id <= s.entries[i - 1].fields.id) return Bad("entity ids not strictly ascending");
  }
  auto not_in_base = [](uint16_t id) {
    return Bad("removed id " + std::to_string(id) + " is not in the baseline");
  };
  constexpr uint32_t kEnd = UINT32_MAX;
  size_t b = 0, r = 0, e = 0;
  while (b < base.size() || e < s.entries.size()) {
    const uint32_t bid = b < base.size() ? base[b].id : kEnd;
    const uint32_t eid = e < s.entries.size() ? s.entries[e].fields.id : kEnd;
    // Every baseline id below bid is done, so a removal still pending below it removes nothing.
    if (r < s.removed.size() && s.removed[r] < bid) return not_in_base(s.removed[r]);
    const bool removed = r < s.removed.size() && s.removed[r] == bid;
    if (bid < eid) {  // kept or removed as it was
      if (removed) {
        ++r;
      } else {
        out->push_back(base[b]);
      }
      ++b;
      continue;
    }
    const WireEntry& en = s.entries[e];
    if (bid == eid && removed) {
      return Bad("entity " + std::to_string(eid) + " both removed and sent");
    }
    if (en.mask & kFieldNew) {
      if (Status st = Validate(en.fields); !st.ok()) return st;
      out->push_back(en.fields);
    } else if (bid == eid) {
      EntityState merged = base[b];
      ApplyFields(en.mask, en.fields, &merged);
      if (Status st = Validate(merged); !st.ok()) return st;
      out->push_back(merged);
    } else {
      return Bad("delta for entity " + std::to_string(eid) + " not in baseline");
    }
    if (bid == eid) ++b;
    ++e;
  }
  if (r < s.removed.size()) return not_in_base(s.removed[r]);
  if (out->size() > kMaxSnapshotEntities) return Bad("more than 64 entities");
  return Status::OK();
}

}  // namespace

Status SnapshotDecoder::Decode(std::span<const uint8_t> packet, Snapshot* out) {
  // Scratch reused across calls on this thread: a bot thread decodes tens of thousands of
  // snapshots per second, and in the steady state this path allocates nothing.
  thread_local WireSnapshot s;
  thread_local std::vector<EntityState> merged;
  s.header = Snapshot{};
  s.baseline_id = 0;
  s.removed.clear();
  s.entries.clear();
  s.events.clear();
  if (Status st = Parse(packet, &s); !st.ok()) return st;
  const uint32_t id = s.header.snapshot_id;
  if (id == 0) return Bad("snapshot_id is 0");
  if (id <= last_id_) {
    return Bad("snapshot " + std::to_string(id) + " not newer than " + std::to_string(last_id_));
  }
  if (Status st = Validate(s.header.player); !st.ok()) return st;
  static const std::vector<EntityState> kNoEntities;
  const std::vector<EntityState>* base = &kNoEntities;
  if (s.baseline_id != 0) {
    if (s.baseline_id >= id) return Bad("baseline not older than the snapshot");
    const Held& h = ring_[s.baseline_id % kSnapshotRing];
    if (h.id != s.baseline_id) {
      ack_id_ = 0;
      return Status::NotFound("Snapshot: baseline " + std::to_string(s.baseline_id) +
                              " not held; acking 0 for a full snapshot");
    }
    base = &h.entities;
  }
  merged.clear();
  if (Status st = Merge(s, *base, &merged); !st.ok()) return st;

  // The baseline may sit in the slot this snapshot takes (ids 32 apart), so merge first, then
  // swap into the slot (the slot's old buffer becomes the next merge's scratch); assign()
  // reuses the caller's capacity.
  Held& slot = ring_[id % kSnapshotRing];
  slot.id = id;
  slot.entities.swap(merged);
  last_id_ = id;
  ack_id_ = id;
  std::vector<EntityState> entities = std::move(out->entities);
  std::vector<KillEvent> events = std::move(out->events);
  *out = s.header;
  entities.assign(slot.entities.begin(), slot.entities.end());
  out->entities = std::move(entities);
  // Events carried again since an earlier snapshot delivered them are skipped; a gap (the
  // server dropped events for a client that acknowledged nothing) is passed over.
  const uint32_t first = s.header.first_event_seq;
  const size_t skip = first < next_event_seq_
                          ? std::min<size_t>(s.events.size(), next_event_seq_ - first)
                          : 0;
  events.assign(s.events.begin() + static_cast<std::ptrdiff_t>(skip), s.events.end());
  out->events = std::move(events);
  out->first_event_seq = out->events.empty() ? 0 : first + static_cast<uint32_t>(skip);
  if (!s.events.empty()) {
    next_event_seq_ = std::max(next_event_seq_, first + static_cast<uint32_t>(s.events.size()));
  }
  return Status::OK();
}

}  // namespace proto
