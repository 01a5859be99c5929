// Mutation fuzz test: random and mutated packets go into every decoder. Each must return an
// error or a valid message, never crash (run it under the address/UB sanitizer build too).
// Decoding is canonical, so a message that decodes must re-encode to the very same bytes.
#include <catch2/catch.hpp>

#include "server/protocol/connectionless.h"
#include "server/protocol/protocol_test_util.h"
#include "server/protocol/snapshot_codec.h"

namespace proto {
namespace {

using testing::Rng;
using testing::Uniform;

using Bytes = std::vector<uint8_t>;

Bytes Mutate(Rng& rng, const Bytes& in, const std::vector<Bytes>& corpus) {
  static constexpr uint8_t kInteresting[] = {0, 1, 0x7F, 0x80, 0xFF, 0x40, 64, 65, 250, 251};
  Bytes b = in;
  const uint32_t rounds = Uniform(rng, 1, 4);
  for (uint32_t r = 0; r < rounds; ++r) {
    const size_t at = b.empty() ? 0 : Uniform(rng, 0, static_cast<uint32_t>(b.size() - 1));
    switch (Uniform(rng, 0, 7)) {
      case 0:
        if (!b.empty()) b[at] ^= static_cast<uint8_t>(1u << Uniform(rng, 0, 7));
        break;
      case 1:
        if (!b.empty()) b[at] = static_cast<uint8_t>(rng());
        break;
      case 2:
        if (!b.empty()) b[at] = kInteresting[Uniform(rng, 0, 9)];
        break;
      case 3:
        b.resize(b.empty() ? 0 : Uniform(rng, 0, static_cast<uint32_t>(b.size() - 1)));
        break;
      case 4:
        b.insert(b.begin() + static_cast<long>(at), static_cast<uint8_t>(rng()));
        break;
      case 5:
        if (!b.empty()) b.erase(b.begin() + static_cast<long>(at));
        break;
      case 6: {  // splice the tail of another sample
        const Bytes& other = corpus[Uniform(rng, 0, static_cast<uint32_t>(corpus.size() - 1))];
        size_t from = other.empty() ? 0 : Uniform(rng, 0, static_cast<uint32_t>(other.size() - 1));
        b.resize(at);
        b.insert(b.end(), other.begin() + static_cast<long>(from), other.end());
        break;
      }
      default:
        if (b.size() >= 4) {  // overwrite a 32-bit word with a float edge value
          static constexpr uint32_t kWords[] = {0x7FC00000, 0x7F800000, 0xFF800000,
                                                0x47800100, 0xFFFFFFFF, 0};
          uint32_t w = kWords[Uniform(rng, 0, 5)];
          size_t p = Uniform(rng, 0, static_cast<uint32_t>(b.size() - 4));
          for (size_t i = 0; i < 4; ++i) b[p + i] = static_cast<uint8_t>(w >> (8 * i));
        }
    }
  }
  return b;
}

Bytes RandomBytes(Rng& rng) {
  Bytes b(Uniform(rng, 0, 120));
  for (uint8_t& x : b) x = static_cast<uint8_t>(rng());
  if (!b.empty() && Uniform(rng, 0, 1) == 0) {
    static constexpr uint8_t kTypes[] = {0x01, 0x02, 0x03, 0x04, 0x81, 0x82, 0x83,
                                         0x84, 0x85, 0x86, 0x87, 0x88, 0x89};
    b[0] = kTypes[Uniform(rng, 0, 12)];
  }
  return b;
}

// A decoder primed with a few snapshots, and the packets that followed (deltas against them).
struct SnapshotCorpus {
  SnapshotDecoder primed;
  std::vector<Bytes> packets;
};

SnapshotCorpus MakeSnapshotCorpus(Rng& rng) {
  SnapshotCorpus c;
  SnapshotEncoder encoder;
  std::vector<EntityState> ents;
  for (uint16_t i = 0; i < 20; ++i) ents.push_back(testing::RandomEntity(rng, i * 3));
  for (uint32_t id = 1; id <= 12; ++id) {
    for (EntityState& e : ents) testing::MutateEntity(rng, &e);
    std::shuffle(ents.begin(), ents.end(), rng);
    Snapshot f;
    f.snapshot_id = id;
    f.player = testing::RandomPlayer(rng);
    f.entities = std::vector<EntityState>(ents.begin(), ents.begin() + Uniform(rng, 5, 20));
    EncodedSnapshot enc;
    AS_CHECK(encoder.Encode(f, id <= 6 ? c.primed.ack_id() : 6, &enc).ok(), "corpus frame");
    if (id <= 6) {
      Snapshot got;
      AS_CHECK(c.primed.Decode(enc.bytes, &got).ok(), "corpus decode");
    } else {
      c.packets.push_back(enc.bytes);
    }
  }
  return c;
}

void CheckDecodedSnapshot(const Snapshot& s) {
  REQUIRE(Validate(s.player).ok());
  REQUIRE(s.entities.size() <= kMaxSnapshotEntities);
  for (size_t i = 0; i < s.entities.size(); ++i) {
    REQUIRE(Validate(s.entities[i]).ok());
    if (i > 0) REQUIRE(s.entities[i - 1].id < s.entities[i].id);
  }
}

// Feeds one packet to every decoder and checks what comes out.
void FeedAll(const Bytes& packet, const std::vector<testing::Codec>& codecs,
             const SnapshotDecoder& primed, size_t* accepted) {
  for (const testing::Codec& codec : codecs) {
    Bytes again;
    if (codec.reencode(packet, &again).ok()) {
      REQUIRE(again == packet);
      ++*accepted;
    }
  }
  SnapshotDecoder decoder = primed;
  Snapshot snap;
  if (decoder.Decode(packet, &snap).ok()) {
    CheckDecodedSnapshot(snap);
    REQUIRE(decoder.ack_id() == snap.snapshot_id);
    ++*accepted;
  }
  ConnectionlessRequest req;
  uint32_t challenge;
  ServerStatus status;
  (void)ParseRequest(packet, &req);
  (void)ParseChallengeReply(packet, &challenge);
  if (ParseStatusReply(packet, &status).ok()) {
    Bytes again;
    ServerStatus back;
    REQUIRE(EncodeStatusReply(status, &again).ok());
    REQUIRE(ParseStatusReply(again, &back).ok());
    REQUIRE(back == status);
  }
}

TEST_CASE("mutated and random packets never crash any decoder", "[fuzz]") {
  Rng rng(20261122);
  const std::vector<testing::Codec> codecs = testing::AllCodecs();
  SnapshotCorpus snapshots = MakeSnapshotCorpus(rng);
  std::vector<Bytes> corpus;
  for (const testing::Codec& codec : codecs) {
    for (int i = 0; i < 20; ++i) corpus.push_back(codec.sample(rng));
  }
  corpus.insert(corpus.end(), snapshots.packets.begin(), snapshots.packets.end());
  corpus.push_back(EncodeRequest(ConnectionlessRequest::kStatus));
  corpus.push_back(EncodeChallengeReply(123456));
  ServerStatus st;
  st.map = "dm_arena";
  st.player_list = {{1, 3, 2, 40, "one"}, {7, -1, 0, 80, "two words"}};
  Bytes status_bytes;
  REQUIRE(EncodeStatusReply(st, &status_bytes).ok());
  corpus.push_back(status_bytes);

  size_t accepted = 0, fed = 0;
  for (const Bytes& b : corpus) {
    FeedAll(b, codecs, snapshots.primed, &accepted);
    ++fed;
  }
  const size_t valid_inputs = accepted;
  for (int i = 0; i < 1000000; ++i) {
    Bytes b = Uniform(rng, 0, 9) == 0
                  ? RandomBytes(rng)
                  : Mutate(rng, corpus[Uniform(rng, 0, static_cast<uint32_t>(corpus.size() - 1))],
                           corpus);
    FeedAll(b, codecs, snapshots.primed, &accepted);
    ++fed;
  }
  // Every unmutated sample decodes; some mutations stay valid (e.g. a changed float or id).
  CHECK(valid_inputs == corpus.size() - 3);  // connectionless samples are not counted
  CHECK(accepted > valid_inputs);
  WARN("fed " << fed << " packets, " << accepted << " decoded as valid");
}

}  // namespace
}  // namespace proto
