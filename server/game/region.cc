// Region's box helpers.
#include "server/game/region.h"

namespace game {

int Region::LockBoxes(Bounds out[kMaxRegionBoxes]) const {
  int n = 0;
  if (!move_box.IsEmpty()) out[n++] = move_box;
  for (int i = 0; i < teleport_count; ++i) out[n++] = teleport_boxes[i];
  if (action != ActionKind::kNone && !action_box.IsEmpty()) out[n++] = action_box;
  return n;
}

bool Region::Covers(const Bounds& box) const {
  if (whole_map) return true;
  if (move_box.Contains(box)) return true;
  for (int i = 0; i < teleport_count; ++i) {
    if (teleport_boxes[i].Contains(box)) return true;
  }
  return action != ActionKind::kNone && action_box.Contains(box);
}

}  // namespace game
