// Kill events: the master turns the world phase's frag and death counters into reliable events
// for the clients near the victim (docs/protocol.md, 5.9), and broadcasts the rest.
#include "server/protocol/messages.h"
#include "server/sv/event_scope.h"
#include "server/sv/server.h"
#include "server/sv/snapshot_builder.h"

namespace sv {

void Server::Broadcast(const std::vector<uint8_t>& bytes) {
  ReliableEvent e;
  e.bytes = bytes;
  Send(e);
}

void Server::Send(const ReliableEvent& event) {
  for (auto& w : workers_) w->events().Push(ReliableEvent(event));
}

void Server::DetectKills() {
  // The game keeps frag and death counters, not a kill log: a death is a FragEvent when the
  // killer is unambiguous (exactly one player gained frags), else a DeathEvent.
  std::vector<game::EntityId> victims, killers;
  int gained = 0;
  for (const auto& [id, online] : online_) {
    const game::Edict& e = world_->Get(id);
    if (e.deaths > last_deaths_[id]) victims.push_back(id);
    if (e.frags > last_frags_[id]) {
      killers.push_back(id);
      gained += e.frags - last_frags_[id];
    }
  }
  for (game::EntityId v : victims) {
    const game::Edict& e = world_->Get(v);
    std::vector<uint8_t> bytes;
    if (killers.size() == 1 && gained == static_cast<int>(victims.size()) && killers[0] != v) {
      proto::FragEvent f;
      f.killer_id = static_cast<uint16_t>(killers[0]);
      f.victim_id = static_cast<uint16_t>(v);
      f.weapon = WireWeapon(world_->Get(killers[0]).weapon);
      if (proto::Encode(f, &bytes).ok()) Send(ScopedEvent(std::move(bytes), killers[0], v, e.origin));
    } else {
      proto::DeathEvent de;
      de.victim_id = static_cast<uint16_t>(v);
      de.cause = e.frags < last_frags_[v] ? proto::DeathCause::kSuicide : proto::DeathCause::kWorld;
      if (proto::Encode(de, &bytes).ok()) Send(ScopedEvent(std::move(bytes), -1, v, e.origin));
    }
  }
  for (const auto& [id, online] : online_) {
    last_frags_[id] = world_->Get(id).frags;
    last_deaths_[id] = world_->Get(id).deaths;
  }
}

}  // namespace sv
