// ChallengeClient: the connectionless side of joining, on a plain UDP socket beside the ENet
// hosts. The server binds a challenge to the client's IP address only (docs/protocol.md 3.1), so
// one thread fetches a challenge and all its bots present it while it is fresh.
// Also the blocking status query the main thread uses to learn the server's map.
#pragma once

#include <cstdint>

#include "server/core/status.h"
#include "server/protocol/connectionless.h"

namespace bots {

// Not thread-safe: one per bot thread.
class ChallengeClient {
 public:
  // A challenge is trusted this long (the server accepts it for at least 15 s).
  static constexpr uint64_t kFreshMs = 10000;
  static constexpr uint64_t kResendMs = 250;

  ChallengeClient() = default;
  ~ChallengeClient();
  ChallengeClient(const ChallengeClient&) = delete;
  ChallengeClient& operator=(const ChallengeClient&) = delete;

  // server_ip is IPv4 in network byte order (as ENetAddress::host).
  core::Status Open(uint32_t server_ip, uint16_t port);
  int fd() const { return fd_; }

  // True and *challenge set if a fresh challenge is held; otherwise asks the server (at most
  // every kResendMs) and returns false: call again later.
  bool Get(uint64_t now_ms, uint32_t* challenge);
  // Forget the held challenge (the lobby said kBadChallenge: the server restarted).
  void Invalidate() { have_ = false; }
  // Reads every pending reply on the socket.
  void Poll(uint64_t now_ms);

 private:
  int fd_ = -1;
  bool have_ = false;
  uint32_t challenge_ = 0;
  uint64_t got_ms_ = 0;
  uint64_t asked_ms_ = 0;
  bool asked_ = false;
};

// Asks the server's status (blocking, up to timeout_ms, resending every 200 ms).
core::Status QueryStatus(uint32_t server_ip, uint16_t port, int timeout_ms, proto::ServerStatus* out);

}  // namespace bots
