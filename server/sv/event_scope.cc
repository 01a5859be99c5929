#include "server/sv/event_scope.h"

#include "server/core/check.h"

namespace sv {

bool EventReaches(const ReliableEvent& event, game::EntityId player, core::Vec3 origin,
                  float radius) {
  AS_CHECK(radius > 0, "EventReaches: the interest radius must be positive");
  if (event.everyone) return true;
  for (game::EntityId id : event.involved) {
    if (id >= 0 && id == player) return true;
  }
  const core::Vec3 d = origin - event.where;
  return core::Dot(d, d) <= radius * radius;
}

ReliableEvent ScopedEvent(std::vector<uint8_t> bytes, game::EntityId killer,
                          game::EntityId victim, core::Vec3 where) {
  AS_CHECK(victim >= 0, "ScopedEvent: an event needs a victim");
  ReliableEvent e;
  e.bytes = std::move(bytes);
  e.everyone = false;
  e.involved[0] = killer;
  e.involved[1] = victim;
  e.where = where;
  return e;
}

}  // namespace sv
