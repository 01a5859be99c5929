// Junk datagram generators for aftershock-flood. ENet's wire format (enet/protocol.h) is
// big-endian; the shapes below follow it so that ENet, not only our code, has to look at them.
#include "tools/flood/junk_datagrams.h"

#include <enet/protocol.h>

#include <string>

namespace flood {

namespace {

constexpr const char* kNames[kJunkKindCount] = {"random", "truncated", "oversize", "connectionless",
                                                "enet-connect"};

// ENet's flags and command numbers are separate enums; C++20 deprecates mixing them.
constexpr int Or(int a, int b) { return a | b; }

void PutU16(std::vector<uint8_t>* out, uint16_t v) {
  out->push_back(static_cast<uint8_t>(v >> 8));
  out->push_back(static_cast<uint8_t>(v));
}

void PutU32(std::vector<uint8_t>* out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out->push_back(static_cast<uint8_t>(v >> shift));
}

void RandomBytes(std::mt19937_64& rng, size_t n, std::vector<uint8_t>* out) {
  out->resize(n);
  for (uint8_t& b : *out) b = static_cast<uint8_t>(rng());
}

// An ENet CONNECT as enet_host_connect sends it: peer id 0xFFF (none yet), sent time, then the
// CONNECT command asking for 3 channels with a random connect id.
void EnetConnect(std::mt19937_64& rng, std::vector<uint8_t>* out) {
  out->clear();
  PutU16(out, Or(ENET_PROTOCOL_MAXIMUM_PEER_ID, ENET_PROTOCOL_HEADER_FLAG_SENT_TIME));
  PutU16(out, static_cast<uint16_t>(rng()));  // sent time
  out->push_back(Or(ENET_PROTOCOL_COMMAND_CONNECT, ENET_PROTOCOL_COMMAND_FLAG_ACKNOWLEDGE));
  out->push_back(0xFF);  // channel id of connection commands
  PutU16(out, 1);        // reliable sequence number
  PutU16(out, static_cast<uint16_t>(rng() % ENET_PROTOCOL_MAXIMUM_PEER_ID));  // outgoing peer id
  out->push_back(0xFF);  // incoming session id: "pick one"
  out->push_back(0xFF);  // outgoing session id
  PutU32(out, 1400);     // mtu
  PutU32(out, 32768);    // window size
  PutU32(out, 3);        // channel count
  PutU32(out, 0);        // incoming bandwidth
  PutU32(out, 0);        // outgoing bandwidth
  PutU32(out, 5000);     // packet throttle interval
  PutU32(out, 2);        // throttle acceleration
  PutU32(out, 2);        // throttle deceleration
  PutU32(out, static_cast<uint32_t>(rng()));  // connect id
  PutU32(out, 0);        // data
}

// A plausible ENet datagram for a connected peer: header with a small peer id, one
// SEND_UNSEQUENCED command carrying a CommandPacket-sized payload.
void EnetUnsequenced(std::mt19937_64& rng, std::vector<uint8_t>* out) {
  out->clear();
  PutU16(out, static_cast<uint16_t>((rng() % 64) | ENET_PROTOCOL_HEADER_FLAG_SENT_TIME));
  PutU16(out, static_cast<uint16_t>(rng()));
  out->push_back(Or(ENET_PROTOCOL_COMMAND_SEND_UNSEQUENCED, ENET_PROTOCOL_COMMAND_FLAG_UNSEQUENCED));
  out->push_back(2);  // the command channel
  PutU16(out, 0);
  PutU16(out, static_cast<uint16_t>(rng()));  // unsequenced group
  const uint16_t payload = 31;
  PutU16(out, payload);
  for (uint16_t i = 0; i < payload; ++i) out->push_back(static_cast<uint8_t>(rng()));
}

void Connectionless(std::mt19937_64& rng, std::vector<uint8_t>* out) {
  static const char* kTexts[] = {"getchallenge", "status", "status 23", "getchallenge\n",
                                 "connect 1 2 3", "rcon password status"};
  out->assign({0xFF, 0xFF, 0xFF, 0xFF});
  std::string text;
  if (rng() % 4 == 0) {
    const size_t n = 1 + rng() % 60;
    for (size_t i = 0; i < n; ++i) text.push_back(static_cast<char>(0x20 + rng() % 95));
  } else {
    text = kTexts[rng() % (sizeof kTexts / sizeof kTexts[0])];
  }
  out->insert(out->end(), text.begin(), text.end());
}

}  // namespace

const char* JunkKindName(JunkKind kind) { return kNames[static_cast<int>(kind)]; }

std::optional<JunkKind> ParseJunkKind(std::string_view name) {
  for (int i = 0; i < kJunkKindCount; ++i) {
    if (name == kNames[i]) return static_cast<JunkKind>(i);
  }
  return std::nullopt;
}

void MakeJunk(JunkKind kind, std::mt19937_64& rng, std::vector<uint8_t>* out) {
  switch (kind) {
    case JunkKind::kRandom:
      RandomBytes(rng, 1 + rng() % 1400, out);
      return;
    case JunkKind::kTruncated: {
      const int shape = static_cast<int>(rng() % 3);
      if (shape == 0) {
        EnetConnect(rng, out);
      } else if (shape == 1) {
        EnetUnsequenced(rng, out);
      } else {
        Connectionless(rng, out);
      }
      out->resize(1 + rng() % (out->size() - 1));
      return;
    }
    case JunkKind::kOversize:
      RandomBytes(rng, 1401 + rng() % (kMaxJunkBytes - 1400), out);
      return;
    case JunkKind::kConnectionless:
      Connectionless(rng, out);
      return;
    case JunkKind::kEnetConnect:
    case JunkKind::kCount:
      EnetConnect(rng, out);
      return;
  }
}

bool IsVerifyConnect(const uint8_t* reply, size_t bytes) {
  if (bytes < 2) return false;
  const uint16_t peer_word = static_cast<uint16_t>((reply[0] << 8) | reply[1]);
  const size_t header = (peer_word & ENET_PROTOCOL_HEADER_FLAG_SENT_TIME) ? 4 : 2;
  return bytes > header &&
         (reply[header] & ENET_PROTOCOL_COMMAND_MASK) == ENET_PROTOCOL_COMMAND_VERIFY_CONNECT;
}

}  // namespace flood
