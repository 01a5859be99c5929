// The messages that cross threads inside the server: lobby <-> master (joins), master -> worker
// (player assignments, reliable events), worker -> master (leaves, chat). Plain values.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "server/core/vec3.h"
#include "server/game/entity.h"
#include "server/protocol/messages.h"
#include "server/protocol/snapshot.h"

namespace sv {

// Lobby -> master: a JoinRequest that passed the version, name and challenge checks.
struct JoinTicketRequest {
  uint64_t lobby_conn = 0;  // the lobby's connection id, echoed in the decision
  std::string name;
  uint64_t token = 0;
  uint32_t source_ip = 0;   // the client's IPv4 address, host order (new-identity rate limit)
  uint16_t source_port = 0; // its UDP port
};

// Master -> lobby: what to answer.
struct JoinDecision {
  uint64_t lobby_conn = 0;
  bool accepted = false;
  proto::JoinAccept accept;
  proto::JoinRefuse refuse;
};

// Master -> worker: expect a Hello from this player with this ticket.
struct PlayerAssignment {
  game::EntityId player = 0;
  uint64_t ticket = 0;
  uint32_t last_applied_sequence = 0;
  uint64_t deadline_ms = 0;  // Hello must arrive before this (steady ms), else the player leaves
  // Instead of expecting a Hello: forget this player's session or pending ticket, kicking the
  // client with kDuplicateLogin, and send no leave notice (the master already applied the leave).
  bool drop = false;
  // With drop: where the new login came from (host order). An old session at the same address
  // and port is a client that restarted on its port: it is reset without a Kick (docs/protocol.md,
  // section 4, "Reconnecting").
  uint32_t rejoin_ip = 0;
  uint16_t rejoin_port = 0;
};

// Worker -> master.
struct WorkerNotice {
  enum class Kind : uint8_t { kLeave, kChat } kind = Kind::kLeave;
  game::EntityId player = 0;
  std::string text;  // chat text
};

// Master -> worker: one event of the frame. A chat line (`bytes`, an encoded ChatEvent sent
// reliably) goes to every active client of the worker; a frag or death (`kill`) rides in the
// snapshots of the clients it concerns (EventReaches, event_scope.h).
struct FrameEvent {
  std::vector<uint8_t> bytes;  // chat: the reliable packet; empty for a kill
  proto::KillEvent kill;       // a kill: its killer and victim
  core::Vec3 where{};          // a kill: the victim's position
  bool is_chat() const { return !bytes.empty(); }
};

}  // namespace sv
