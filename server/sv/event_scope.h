// Who receives a frag or death event.
//
// Each event a client receives takes room in its snapshots until it acknowledges one that
// carried it. Sent as reliable packets to every client, a death on a 2,000-player server became
// 2,000 reliable sends and 2,000 acknowledgement datagrams; with deaths in most frames the
// acknowledgements outnumbered the clients' commands (the run and its command:
// docs/architecture.md, "Receiving"). So a frag or death goes
// only to the clients that could have seen it: the killer, the victim, and every client whose
// player stands within the snapshot interest radius of the victim. Chat still goes to everyone.
#pragma once

#include "server/core/vec3.h"
#include "server/game/entity.h"
#include "server/sv/thread_messages.h"

namespace sv {

// True when `event` goes to `player`, whose player stands at `origin`, under snapshot
// interest radius `radius` (> 0): always for chat; for a kill when the player is its killer or
// its victim, or |origin - event.where| <= radius.
bool EventReaches(const FrameEvent& event, game::EntityId player, core::Vec3 origin,
                  float radius);

// A frag or death event; where = the victim's position.
FrameEvent ScopedEvent(const proto::KillEvent& kill, core::Vec3 where);

}  // namespace sv
