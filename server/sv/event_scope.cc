#include "server/sv/event_scope.h"

#include "server/core/check.h"

namespace sv {

bool EventReaches(const FrameEvent& event, game::EntityId player, core::Vec3 origin,
                  float radius) {
  AS_CHECK(radius > 0, "EventReaches: the interest radius must be positive");
  if (event.is_chat()) return true;
  const proto::KillEvent& k = event.kill;
  if (player >= 0 && (player == k.victim_id || (k.killer_id != proto::kNoPlayer && player == k.killer_id))) {
    return true;
  }
  const core::Vec3 d = origin - event.where;
  return core::Dot(d, d) <= radius * radius;
}

FrameEvent ScopedEvent(const proto::KillEvent& kill, core::Vec3 where) {
  AS_CHECK(kill.victim_id != proto::kNoPlayer, "ScopedEvent: an event needs a victim");
  FrameEvent e;
  e.kill = kill;
  e.where = where;
  return e;
}

}  // namespace sv
