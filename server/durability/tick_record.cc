// TickRecord encoding and validating decoder (layout: docs/recovery.md, "Tick record payload").
#include "server/durability/tick_record.h"

#include <algorithm>
#include <bit>
#include <cstring>

#include "recovery/coding.h"
#include "server/areanode/areanode_tree.h"

namespace durability {

namespace {

using recovery::DecodeFixed32;
using recovery::DecodeFixed64;
using recovery::PutFixed32;
using recovery::PutFixed64;

constexpr uint8_t kFlagWorldPhase = 1;
constexpr uint8_t kFlagLockOrder = 2;  // version 3 on
constexpr uint8_t kOldestReadVersion = 2;
constexpr size_t kLeaveSize = 8;  // player i32, evicted i32
constexpr size_t kJoinFixedSize = 13;  // player u32 | token u64 | name length u8

void PutFixed16(std::string* out, uint16_t v) {
  out->push_back(static_cast<char>(v & 0xff));
  out->push_back(static_cast<char>(v >> 8));
}
uint16_t DecodeFixed16(const char* p) {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  return static_cast<uint16_t>(u[0] | u[1] << 8);
}
void PutFloat(std::string* out, float f) { PutFixed32(out, std::bit_cast<uint32_t>(f)); }
float DecodeFloat(const char* p) { return std::bit_cast<float>(DecodeFixed32(p)); }

// LEB128: 7 bits a byte, low first, the high bit set on every byte but the last.
void PutVarint32(std::string* out, uint32_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

// A forward-only reader over the payload that never reads past its end.
class Reader {
 public:
  explicit Reader(std::string_view data) : data_(data) {}
  size_t left() const { return data_.size() - pos_; }
  size_t pos() const { return pos_; }
  const char* Take(size_t n) {
    const char* p = data_.data() + pos_;
    pos_ += n;
    return p;
  }

 private:
  std::string_view data_;
  size_t pos_ = 0;
};

// False if the bytes end first, or the value takes more than 5 bytes or 32 bits.
bool GetVarint32(Reader* in, uint32_t* v) {
  uint64_t value = 0;
  for (int shift = 0; shift <= 28; shift += 7) {
    if (in->left() == 0) return false;
    const auto byte = static_cast<uint8_t>(*in->Take(1));
    value |= uint64_t{byte & 0x7fu} << shift;
    if ((byte & 0x80) == 0) {
      if (value > UINT32_MAX) return false;
      *v = static_cast<uint32_t>(value);
      return true;
    }
  }
  return false;
}

core::Status Damage(size_t offset, const std::string& what) {
  return core::Status::Corruption("tick record: " + what + " at payload offset " +
                                  std::to_string(offset));
}

bool ValidName(std::string_view name) {
  if (name.empty() || name.size() > static_cast<size_t>(game::kMaxNameLength)) return false;
  for (char c : name) {
    if (c < 0x20 || c > 0x7e) return false;
  }
  return true;
}

core::Status DecodeJoin(Reader* in, TickJoin* j) {
  const size_t at = in->pos();
  if (in->left() < kJoinFixedSize) return Damage(at, "join truncated");
  const char* p = in->Take(kJoinFixedSize);
  j->player = static_cast<game::EntityId>(DecodeFixed32(p));
  j->token = DecodeFixed64(p + 4);
  const uint8_t len = static_cast<uint8_t>(p[12]);
  if (j->player <= 0) return Damage(at, "join with player id " + std::to_string(j->player));
  if (in->left() < len) return Damage(at, "join name truncated");
  j->name.assign(in->Take(len), len);
  if (!ValidName(j->name)) return Damage(at, "join name is not 1..31 printable characters");
  return core::Status::OK();
}

void DecodeCommand(const char* p, TickCommand* c) {
  c->exec_seq = DecodeFixed64(p);
  c->player = static_cast<game::EntityId>(DecodeFixed32(p + 8));
  game::UserCmd& u = c->cmd;
  u.sequence = DecodeFixed32(p + 12);
  u.duration_ms = DecodeFixed16(p + 16);
  u.view_angles = core::Vec3{DecodeFloat(p + 18), DecodeFloat(p + 22), DecodeFloat(p + 26)};
  u.forward_move = static_cast<int16_t>(DecodeFixed16(p + 30));
  u.side_move = static_cast<int16_t>(DecodeFixed16(p + 32));
  u.up_move = static_cast<int16_t>(DecodeFixed16(p + 34));
  u.buttons = static_cast<uint8_t>(p[36]);
  u.impulse = static_cast<uint8_t>(p[37]);
}

}  // namespace

void TickRecord::Clear() {
  leaves.clear();
  joins.clear();
  world_phase_ran = false;
  world_tick = 0;
  commands.clear();
  lock_order = false;
  lock_depth = 0;
  after.clear();
}

void EncodeTickRecord(const TickRecord& r, std::string* out) {
  out->clear();
  out->push_back(static_cast<char>(kTickRecordVersion));
  out->push_back(static_cast<char>((r.world_phase_ran ? kFlagWorldPhase : 0) |
                                   (r.lock_order ? kFlagLockOrder : 0)));
  out->push_back(static_cast<char>(r.lock_order ? r.lock_depth : 0));
  out->push_back(0);  // reserved
  PutFixed32(out, static_cast<uint32_t>(r.world_tick));
  PutFixed32(out, static_cast<uint32_t>(r.leaves.size()));
  PutFixed32(out, static_cast<uint32_t>(r.joins.size()));
  PutFixed32(out, static_cast<uint32_t>(r.commands.size()));
  for (const TickLeave& l : r.leaves) {
    PutFixed32(out, static_cast<uint32_t>(l.player));
    PutFixed32(out, static_cast<uint32_t>(l.evicted));
  }
  for (const TickJoin& j : r.joins) {
    PutFixed32(out, static_cast<uint32_t>(j.player));
    PutFixed64(out, j.token);
    const size_t len = std::min(j.name.size(), size_t{255});
    out->push_back(static_cast<char>(len));
    out->append(j.name.data(), len);
  }
  for (const TickCommand& c : r.commands) {
    PutFixed64(out, c.exec_seq);
    PutFixed32(out, static_cast<uint32_t>(c.player));
    const game::UserCmd& u = c.cmd;
    PutFixed32(out, u.sequence);
    PutFixed16(out, u.duration_ms);
    PutFloat(out, u.view_angles.x);
    PutFloat(out, u.view_angles.y);
    PutFloat(out, u.view_angles.z);
    PutFixed16(out, static_cast<uint16_t>(u.forward_move));
    PutFixed16(out, static_cast<uint16_t>(u.side_move));
    PutFixed16(out, static_cast<uint16_t>(u.up_move));
    out->push_back(static_cast<char>(u.buttons));
    out->push_back(static_cast<char>(u.impulse));
  }
  if (!r.lock_order) return;
  for (size_t j = 0; j < r.commands.size(); ++j) {
    const TickCommand& c = r.commands[j];
    PutVarint32(out, c.after_count);
    for (uint32_t k = 0; k < c.after_count; ++k) {
      PutVarint32(out, static_cast<uint32_t>(j) - r.after[c.first_after + k]);  // distance back
    }
  }
}

namespace {

// The lock-order section: per command its count of earlier commands, then each as its distance
// back, strictly decreasing (indices strictly ascending), each at least 1 and at most the
// command's own index: a wait only ever on an earlier command, so replay cannot deadlock.
core::Status DecodeLockOrder(Reader* in, TickRecord* r) {
  for (size_t j = 0; j < r->commands.size(); ++j) {
    TickCommand& c = r->commands[j];
    const size_t at = in->pos();
    uint32_t count = 0;
    if (!GetVarint32(in, &count)) return Damage(at, "lock order truncated or overlong");
    if (count > j || count > in->left()) {
      return Damage(at, "command " + std::to_string(j) + " comes after " + std::to_string(count) +
                            " commands");
    }
    c.after_count = count;
    c.first_after = static_cast<uint32_t>(r->after.size());
    uint64_t last = j + 1;
    for (uint32_t k = 0; k < count; ++k) {
      const size_t dat = in->pos();
      uint32_t distance = 0;
      if (!GetVarint32(in, &distance)) return Damage(dat, "lock order truncated or overlong");
      if (distance == 0 || distance > j || distance >= last) {
        return Damage(dat, "command " + std::to_string(j) + " after the command " +
                               std::to_string(distance) + " back");
      }
      last = distance;
      r->after.push_back(static_cast<uint32_t>(j - distance));
    }
  }
  return core::Status::OK();
}

}  // namespace

core::Status DecodeTickRecord(std::string_view payload, TickRecord* r) {
  r->Clear();
  Reader in(payload);
  if (in.left() < kTickRecordHeaderSize) {
    return Damage(0, "payload of " + std::to_string(payload.size()) +
                         " bytes is shorter than its header");
  }
  const char* h = in.Take(kTickRecordHeaderSize);
  const uint8_t version = static_cast<uint8_t>(h[0]);
  if (version < kOldestReadVersion || version > kTickRecordVersion) {
    return Damage(0, "unknown version " + std::to_string(version));
  }
  const uint8_t flags = static_cast<uint8_t>(h[1]);
  const uint8_t known = version >= 3 ? (kFlagWorldPhase | kFlagLockOrder) : kFlagWorldPhase;
  // Version 4 names the lock order's depth in byte 2; before it bytes 2-3 were reserved, 0.
  const uint8_t lock_depth = version >= 4 ? static_cast<uint8_t>(h[2]) : 0;
  if ((flags & ~known) != 0 || static_cast<uint8_t>(h[3]) != 0 || (version < 4 && h[2] != 0)) {
    return Damage(1, "unknown flags or non-zero reserved bytes");
  }
  r->world_phase_ran = (flags & kFlagWorldPhase) != 0;
  r->lock_order = (flags & kFlagLockOrder) != 0;
  if (r->lock_order ? lock_depth > areanode::kMaxDepth : lock_depth != 0) {
    return Damage(2, "lock order depth " + std::to_string(lock_depth) +
                         (r->lock_order ? " is deeper than any tree" : " without a lock order"));
  }
  r->lock_depth = r->lock_order && version < 4 ? kLockDepthUnknown : lock_depth;
  r->world_tick = static_cast<int32_t>(DecodeFixed32(h + 4));
  if (r->world_tick < 0) return Damage(4, "negative world tick");
  const uint64_t leaves = DecodeFixed32(h + 8);
  const uint64_t joins = DecodeFixed32(h + 12);
  const uint64_t commands = DecodeFixed32(h + 16);
  // Every count is checked against the bytes left before anything is allocated for it.
  if (leaves * kLeaveSize + joins * kJoinFixedSize + commands * kTickCommandSize > in.left()) {
    return Damage(8, "counts (" + std::to_string(leaves) + " leaves, " + std::to_string(joins) +
                         " joins, " + std::to_string(commands) + " commands) exceed the " +
                         std::to_string(in.left()) + " bytes that follow");
  }
  r->leaves.resize(leaves);
  for (uint64_t i = 0; i < leaves; ++i) {
    const size_t at = in.pos();
    const char* l = in.Take(kLeaveSize);
    r->leaves[i].player = static_cast<game::EntityId>(DecodeFixed32(l));
    r->leaves[i].evicted = static_cast<game::EntityId>(DecodeFixed32(l + 4));
    if (r->leaves[i].player <= 0) {
      return Damage(at, "leave of player id " + std::to_string(r->leaves[i].player));
    }
    if (r->leaves[i].evicted < 0) {
      return Damage(at + 4, "eviction of object id " + std::to_string(r->leaves[i].evicted));
    }
  }
  r->joins.resize(joins);
  for (uint64_t i = 0; i < joins; ++i) {
    core::Status s = DecodeJoin(&in, &r->joins[i]);
    if (!s.ok()) return s;
  }
  // Without the lock order exactly the commands follow; with it, at least a byte more each.
  const uint64_t need = commands * (kTickCommandSize + (r->lock_order ? 1 : 0));
  if (r->lock_order ? in.left() < need : in.left() != need) {
    return Damage(in.pos(), std::to_string(in.left()) + " bytes left for " +
                                std::to_string(commands) + " commands of " +
                                std::to_string(kTickCommandSize) + " bytes" +
                                (r->lock_order ? " and their lock order" : ""));
  }
  r->commands.resize(commands);
  for (uint64_t i = 0; i < commands; ++i) {
    const size_t at = in.pos();
    TickCommand& c = r->commands[i];
    DecodeCommand(in.Take(kTickCommandSize), &c);
    if (c.player <= 0) return Damage(at, "command of player id " + std::to_string(c.player));
    if (i > 0 && c.exec_seq <= r->commands[i - 1].exec_seq) {
      return Damage(at, "execution sequence " + std::to_string(c.exec_seq) +
                            " does not follow " + std::to_string(r->commands[i - 1].exec_seq));
    }
  }
  if (r->lock_order) {
    core::Status s = DecodeLockOrder(&in, r);
    if (!s.ok()) return s;
    if (in.left() != 0) return Damage(in.pos(), std::to_string(in.left()) + " bytes after the lock order");
  }
  return core::Status::OK();
}

}  // namespace durability
