#include "server/sv/event_scope.h"

#include "server/core/check.h"

namespace sv {

bool EventReaches(const FrameEvent& event, game::EntityId player, core::Vec3 origin,
                  float radius) {
  AS_CHECK(radius > 0, "EventReaches: the interest radius must be positive");
  if (event.everyone) return true;
  for (game::EntityId id : event.involved) {
    if (id >= 0 && id == player) return true;
  }
  const core::Vec3 d = origin - event.where;
  return core::Dot(d, d) <= radius * radius;
}

FrameEvent ScopedEvent(const proto::KillEvent& kill, core::Vec3 where) {
  AS_CHECK(kill.victim_id != proto::kNoPlayer, "ScopedEvent: an event needs a victim");
  FrameEvent e;
  e.everyone = false;
  e.kill = kill;
  e.involved[0] = kill.killer_id == proto::kNoPlayer ? -1 : game::EntityId{kill.killer_id};
  e.involved[1] = kill.victim_id;
  e.where = where;
  return e;
}

}  // namespace sv
