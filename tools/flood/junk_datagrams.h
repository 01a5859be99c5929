// The junk aftershock-flood sends: random bytes, truncated ENet and connectionless datagrams,
// oversize datagrams, connectionless-shaped requests and well-formed ENet CONNECTs that no
// handshake will follow. Pure functions of a seeded generator; thread-compatible.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <string_view>
#include <vector>

namespace flood {

enum class JunkKind : uint8_t {
  kRandom,          // 1..1400 random bytes
  kTruncated,       // an ENet command datagram or a connectionless request, cut short
  kOversize,        // 1401..9000 bytes: past the protocol's limit, half past ENet's 4096 buffer
  kConnectionless,  // FF FF FF FF + getchallenge / status / garbage text
  kEnetConnect,     // a well-formed ENet CONNECT (3 channels, random connect id) from nowhere
  kCount
};
inline constexpr int kJunkKindCount = static_cast<int>(JunkKind::kCount);

const char* JunkKindName(JunkKind kind);
std::optional<JunkKind> ParseJunkKind(std::string_view name);

inline constexpr size_t kMaxJunkBytes = 9000;
// Bytes of an ENet CONNECT datagram: the 4-byte header with sent time, then the 48-byte command.
inline constexpr size_t kEnetConnectBytes = 52;

// Fills *out with one datagram of `kind`, drawn from rng.
void MakeJunk(JunkKind kind, std::mt19937_64& rng, std::vector<uint8_t>* out);

// True if `reply` (a datagram the server sent back) is an ENet VERIFY_CONNECT: the server gave
// one of our CONNECTs a peer slot (ENet resends it about every 0.5-1 s while the slot lasts).
bool IsVerifyConnect(const uint8_t* reply, size_t bytes);

}  // namespace flood
