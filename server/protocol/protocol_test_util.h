// Test helpers for the protocol tests: seeded generators of valid messages and snapshots.
// Test-only (not part of as_protocol).
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "server/core/check.h"
#include "server/protocol/messages.h"
#include "server/protocol/snapshot.h"

namespace proto::testing {

using Rng = std::mt19937_64;

inline uint32_t Uniform(Rng& rng, uint32_t lo, uint32_t hi) {
  return std::uniform_int_distribution<uint32_t>(lo, hi)(rng);
}

// A float drawn from a few fixed values (so deltas often see equal fields, -0.0 included) or
// uniformly from [-max_abs, max_abs].
inline float RandomFloat(Rng& rng, float max_abs) {
  static constexpr float kCommon[] = {0.0f, -0.0f, 1.0f, -90.0f, 128.5f};
  if (Uniform(rng, 0, 2) == 0) {
    float v = kCommon[Uniform(rng, 0, 4)];
    return std::clamp(v, -max_abs, max_abs);
  }
  return std::uniform_real_distribution<float>(-max_abs, max_abs)(rng);
}

inline core::Vec3 RandomVec(Rng& rng, float max_abs) {
  return {RandomFloat(rng, max_abs), RandomFloat(rng, max_abs), RandomFloat(rng, max_abs)};
}

inline std::string RandomText(Rng& rng, size_t min_chars, size_t max_chars) {
  std::string s(Uniform(rng, static_cast<uint32_t>(min_chars), static_cast<uint32_t>(max_chars)),
                'a');
  for (char& c : s) c = static_cast<char>(Uniform(rng, 0x21, 0x7E));
  return s;
}

inline std::string RandomName(Rng& rng) {
  std::string s = RandomText(rng, 1, kMaxNameChars);
  for (char& c : s) {
    if (c == '"' || c == '\\') c = 'x';
  }
  return s;
}

inline UserCmd RandomCmd(Rng& rng, uint32_t sequence) {
  UserCmd c;
  c.sequence = sequence;
  c.duration_ms = static_cast<uint8_t>(Uniform(rng, kMinCommandMs, kMaxCommandMs));
  c.view_angles = {RandomFloat(rng, kMaxPitchDeg), RandomFloat(rng, kMaxYawDeg),
                   RandomFloat(rng, kMaxRollDeg)};
  c.forward_move = static_cast<int16_t>(Uniform(rng, 0, 800)) - 400;
  c.side_move = static_cast<int16_t>(Uniform(rng, 0, 800)) - 400;
  c.up_move = static_cast<int16_t>(Uniform(rng, 0, 800)) - 400;
  c.buttons = static_cast<uint8_t>(Uniform(rng, 0, kValidButtons));
  c.impulse = static_cast<uint8_t>(Uniform(rng, 0, kMaxImpulse));
  return c;
}

inline CommandPacket RandomCommandPacket(Rng& rng) {
  CommandPacket p;
  p.ack_snapshot_id = Uniform(rng, 0, UINT32_MAX);
  p.count = static_cast<uint8_t>(Uniform(rng, 1, kMaxCommandsPerPacket));
  uint32_t newest = Uniform(rng, p.count, UINT32_MAX);
  for (uint8_t i = 0; i < p.count; ++i) p.cmds[i] = RandomCmd(rng, newest - i);
  return p;
}

inline PlayerState RandomPlayer(Rng& rng) {
  PlayerState p;
  p.origin = RandomVec(rng, 4096.0f);
  p.velocity = RandomVec(rng, 2000.0f);
  p.view_angles = RandomVec(rng, 90.0f);
  p.health = static_cast<int16_t>(Uniform(rng, 0, 300)) - 100;
  p.armor = static_cast<uint8_t>(Uniform(rng, 0, 200));
  p.weapons = static_cast<uint16_t>(Uniform(rng, 0, kValidWeaponBits));
  p.current_weapon = static_cast<WeaponId>(Uniform(rng, 0, kMaxWeaponId));
  for (uint16_t& a : p.ammo) a = static_cast<uint16_t>(Uniform(rng, 0, 200));
  p.frags = static_cast<int16_t>(Uniform(rng, 0, 100)) - 10;
  p.deaths = static_cast<uint16_t>(Uniform(rng, 0, 100));
  p.flags = static_cast<uint8_t>(Uniform(rng, 0, kValidPlayerFlags));
  return p;
}

inline EntityState RandomEntity(Rng& rng, uint16_t id) {
  EntityState e;
  e.id = id;
  e.type = static_cast<EntityType>(Uniform(rng, 1, kMaxEntityType));
  e.origin = RandomVec(rng, 4096.0f);
  e.angles = RandomVec(rng, 180.0f);
  e.effects = static_cast<uint8_t>(Uniform(rng, 0, kValidEffects));
  e.model = static_cast<uint8_t>(Uniform(rng, 0, 255));
  return e;
}

// Changes a random subset of e's fields (possibly none), keeping its id.
inline void MutateEntity(Rng& rng, EntityState* e) {
  if (Uniform(rng, 0, 9) == 0) e->type = static_cast<EntityType>(Uniform(rng, 1, kMaxEntityType));
  if (Uniform(rng, 0, 1) == 0) e->origin.x = RandomFloat(rng, 4096.0f);
  if (Uniform(rng, 0, 2) == 0) e->origin.y = RandomFloat(rng, 4096.0f);
  if (Uniform(rng, 0, 3) == 0) e->origin.z = RandomFloat(rng, 4096.0f);
  if (Uniform(rng, 0, 3) == 0) e->angles.y = RandomFloat(rng, 180.0f);
  if (Uniform(rng, 0, 5) == 0) e->angles.x = RandomFloat(rng, 90.0f);
  if (Uniform(rng, 0, 7) == 0) e->angles.z = RandomFloat(rng, 90.0f);
  if (Uniform(rng, 0, 5) == 0) e->effects = static_cast<uint8_t>(Uniform(rng, 0, kValidEffects));
  if (Uniform(rng, 0, 7) == 0) e->model = static_cast<uint8_t>(Uniform(rng, 0, 255));
}

inline JoinRequest RandomJoinRequest(Rng& rng) {
  return {static_cast<uint16_t>(Uniform(rng, 0, 65535)), Uniform(rng, 0, UINT32_MAX),
          RandomName(rng), rng()};
}
inline JoinAccept RandomJoinAccept(Rng& rng) {
  return {static_cast<uint16_t>(Uniform(rng, 1, 65535)),
          static_cast<uint16_t>(Uniform(rng, 0, 65534)),
          rng() | 1,
          Uniform(rng, 0, UINT32_MAX),
          static_cast<uint16_t>(Uniform(rng, 1, 1000)),
          Uniform(rng, 0, UINT32_MAX),
          rng()};
}
template <class R>
R RandomRefusal(Rng& rng) {
  R r;
  r.reason = static_cast<RefuseReason>(Uniform(rng, 1, kMaxRefuseReason));
  r.text = RandomText(rng, 0, kMaxReasonChars);
  return r;
}
inline JoinRefuse RandomJoinRefuse(Rng& rng) { return RandomRefusal<JoinRefuse>(rng); }
inline Refuse RandomRefuse(Rng& rng) { return RandomRefusal<Refuse>(rng); }
inline Hello RandomHello(Rng& rng) {
  return {rng() | 1, static_cast<uint16_t>(Uniform(rng, 0, 65534))};
}
inline Welcome RandomWelcome(Rng& rng) {
  return {static_cast<uint16_t>(Uniform(rng, 0, 65534)), Uniform(rng, 0, UINT32_MAX),
          Uniform(rng, 0, UINT32_MAX)};
}
inline ClientChat RandomClientChat(Rng& rng) { return {RandomText(rng, 1, kMaxChatChars)}; }
inline ChatEvent RandomChatEvent(Rng& rng) {
  return {static_cast<uint16_t>(Uniform(rng, 0, 65535)), RandomText(rng, 0, kMaxNameChars),
          RandomText(rng, 1, kMaxChatChars)};
}
inline Kick RandomKick(Rng& rng) {
  return {static_cast<KickReason>(Uniform(rng, 1, kMaxKickReason)),
          RandomText(rng, 0, kMaxReasonChars)};
}

// One message type, seen through bytes: `sample` encodes a random valid message; `reencode`
// decodes a packet and, if that succeeds, encodes the result again.
struct Codec {
  const char* name;
  std::function<std::vector<uint8_t>(Rng&)> sample;
  std::function<core::Status(std::span<const uint8_t>, std::vector<uint8_t>*)> reencode;
};

template <class M>
Codec MakeCodec(const char* name, M (*generate)(Rng&)) {
  return {name,
          [generate](Rng& rng) {
            std::vector<uint8_t> bytes;
            core::Status s = Encode(generate(rng), &bytes);
            AS_CHECK(s.ok(), "generators produce valid messages");
            return bytes;
          },
          [](std::span<const uint8_t> in, std::vector<uint8_t>* out) {
            M m;
            core::Status s = Decode(in, &m);
            if (!s.ok()) return s;
            return Encode(m, out);
          }};
}

inline std::vector<Codec> AllCodecs() {
  return {MakeCodec("JoinRequest", RandomJoinRequest),
          MakeCodec("JoinAccept", RandomJoinAccept),
          MakeCodec("JoinRefuse", RandomJoinRefuse),
          MakeCodec("Hello", RandomHello),
          MakeCodec("Welcome", RandomWelcome),
          MakeCodec("Refuse", RandomRefuse),
          MakeCodec("CommandPacket", RandomCommandPacket),
          MakeCodec("ClientChat", RandomClientChat),
          MakeCodec("ChatEvent", RandomChatEvent),
          MakeCodec("Kick", RandomKick)};
}

}  // namespace proto::testing
