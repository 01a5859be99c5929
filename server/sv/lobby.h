// Lobby: the server's front door on the base UDP port. Answers connectionless getchallenge and
// status queries (raw datagrams caught by its JunkFilter on ENetHost::intercept), takes ENet connections that send
// one JoinRequest, checks version, name and challenge, and hands the request to the master
// (identity and capacity are decided in the serial world phase). Then replies JoinAccept
// (worker port + ticket) or JoinRefuse (reason) and disconnects.
//
// Threading: one lobby thread runs Run(); it alone touches the ENet host. It exchanges with the
// frame loop only through the queues and the StatusBoard below.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>

#include <enet/enet.h>

#include "server/core/mutex.h"
#include "server/core/status.h"
#include "server/core/thread_annotations.h"
#include "server/protocol/challenge.h"
#include "server/protocol/connectionless.h"
#include "server/sv/junk_filter.h"
#include "server/sv/server_stats.h"
#include "server/sv/thread_messages.h"
#include "server/sv/thread_queue.h"

namespace sv {

// The status reply's content, published by the master, read by the lobby. Any thread.
class StatusBoard {
 public:
  void Publish(proto::ServerStatus status) EXCLUDES(mu_) {
    core::MutexLock lock(&mu_);
    status_ = std::move(status);
  }
  proto::ServerStatus Get() const EXCLUDES(mu_) {
    core::MutexLock lock(&mu_);
    return status_;
  }

 private:
  mutable core::Mutex mu_;
  proto::ServerStatus status_ GUARDED_BY(mu_);
};

class Lobby {
 public:
  // Binds the lobby's ENet host. `stats`, `board` and the queues must outlive the lobby.
  static core::Status Create(const std::string& bind_address, uint16_t port, size_t max_peers,
                             ServerStats* stats, const StatusBoard* board,
                             ThreadQueue<JoinTicketRequest>* to_master,
                             ThreadQueue<JoinDecision>* from_master, std::unique_ptr<Lobby>* out);
  ~Lobby();

  uint16_t port() const { return port_; }  // as bound (port 0 asked: the system's pick)

  // The lobby thread's loop: returns once `stop` is set and peers were told (kShuttingDown).
  void Run(const std::atomic<bool>& stop);

 private:
  struct Conn {
    ENetPeer* peer = nullptr;
    uint64_t connected_ms = 0;
    bool asked = false;     // a JoinRequest went to the master
    bool answered = false;  // accept/refuse sent
    uint64_t answered_ms = 0;
  };

  Lobby(ENetHost* host, ServerStats* stats, const StatusBoard* board,
        ThreadQueue<JoinTicketRequest>* to_master, ThreadQueue<JoinDecision>* from_master);
  // Replies to a getchallenge or status datagram (from the junk filter, lobby thread); false if
  // it was malformed.
  bool AnswerConnectionless(std::span<const uint8_t> data);
  void HandleEvent(const ENetEvent& ev, bool stopping);
  void HandleJoinRequest(uint64_t id, Conn* conn, const ENetPacket* packet, bool stopping);
  void Refuse(Conn* conn, proto::RefuseReason reason, const std::string& text);
  void Send(Conn* conn, const std::vector<uint8_t>& bytes);
  void ApplyDecisions();
  void ExpireIdle(uint64_t now_ms);

  ENetHost* host_;
  const uint16_t port_;
  ServerStats* stats_;
  const StatusBoard* board_;
  ThreadQueue<JoinTicketRequest>* to_master_;
  ThreadQueue<JoinDecision>* from_master_;
  proto::ChallengeIssuer challenges_;
  uint64_t start_ms_;
  uint64_t next_conn_ = 1;
  std::unordered_map<uint64_t, Conn> conns_;
  std::vector<JoinDecision> decisions_;
  JunkFilter junk_;  // last: its handler uses the members above
};


}  // namespace sv
