// Tests for the Snapshot delta codec: random delta sequences equal the full state, the packet
// budget holds with hundreds of entities offered, and malformed snapshots are rejected.
#include "server/protocol/snapshot_codec.h"

#include <catch2/catch.hpp>
#include <cstring>
#include <limits>
#include <map>

#include "server/protocol/protocol_test_util.h"

namespace proto {
namespace {

using testing::Rng;
using testing::Uniform;

constexpr size_t kHeaderAndPlayerBytes = 17 + 55 + 3;  // documented in docs/protocol.md
constexpr size_t kFullEntryBytes = 31;

std::vector<EntityState> SortedPrefix(const std::vector<EntityState>& offered, size_t n) {
  std::vector<EntityState> v(offered.begin(), offered.begin() + static_cast<long>(n));
  std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  return v;
}

Snapshot Frame(uint32_t id, std::vector<EntityState> entities, Rng& rng) {
  Snapshot f;
  f.snapshot_id = id;
  f.server_tick = id * 2;
  f.last_applied_sequence = id + 1000;
  f.player = testing::RandomPlayer(rng);
  f.entities = std::move(entities);
  return f;
}

// The simulated world: entities appear, disappear and change between frames.
void StepWorld(Rng& rng, std::map<uint16_t, EntityState>* live) {
  for (auto it = live->begin(); it != live->end();) {
    if (Uniform(rng, 0, 9) == 0) {
      it = live->erase(it);
      continue;
    }
    if (Uniform(rng, 0, 2) == 0) testing::MutateEntity(rng, &it->second);
    ++it;
  }
  uint32_t births = Uniform(rng, 0, 8);
  for (uint32_t i = 0; i < births; ++i) {
    uint16_t id = static_cast<uint16_t>(Uniform(rng, 0, 150));  // small pool: ids get reused
    (*live)[id] = testing::RandomEntity(rng, id);
  }
}

TEST_CASE("random delta sequences decode to the full state", "[snapshot]") {
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    Rng rng(seed);
    SnapshotEncoder encoder;
    SnapshotDecoder decoder;
    std::map<uint16_t, EntityState> live;
    std::vector<uint32_t> decoded_ids;
    uint32_t id = 0;
    int deltas = 0;
    for (int step = 0; step < 400; ++step) {
      StepWorld(rng, &live);
      std::vector<EntityState> offered;
      for (const auto& [eid, e] : live) offered.push_back(e);
      std::shuffle(offered.begin(), offered.end(), rng);
      id += Uniform(rng, 1, 3);
      Snapshot frame = Frame(id, offered, rng);

      // Ack the newest decoded snapshot, an older decoded one, or nothing.
      uint32_t ack = decoder.ack_id();
      uint32_t pick = Uniform(rng, 0, 9);
      if (pick == 0) ack = 0;
      if (pick >= 7 && !decoded_ids.empty()) {
        size_t back =
            Uniform(rng, 0, static_cast<uint32_t>(std::min<size_t>(40, decoded_ids.size()) - 1));
        ack = decoded_ids[decoded_ids.size() - 1 - back];
      }
      EncodedSnapshot enc;
      core::Status s = encoder.Encode(frame, ack, &enc);
      REQUIRE(s.ok());
      REQUIRE(enc.bytes.size() <= kMaxSnapshotBytes);
      REQUIRE(enc.entities_fit <= kMaxSnapshotEntities);
      if (enc.baseline_id != 0) {
        ++deltas;
        REQUIRE(enc.baseline_id == ack);
      }
      if (Uniform(rng, 0, 4) == 0) continue;  // lost on the way

      Snapshot got;
      s = decoder.Decode(enc.bytes, &got);
      INFO("seed " << seed << " step " << step << ": " << s.ToString());
      REQUIRE(s.ok());
      decoded_ids.push_back(id);
      CHECK(decoder.ack_id() == id);
      CHECK(got.snapshot_id == frame.snapshot_id);
      CHECK(got.server_tick == frame.server_tick);
      CHECK(got.last_applied_sequence == frame.last_applied_sequence);
      CHECK(got.player == frame.player);
      REQUIRE(got.entities == SortedPrefix(offered, enc.entities_fit));
    }
    CHECK(deltas > 100);
  }
}

TEST_CASE("deltas preserve float bit patterns such as -0.0", "[snapshot]") {
  Rng rng(3);
  SnapshotEncoder encoder;
  SnapshotDecoder decoder;
  EntityState e = testing::RandomEntity(rng, 5);
  e.origin.x = 0.0f;
  EncodedSnapshot enc;
  Snapshot got;
  REQUIRE(encoder.Encode(Frame(1, {e}, rng), 0, &enc).ok());
  REQUIRE(decoder.Decode(enc.bytes, &got).ok());
  e.origin.x = -0.0f;
  REQUIRE(encoder.Encode(Frame(2, {e}, rng), decoder.ack_id(), &enc).ok());
  REQUIRE(enc.baseline_id == 1);
  REQUIRE(decoder.Decode(enc.bytes, &got).ok());
  CHECK(std::signbit(got.entities[0].origin.x));
}

TEST_CASE("an unchanged entity in the baseline costs no bytes", "[snapshot]") {
  Rng rng(4);
  std::vector<EntityState> ents;
  for (uint16_t i = 0; i < 10; ++i) ents.push_back(testing::RandomEntity(rng, i));
  SnapshotEncoder encoder;
  EncodedSnapshot full, delta;
  Snapshot f1 = Frame(1, ents, rng);
  REQUIRE(encoder.Encode(f1, 0, &full).ok());
  CHECK(full.bytes.size() == kHeaderAndPlayerBytes + 10 * kFullEntryBytes);
  Snapshot f2 = f1;
  f2.snapshot_id = 2;
  REQUIRE(encoder.Encode(f2, 1, &delta).ok());
  CHECK(delta.bytes.size() == kHeaderAndPlayerBytes);
  CHECK(delta.entities_fit == 10);
}

TEST_CASE("the packet budget holds with 500 entities offered", "[snapshot]") {
  Rng rng(5);
  std::vector<EntityState> offered;
  for (uint16_t i = 0; i < 500; ++i) offered.push_back(testing::RandomEntity(rng, i));
  SnapshotEncoder encoder;
  SnapshotDecoder decoder;
  EncodedSnapshot enc;
  Snapshot got;

  // Full: as many 31-byte entries as fit after the 75-byte header.
  REQUIRE(encoder.Encode(Frame(1, offered, rng), 0, &enc).ok());
  CHECK(enc.entities_fit == (kMaxSnapshotBytes - kHeaderAndPlayerBytes) / kFullEntryBytes);
  CHECK(enc.bytes.size() <= kMaxSnapshotBytes);
  REQUIRE(decoder.Decode(enc.bytes, &got).ok());
  CHECK(got.entities == SortedPrefix(offered, enc.entities_fit));

  // Delta with the same offer: the held ones are free, so the 64-entity cap binds.
  REQUIRE(encoder.Encode(Frame(2, offered, rng), decoder.ack_id(), &enc).ok());
  CHECK(enc.entities_fit == kMaxSnapshotEntities);
  CHECK(enc.bytes.size() <= kMaxSnapshotBytes);
  REQUIRE(decoder.Decode(enc.bytes, &got).ok());
  CHECK(got.entities == SortedPrefix(offered, enc.entities_fit));

  // Reversed offer: everything new first, so 64 removals must stay reserved.
  std::vector<EntityState> reversed(offered.rbegin(), offered.rend());
  REQUIRE(encoder.Encode(Frame(3, reversed, rng), decoder.ack_id(), &enc).ok());
  CHECK(enc.entities_fit ==
        (kMaxSnapshotBytes - kHeaderAndPlayerBytes - 2 * kMaxSnapshotEntities) / kFullEntryBytes);
  CHECK(enc.bytes.size() <= kMaxSnapshotBytes);
  REQUIRE(decoder.Decode(enc.bytes, &got).ok());
  CHECK(got.entities == SortedPrefix(reversed, enc.entities_fit));

  // Everything changing every frame never breaks the budget either.
  for (uint32_t id = 4; id < 60; ++id) {
    for (EntityState& e : offered) e = testing::RandomEntity(rng, e.id);
    std::shuffle(offered.begin(), offered.end(), rng);
    REQUIRE(encoder.Encode(Frame(id, offered, rng), decoder.ack_id(), &enc).ok());
    REQUIRE(enc.bytes.size() <= kMaxSnapshotBytes);
    REQUIRE(decoder.Decode(enc.bytes, &got).ok());
    REQUIRE(got.entities == SortedPrefix(offered, enc.entities_fit));
  }
}

TEST_CASE("a missing baseline makes the client ack 0 and get a full snapshot", "[snapshot]") {
  Rng rng(6);
  std::vector<EntityState> ents = {testing::RandomEntity(rng, 1), testing::RandomEntity(rng, 2)};
  SnapshotEncoder encoder;
  SnapshotDecoder decoder, late_decoder;
  EncodedSnapshot enc;
  Snapshot got;
  REQUIRE(encoder.Encode(Frame(1, ents, rng), 0, &enc).ok());
  REQUIRE(decoder.Decode(enc.bytes, &got).ok());
  REQUIRE(encoder.Encode(Frame(2, ents, rng), 1, &enc).ok());
  REQUIRE(enc.baseline_id == 1);
  core::Status s = late_decoder.Decode(enc.bytes, &got);  // never saw snapshot 1
  CHECK(s.code() == core::Status::Code::kNotFound);
  CHECK(late_decoder.ack_id() == 0);
  REQUIRE(encoder.Encode(Frame(3, ents, rng), late_decoder.ack_id(), &enc).ok());
  CHECK(enc.baseline_id == 0);
  REQUIRE(late_decoder.Decode(enc.bytes, &got).ok());
  CHECK(got.entities == SortedPrefix(ents, 2));
}

TEST_CASE("acks the server does not hold give full snapshots", "[snapshot]") {
  Rng rng(7);
  SnapshotEncoder encoder;
  EncodedSnapshot enc;
  std::vector<EntityState> ents = {testing::RandomEntity(rng, 9)};
  for (uint32_t id = 1; id <= 40; ++id) REQUIRE(encoder.Encode(Frame(id, ents, rng), 0, &enc).ok());
  REQUIRE(encoder.Encode(Frame(41, ents, rng), 5, &enc).ok());  // overwritten by 37
  CHECK(enc.baseline_id == 0);
  REQUIRE(encoder.Encode(Frame(42, ents, rng), 999, &enc).ok());  // never sent
  CHECK(enc.baseline_id == 0);
  REQUIRE(encoder.Encode(Frame(43, ents, rng), 42, &enc).ok());
  CHECK(enc.baseline_id == 42);
  encoder.Reset();
  REQUIRE(encoder.Encode(Frame(44, ents, rng), 43, &enc).ok());
  CHECK(enc.baseline_id == 0);
}

TEST_CASE("the encoder refuses invalid frames", "[snapshot][validation]") {
  Rng rng(8);
  SnapshotEncoder encoder;
  EncodedSnapshot enc;
  EntityState e = testing::RandomEntity(rng, 3);
  CHECK_FALSE(encoder.Encode(Frame(0, {e}, rng), 0, &enc).ok());
  CHECK_FALSE(encoder.Encode(Frame(1, {e, e}, rng), 0, &enc).ok());  // duplicate id
  EntityState nan = e;
  nan.origin.y = std::numeric_limits<float>::quiet_NaN();
  CHECK_FALSE(encoder.Encode(Frame(1, {nan}, rng), 0, &enc).ok());
  EntityState big = e;
  big.id = kMaxEntityId + 1;
  CHECK_FALSE(encoder.Encode(Frame(1, {big}, rng), 0, &enc).ok());
  Snapshot bad_player = Frame(1, {e}, rng);
  bad_player.player.flags = 0x80;
  CHECK_FALSE(encoder.Encode(bad_player, 0, &enc).ok());
  REQUIRE(encoder.Encode(Frame(5, {e}, rng), 0, &enc).ok());
  CHECK_FALSE(encoder.Encode(Frame(5, {e}, rng), 0, &enc).ok());  // not increasing
}

// --- malformed packets ---------------------------------------------------------------------

constexpr size_t kPlayerAt = 17;
constexpr size_t kEntriesAt = 74;  // first entry of a snapshot with no removals

std::vector<uint8_t> TwoEntityFull(Rng& rng) {
  SnapshotEncoder encoder;
  EncodedSnapshot enc;
  REQUIRE(
      encoder
          .Encode(Frame(10, {testing::RandomEntity(rng, 4), testing::RandomEntity(rng, 8)}, rng), 0,
                  &enc)
          .ok());
  return enc.bytes;
}

core::Status DecodeFresh(const std::vector<uint8_t>& bytes) {
  SnapshotDecoder decoder;
  Snapshot got;
  return decoder.Decode(bytes, &got);
}

void PutU16(std::vector<uint8_t>& b, size_t at, uint16_t v) {
  b[at] = static_cast<uint8_t>(v);
  b[at + 1] = static_cast<uint8_t>(v >> 8);
}

TEST_CASE("malformed snapshots are rejected", "[snapshot][validation]") {
  Rng rng(9);
  const std::vector<uint8_t> good = TwoEntityFull(rng);
  REQUIRE(DecodeFresh(good).ok());
  for (size_t n = 0; n < good.size(); ++n) {
    REQUIRE_FALSE(
        DecodeFresh(std::vector<uint8_t>(good.begin(), good.begin() + static_cast<long>(n))).ok());
  }
  auto patched = [&](auto patch) {
    std::vector<uint8_t> b = good;
    patch(b);
    return DecodeFresh(b);
  };
  CHECK_FALSE(patched([](auto& b) { b.push_back(0); }).ok());
  CHECK_FALSE(patched([](auto& b) { b.resize(kMaxSnapshotBytes + 1); }).ok());
  CHECK_FALSE(patched([](auto& b) { b[0] = 0x84; }).ok());
  CHECK_FALSE(patched([](auto& b) { b[1] = b[2] = b[3] = b[4] = 0; }).ok());  // id 0
  CHECK_FALSE(patched([](auto& b) {
                PutU16(b, kPlayerAt, 0x0000);
                PutU16(b, kPlayerAt + 2, 0x7FC0);
              }).ok());  // NaN
  CHECK_FALSE(
      patched([](auto& b) { b[kPlayerAt + 36 + 5] = kMaxWeaponId + 1; }).ok());  // current weapon
  CHECK_FALSE(patched([](auto& b) {
                PutU16(b, kEntriesAt + 2, 0x0200 | kFieldNew | kAllEntityFields);
              }).ok());
  CHECK_FALSE(patched([](auto& b) {
                PutU16(b, kEntriesAt + 2, kFieldOriginX);
              }).ok());                                               // delta, no baseline
  CHECK_FALSE(patched([](auto& b) { b[kEntriesAt + 4] = 0; }).ok());  // entity type 0
  CHECK_FALSE(patched([](auto& b) { b[kEntriesAt + 4] = kMaxEntityType + 1; }).ok());
  CHECK_FALSE(patched([](auto& b) { b[kEntriesAt + 4 + 25] = 0x80; }).ok());  // effects bits
  CHECK_FALSE(patched([](auto& b) { PutU16(b, kEntriesAt, kMaxEntityId + 1); }).ok());
  CHECK_FALSE(patched([](auto& b) { PutU16(b, kEntriesAt, 8); }).ok());  // ids not ascending
  CHECK_FALSE(patched([](auto& b) { b[kEntriesAt - 1] = 65; }).ok());    // entry count > 64
  {  // a removal in a full snapshot (no baseline): one removal of id 99, the packet otherwise
     // intact, so only that rule can refuse it
    const core::Status st = patched([](auto& b) {
      b[kEntriesAt - 2] = 1;
      const uint8_t id99[2] = {99, 0};
      b.insert(b.begin() + (kEntriesAt - 1), id99, id99 + 2);
    });
    CHECK_FALSE(st.ok());
    CHECK(st.message().find("removed id 99 is not in the baseline") != std::string::npos);
  }
  CHECK_FALSE(patched([](auto& b) { b[5] = 10; }).ok());                 // baseline == id
  // Decoding the same snapshot twice: the second is stale.
  SnapshotDecoder decoder;
  Snapshot got;
  REQUIRE(decoder.Decode(good, &got).ok());
  CHECK_FALSE(decoder.Decode(good, &got).ok());
  CHECK(decoder.ack_id() == 10);
}

TEST_CASE("a delta that removes and resends the same entity is rejected",
          "[snapshot][validation]") {
  Rng rng(10);
  SnapshotEncoder encoder;
  SnapshotDecoder decoder;
  EncodedSnapshot enc;
  Snapshot got;
  EntityState a = testing::RandomEntity(rng, 4), b = testing::RandomEntity(rng, 8);
  REQUIRE(encoder.Encode(Frame(1, {a, b}, rng), 0, &enc).ok());
  REQUIRE(decoder.Decode(enc.bytes, &got).ok());
  EntityState a2 = a;
  a2.origin.x += 1.0f;
  REQUIRE(encoder.Encode(Frame(2, {a2}, rng), 1, &enc).ok());  // removes 8, deltas 4
  std::vector<uint8_t> bytes = enc.bytes;
  REQUIRE(bytes[kEntriesAt - 2] == 1);  // removed_count
  PutU16(bytes, kEntriesAt - 1, 4);     // the removal now names 4, which is also sent
  SnapshotDecoder copy = decoder;
  CHECK_FALSE(copy.Decode(bytes, &got).ok());
  REQUIRE(decoder.Decode(enc.bytes, &got).ok());
  CHECK(got.entities == std::vector<EntityState>{a2});
}

KillEvent Frag(uint16_t killer, uint16_t victim) {
  return {killer, victim, static_cast<uint8_t>(WeaponId::kRocketLauncher)};
}

TEST_CASE("kill events ride in snapshots until one that carried them is acknowledged",
          "[snapshot][events]") {
  Rng rng(21);
  SnapshotEncoder encoder;
  SnapshotDecoder decoder;
  EncodedSnapshot enc;
  Snapshot got;
  REQUIRE(encoder.QueueEvent(Frag(1, 2)).ok());
  REQUIRE(encoder.QueueEvent({kNoPlayer, 3, static_cast<uint8_t>(DeathCause::kLava)}).ok());
  REQUIRE(encoder.Encode(Frame(1, {}, rng), 0, &enc).ok());
  REQUIRE(decoder.Decode(enc.bytes, &got).ok());
  CHECK(got.first_event_seq == 1);
  CHECK(got.events == std::vector<KillEvent>{Frag(1, 2), {kNoPlayer, 3, static_cast<uint8_t>(DeathCause::kLava)}});

  // Not acknowledged yet (the client's ack is still 0): carried again, decoded once.
  REQUIRE(encoder.QueueEvent(Frag(4, 5)).ok());
  REQUIRE(encoder.Encode(Frame(2, {}, rng), 0, &enc).ok());
  REQUIRE(decoder.Decode(enc.bytes, &got).ok());
  CHECK(got.events == std::vector<KillEvent>{Frag(4, 5)});
  CHECK(got.first_event_seq == 3);
  CHECK(encoder.events_queued() == 3);

  // Snapshot 1 acknowledged: its two events leave the queue, the third stays.
  REQUIRE(encoder.Encode(Frame(3, {}, rng), 1, &enc).ok());
  CHECK(encoder.events_queued() == 1);
  REQUIRE(decoder.Decode(enc.bytes, &got).ok());
  CHECK(got.events.empty());
  CHECK(got.first_event_seq == 0);

  // Snapshot 3 acknowledged: nothing left, and an empty event list costs one byte.
  REQUIRE(encoder.Encode(Frame(4, {}, rng), decoder.ack_id(), &enc).ok());
  CHECK(encoder.events_queued() == 0);
  CHECK(enc.bytes.size() == kHeaderAndPlayerBytes);
  REQUIRE(decoder.Decode(enc.bytes, &got).ok());
  CHECK(got.events.empty());
}

TEST_CASE("a lost snapshot loses no kill event, and none comes out twice", "[snapshot][events]") {
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    Rng rng(seed);
    SnapshotEncoder encoder;
    SnapshotDecoder decoder;
    EncodedSnapshot enc;
    Snapshot got;
    std::vector<KillEvent> sent, delivered;
    std::vector<uint32_t> acks_in_flight;  // the client's acks, delayed by the network
    for (uint32_t id = 1; id <= 600; ++id) {
      for (uint32_t k = Uniform(rng, 0, 3); k > 0; --k) {  // bursts of up to 3 a frame
        const KillEvent e = Frag(static_cast<uint16_t>(Uniform(rng, 0, 100)),
                                 static_cast<uint16_t>(Uniform(rng, 0, 100)));
        REQUIRE(encoder.QueueEvent(e).ok());
        sent.push_back(e);
      }
      // The ack the server holds is one the client sent 0-3 frames ago.
      acks_in_flight.push_back(decoder.ack_id());
      const size_t delay = std::min<size_t>(acks_in_flight.size() - 1, Uniform(rng, 0, 3));
      const uint32_t ack = acks_in_flight[acks_in_flight.size() - 1 - delay];
      REQUIRE(encoder.Encode(Frame(id, {}, rng), ack, &enc).ok());
      if (Uniform(rng, 0, 3) == 0) continue;  // a quarter of the snapshots are lost
      REQUIRE(decoder.Decode(enc.bytes, &got).ok());
      delivered.insert(delivered.end(), got.events.begin(), got.events.end());
    }
    // Drain: snapshots with the newest ack until the queue is empty.
    for (uint32_t id = 601; encoder.events_queued() > 0 && id < 700; ++id) {
      REQUIRE(encoder.Encode(Frame(id, {}, rng), decoder.ack_id(), &enc).ok());
      REQUIRE(decoder.Decode(enc.bytes, &got).ok());
      delivered.insert(delivered.end(), got.events.begin(), got.events.end());
    }
    CHECK(encoder.events_dropped() == 0);
    REQUIRE(delivered.size() == sent.size());
    CHECK(delivered == sent);
  }
}

TEST_CASE("a snapshot carries at most 16 kill events, oldest first, within the byte budget",
          "[snapshot][events]") {
  Rng rng(22);
  SnapshotEncoder encoder;
  SnapshotDecoder decoder;
  EncodedSnapshot enc;
  Snapshot got;
  for (uint16_t i = 0; i < 20; ++i) REQUIRE(encoder.QueueEvent(Frag(i, 100)).ok());
  std::vector<EntityState> offered;
  for (uint16_t i = 0; i < 200; ++i) offered.push_back(testing::RandomEntity(rng, i));
  REQUIRE(encoder.Encode(Frame(1, offered, rng), 0, &enc).ok());
  CHECK(enc.bytes.size() <= kMaxSnapshotBytes);
  const size_t event_bytes = 4 + 5 * kMaxSnapshotEvents;
  CHECK(enc.entities_fit ==
        (kMaxSnapshotBytes - kHeaderAndPlayerBytes - event_bytes) / kFullEntryBytes);
  REQUIRE(decoder.Decode(enc.bytes, &got).ok());
  REQUIRE(got.events.size() == kMaxSnapshotEvents);
  CHECK(got.events.front() == Frag(0, 100));
  CHECK(got.entities == SortedPrefix(offered, enc.entities_fit));
  REQUIRE(encoder.Encode(Frame(2, {}, rng), decoder.ack_id(), &enc).ok());
  REQUIRE(decoder.Decode(enc.bytes, &got).ok());
  CHECK(got.first_event_seq == 17);
  REQUIRE(got.events.size() == 4);
  CHECK(got.events.back() == Frag(19, 100));
}

TEST_CASE("a client that acknowledges nothing holds at most 256 kill events",
          "[snapshot][events]") {
  Rng rng(23);
  SnapshotEncoder encoder;
  for (uint16_t i = 0; i < 300; ++i) REQUIRE(encoder.QueueEvent(Frag(i, 7)).ok());
  CHECK(encoder.events_queued() == kMaxQueuedEvents);
  CHECK(encoder.events_dropped() == 300 - kMaxQueuedEvents);
  EncodedSnapshot enc;
  Snapshot got;
  SnapshotDecoder decoder;
  REQUIRE(encoder.Encode(Frame(1, {}, rng), 0, &enc).ok());
  REQUIRE(decoder.Decode(enc.bytes, &got).ok());
  CHECK(got.first_event_seq == 300 - kMaxQueuedEvents + 1);  // the oldest 44 were dropped
  CHECK(got.events.front() == Frag(44, 7));
  // A reconnect starts the numbering again on both sides.
  encoder.Reset();
  decoder.Reset();
  REQUIRE(encoder.QueueEvent(Frag(1, 2)).ok());
  REQUIRE(encoder.Encode(Frame(1, {}, rng), 0, &enc).ok());
  REQUIRE(decoder.Decode(enc.bytes, &got).ok());
  CHECK(got.first_event_seq == 1);
  CHECK(got.events == std::vector<KillEvent>{Frag(1, 2)});
}

TEST_CASE("invalid kill events are refused on both sides", "[snapshot][events][validation]") {
  Rng rng(24);
  SnapshotEncoder encoder;
  CHECK_FALSE(encoder.QueueEvent({1, kNoPlayer, 1}).ok());                   // no victim
  CHECK_FALSE(encoder.QueueEvent({1, 2, kMaxWeaponId + 1}).ok());           // not a weapon
  CHECK_FALSE(encoder.QueueEvent({kNoPlayer, 2, 0}).ok());                  // not a cause
  CHECK_FALSE(encoder.QueueEvent({kNoPlayer, 2, kMaxDeathCause + 1}).ok());
  CHECK(encoder.events_queued() == 0);
  Snapshot with_events = Frame(1, {}, rng);
  with_events.events = {Frag(1, 2)};
  EncodedSnapshot enc;
  CHECK_FALSE(encoder.Encode(with_events, 0, &enc).ok());  // events come from the queue

  REQUIRE(encoder.QueueEvent(Frag(1, 2)).ok());
  REQUIRE(encoder.Encode(Frame(2, {}, rng), 0, &enc).ok());
  const std::vector<uint8_t> good = enc.bytes;
  const size_t events_at = good.size() - (1 + 4 + 5);  // event_count, first_event_seq, one event
  REQUIRE(good[events_at] == 1);
  auto decode_patched = [&](auto patch) {
    std::vector<uint8_t> b = good;
    patch(b);
    SnapshotDecoder decoder;
    Snapshot got;
    return decoder.Decode(b, &got);
  };
  CHECK(decode_patched([](auto&) {}).ok());
  CHECK_FALSE(decode_patched([&](auto& b) { b[events_at] = kMaxSnapshotEvents + 1; }).ok());
  CHECK_FALSE(decode_patched([&](auto& b) { b[events_at] = 2; }).ok());  // truncated
  CHECK_FALSE(decode_patched([&](auto& b) { b[events_at] = 0; }).ok());  // trailing bytes
  CHECK_FALSE(decode_patched([&](auto& b) { PutU16(b, events_at + 1, 0); PutU16(b, events_at + 3, 0); }).ok());  // seq 0
  CHECK_FALSE(decode_patched([&](auto& b) { PutU16(b, events_at + 7, kNoPlayer); }).ok());
  CHECK_FALSE(decode_patched([&](auto& b) { b[events_at + 9] = kMaxWeaponId + 1; }).ok());
  CHECK_FALSE(decode_patched([&](auto& b) { PutU16(b, events_at + 5, kNoPlayer); b[events_at + 9] = 0; }).ok());
}

}  // namespace
}  // namespace proto
