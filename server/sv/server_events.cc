// Frame events: the master turns the world phase's frag and death counters into kill events for
// the clients near the victim, which ride in their snapshots (docs/protocol.md, 6.4), and
// broadcasts chat as reliable packets.
#include "server/protocol/snapshot.h"
#include "server/sv/event_scope.h"
#include "server/sv/server.h"
#include "server/sv/snapshot_builder.h"

namespace sv {

void Server::Broadcast(const std::vector<uint8_t>& bytes) {
  FrameEvent e;
  e.bytes = bytes;
  Send(e);
}

void Server::Send(const FrameEvent& event) {
  for (auto& w : workers_) w->events().Push(FrameEvent(event));
}

void Server::DetectKills() {
  // The game keeps frag and death counters, not a kill log: a death names its killer when the
  // killer is unambiguous (exactly one player gained frags), else it names a cause.
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
    proto::KillEvent kill;
    kill.victim_id = static_cast<uint16_t>(v);
    if (killers.size() == 1 && gained == static_cast<int>(victims.size()) && killers[0] != v) {
      kill.killer_id = static_cast<uint16_t>(killers[0]);
      kill.how = static_cast<uint8_t>(WireWeapon(world_->Get(killers[0]).weapon));
    } else {
      kill.how = static_cast<uint8_t>(e.frags < last_frags_[v] ? proto::DeathCause::kSuicide
                                                                 : proto::DeathCause::kWorld);
    }
    if (proto::Validate(kill).ok()) Send(ScopedEvent(kill, e.origin));
  }
  for (const auto& [id, online] : online_) {
    last_frags_[id] = world_->Get(id).frags;
    last_deaths_[id] = world_->Get(id).deaths;
  }
}

}  // namespace sv
