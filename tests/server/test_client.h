// TestClient: a minimal Aftershock client written against the protocol codec only, for the
// server's integration, refusal and fuzz tests: getchallenge over a plain UDP socket, join via
// the lobby, Hello to the worker, commands with redundancy, snapshots decoded and acknowledged.
// Not thread-safe: one thread drives any number of clients.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <enet/enet.h>
#include <netinet/in.h>

#include "server/core/status.h"
#include "server/protocol/connectionless.h"
#include "server/protocol/messages.h"
#include "server/protocol/snapshot_codec.h"

namespace svtest {

// 127.0.0.1:port, for the tests' plain UDP sockets.
sockaddr_in Loopback(uint16_t port);

// One connectionless request/reply over UDP to 127.0.0.1:port (reply bytes, or error), from
// source_address (a loopback address such as "127.0.0.2"; "" lets the kernel choose).
core::Status Connectionless(uint16_t port, const std::vector<uint8_t>& request, int timeout_ms,
                            std::vector<uint8_t>* reply, const std::string& source_address = "");
core::Status GetChallenge(uint16_t port, uint32_t* challenge, const std::string& source_address = "");
// Sends raw bytes to 127.0.0.1:port from a fresh socket (fuzzing).
void SendRawUdp(uint16_t port, const std::vector<uint8_t>& bytes);

struct JoinParams {
  uint16_t lobby_port = 0;
  std::string name;
  uint64_t token = 1;
  uint16_t protocol_version = proto::kProtocolVersion;
  std::optional<uint32_t> challenge;  // default: ask the server
  uint16_t worker_port = 0;  // nonzero: connect here, not to JoinAccept's port (a relay before it)
};

class TestClient {
 public:
  // source_address: the loopback address the client sends from ("" lets the kernel choose,
  // 127.0.0.1), so tests can play several source addresses against a server on 127.0.0.1.
  // source_port: the UDP port to send from (0: any), to play a client that restarts on its port.
  explicit TestClient(const std::string& source_address = "", uint16_t source_port = 0);
  ~TestClient();
  TestClient(const TestClient&) = delete;
  TestClient& operator=(const TestClient&) = delete;

  // Joins (blocking, up to timeout_ms). OK when welcomed; Refused with the reason text on a
  // JoinRefuse (refuse_reason() set); other errors on timeouts.
  core::Status Join(const JoinParams& params, int timeout_ms);
  std::optional<proto::RefuseReason> refuse_reason() const { return refuse_reason_; }

  // Sends the next command (sequence + 1) with up to 3 redundant previous commands.
  void SendCommand(int16_t forward, int16_t side, float yaw, uint8_t buttons, uint8_t duration_ms);
  // Sends arbitrary bytes on a channel of the worker connection (fuzzing).
  void SendRaw(const std::vector<uint8_t>& bytes, uint8_t channel, bool reliable);
  // Services the worker connection: decodes snapshots and events.
  void Service(int timeout_ms);
  void Disconnect();
  // Drops everything without telling the server, as a crashed client or a lost network does:
  // the ENet host is destroyed with no disconnect sent.
  void Abandon();

  // The UDP port the client sends from (0 once abandoned).
  uint16_t local_port() const;

  bool connected() const { return worker_peer_ != nullptr && !disconnected_; }
  bool kicked() const { return kick_.has_value(); }
  const std::optional<proto::Kick>& kick() const { return kick_; }
  uint16_t player_id() const { return player_id_; }
  uint32_t last_sent_sequence() const { return sequence_; }
  uint32_t last_applied_sequence() const { return last_applied_; }
  uint64_t snapshots() const { return snapshots_; }
  uint64_t snapshot_errors() const { return snapshot_errors_; }
  uint64_t events() const { return events_; }  // reliable packets other than a kick (chat)
  // Kill events out of the decoded snapshots, in order, each once.
  const std::vector<proto::KillEvent>& kills() const { return kills_; }
  const proto::Snapshot& last_snapshot() const { return snapshot_; }

 private:
  core::Status WaitFor(ENetHost* host, int timeout_ms, ENetEvent* ev);

  std::string source_address_;
  ENetHost* host_ = nullptr;
  ENetPeer* worker_peer_ = nullptr;
  bool disconnected_ = false;
  std::optional<proto::RefuseReason> refuse_reason_;
  std::optional<proto::Kick> kick_;
  uint16_t player_id_ = 0;
  uint32_t sequence_ = 0;
  uint32_t last_applied_ = 0;
  uint64_t snapshots_ = 0, snapshot_errors_ = 0, events_ = 0;
  std::vector<proto::KillEvent> kills_;
  std::vector<proto::UserCmd> history_;  // newest last
  proto::SnapshotDecoder decoder_;
  proto::Snapshot snapshot_;
};

}  // namespace svtest
