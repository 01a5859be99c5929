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

// Bytes of the fields a mask names, by the mask's field bits (a table: the portable build has no
// popcount instruction, and the encoder and decoder ask once per entity).
constexpr std::array<uint8_t, kAllEntityFields + 1> kFieldBytes = [] {
  std::array<uint8_t, kAllEntityFields + 1> t{};
  for (uint32_t m = 0; m <= kAllEntityFields; ++m) {
    for (uint32_t f = kFieldType; f <= kFieldModel; f <<= 1) {
      if (m & f) t[m] = static_cast<uint8_t>(t[m] + ((f & kFloatFields) ? 4 : 1));
    }
  }
  return t;
}();
size_t FieldBytes(uint16_t mask) { return kFieldBytes[mask & kAllEntityFields]; }

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

// Reads the fields named by mask from p, which holds FieldBytes(mask) bytes (the caller checked),
// over *e, leaving the others as they are.
void ReadFields(const uint8_t* p, uint16_t mask, EntityState* e) {
  const auto f32 = [&p] {
    const uint32_t v = uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
    p += 4;
    return std::bit_cast<float>(v);
  };
  if (mask & kFieldType) e->type = static_cast<EntityType>(*p++);
  if (mask & kFieldOriginX) e->origin.x = f32();
  if (mask & kFieldOriginY) e->origin.y = f32();
  if (mask & kFieldOriginZ) e->origin.z = f32();
  if (mask & kFieldPitch) e->angles.x = f32();
  if (mask & kFieldYaw) e->angles.y = f32();
  if (mask & kFieldRoll) e->angles.z = f32();
  if (mask & kFieldEffects) e->effects = *p++;
  if (mask & kFieldModel) e->model = *p++;
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
// Buffers of snapshots their encoders (or decoders) forgot, for the next snapshots encoded (or
// decoded) on this thread: a client acknowledges every frame, so each encoder and decoder keeps
// about two snapshots instead of kSnapshotRing, and a new snapshot's state goes into memory
// touched a frame or two ago rather than kSnapshotRing frames ago.
constexpr size_t kMaxSpareBuffers = 64;
std::vector<std::vector<EntityState>>& SpareBuffers() {
  thread_local std::vector<std::vector<EntityState>> spare;
  return spare;
}

// Forgets the held snapshots of `ring` numbered from *forget_from up to `below` (exclusive) and
// hands their buffers to this thread's spares; the encoder's and the decoder's rings alike.
template <class HeldT, size_t N>
void ForgetHeld(std::array<HeldT, N>* ring, uint32_t* forget_from, uint32_t below) {
  std::vector<std::vector<EntityState>>& spare = SpareBuffers();
  const uint32_t oldest = below > N ? below - static_cast<uint32_t>(N) : 1;
  for (uint32_t id = std::max(*forget_from, oldest); id < below; ++id) {
    HeldT& h = (*ring)[id % N];
    if (h.id != id) continue;
    h.id = 0;
    if (spare.size() < kMaxSpareBuffers) spare.push_back(std::move(h.entities));
    h.entities = {};
  }
  *forget_from = std::max(*forget_from, below);
}

// Gives *v a spare's buffer if it has none of its own.
void TakeSpare(std::vector<EntityState>* v) {
  std::vector<std::vector<EntityState>>& spare = SpareBuffers();
  if (v->capacity() != 0 || spare.empty()) return;
  *v = std::move(spare.back());
  spare.pop_back();
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
    if (FirstFault(e) != EntityFault::kNone) return Validate(e);
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
  if (base != nullptr) ForgetHeld(&ring_, &forget_from_, base->id);
  TakeSpare(&plan.sent);
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
  forget_from_ = 1;
  ack_id_ = 0;
  next_event_seq_ = 1;
}

namespace {

// An entry as the packet holds it: its fields stay in the packet until the merge reads them.
struct WireEntry {
  uint16_t id = 0;
  uint16_t mask = 0;
  const uint8_t* fields = nullptr;  // FieldBytes(mask) bytes
};

// The packet's structure, pointing into the packet (which outlives it).
struct WireSnapshot {
  Snapshot header;  // everything but entities
  uint32_t baseline_id = 0;
  const uint8_t* removed = nullptr;  // removed_count little-endian ids
  size_t removed_count = 0;
  std::array<WireEntry, kMaxSnapshotEntities> entries;
  size_t entry_count = 0;
  std::vector<KillEvent> events;  // as carried, numbered from header.first_event_seq

  uint16_t removed_id(size_t i) const {
    return static_cast<uint16_t>(removed[2 * i] | removed[2 * i + 1] << 8);
  }
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
  const uint8_t removed_count = r.U8();
  if (removed_count > kMaxSnapshotEntities) return Bad("removed_count over 64");
  s->removed = reinterpret_cast<const uint8_t*>(r.Bytes(2 * size_t{removed_count}).data());
  s->removed_count = r.ok() ? removed_count : 0;
  const uint8_t entry_count = r.U8();
  if (entry_count > kMaxSnapshotEntities) return Bad("entry_count over 64");
  for (uint8_t i = 0; i < entry_count && r.ok(); ++i) {
    WireEntry& en = s->entries[s->entry_count];
    en.id = r.U16();
    en.mask = r.U16();
    if (!r.ok()) break;
    bool full = en.mask == (kFieldNew | kAllEntityFields);
    if (!full && (en.mask == 0 || (en.mask & ~kAllEntityFields) != 0)) {
      return Bad("entity " + std::to_string(en.id) + " has field mask " + std::to_string(en.mask));
    }
    en.fields = reinterpret_cast<const uint8_t*>(r.Bytes(FieldBytes(en.mask)).data());
    if (!r.ok()) break;
    ++s->entry_count;
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
// baseline was decoded. Appends to *out.
Status Merge(const WireSnapshot& s, const std::vector<EntityState>& base,
             std::vector<EntityState>* out) {
  for (size_t i = 1; i < s.removed_count; ++i) {
    if (s.removed_id(i) <= s.removed_id(i - 1)) return Bad("removed ids not strictly ascending");
  }
  for (size_t i = 0; i < s.entry_count; ++i) {
    const uint16_t id = s.entries[i].id;
    if (id > kMaxEntityId) {
      return Bad("entity id " + std::to_string(id) + " over " + std::to_string(kMaxEntityId));
    }
    if (i > 0 && id <= s.entries[i - 1].id) return Bad("entity ids not strictly ascending");
  }
  auto not_in_base = [](uint16_t id) {
    return Bad("removed id " + std::to_string(id) + " is not in the baseline");
  };
  constexpr uint32_t kEnd = UINT32_MAX;
  size_t b = 0, r = 0, e = 0;
  while (b < base.size() || e < s.entry_count) {
    const uint32_t bid = b < base.size() ? base[b].id : kEnd;
    const uint32_t eid = e < s.entry_count ? s.entries[e].id : kEnd;
    // Every baseline id below bid is done, so a removal still pending below it removes nothing.
    const uint32_t rid = r < s.removed_count ? s.removed_id(r) : kEnd;
    if (rid < bid) return not_in_base(static_cast<uint16_t>(rid));
    const bool removed = rid == bid && rid != kEnd;
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
      EntityState fresh;
      fresh.id = en.id;
      ReadFields(en.fields, en.mask, &fresh);
      if (FirstFault(fresh) != EntityFault::kNone) return Validate(fresh);
      out->push_back(fresh);
    } else if (bid == eid) {
      EntityState merged = base[b];
      ReadFields(en.fields, en.mask, &merged);
      if (FirstFault(merged) != EntityFault::kNone) return Validate(merged);
      out->push_back(merged);
    } else {
      return Bad("delta for entity " + std::to_string(eid) + " not in baseline");
    }
    if (bid == eid) ++b;
    ++e;
  }
  if (r < s.removed_count) return not_in_base(s.removed_id(r));
  if (out->size() > kMaxSnapshotEntities) return Bad("more than 64 entities");
  return Status::OK();
}

}  // namespace

Status SnapshotDecoder::Decode(std::span<const uint8_t> packet, Snapshot* out) {
  // Scratch reused across calls on this thread: a bot thread decodes tens of thousands of
  // snapshots per second, and in the steady state this path allocates nothing.
  thread_local WireSnapshot s;
  s.header = Snapshot{};
  s.baseline_id = 0;
  s.removed = nullptr;
  s.removed_count = 0;
  s.entry_count = 0;
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
  // Merged into a scratch buffer, then swapped into the slot (the baseline may sit in the slot
  // this snapshot takes, ids 32 apart); the slot's old buffer is the next merge's scratch.
  thread_local std::vector<EntityState> merged;
  TakeSpare(&merged);
  merged.clear();
  if (Status st = Merge(s, *base, &merged); !st.ok()) return st;
  // The server forgot every snapshot older than this one's baseline when it encoded this one
  // (SnapshotEncoder::Encode), and ids below this one are refused from now on: no later
  // snapshot can name those, so their buffers go to this thread's spares.
  if (s.baseline_id != 0) ForgetHeld(&ring_, &forget_from_, s.baseline_id);
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
