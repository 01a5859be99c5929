// TimerWheel: a hashed timing wheel of 1 ms slots holding at most one timer per bot, as
// intrusive singly linked lists over a fixed array: scheduling and firing never allocate.
// Not thread-safe: one per bot thread.
#pragma once

#include <cstdint>
#include <vector>

#include "server/core/check.h"

namespace bots {

class TimerWheel {
 public:
  static constexpr int kSlots = 256;  // 256 ms around; longer timers go round more than once
  static constexpr uint32_t kNone = 0xFFFFFFFFu;

  // `items` timers, ids 0..items-1; `now_ms` is where the wheel starts.
  TimerWheel(uint32_t items, uint64_t now_ms)
      : due_ms_(items, 0), next_(items, kNone), armed_(items, 0), cursor_ms_(now_ms) {
    for (auto& s : slots_) s = kNone;
  }

  // Arms (or re-arms) timer `id` to fire at due_ms. A timer armed in the past fires on the next
  // Advance. Re-arming an armed timer is not allowed (fire it, or wait): AS_CHECK.
  void Schedule(uint32_t id, uint64_t due_ms) {
    AS_CHECK(id < due_ms_.size() && !armed_[id], "TimerWheel::Schedule: bad or armed id");
    // Inside Advance the cursor's slot is being emptied: the earliest slot left is the next one.
    const uint64_t earliest = cursor_ms_ + (in_advance_ ? 1 : 0);
    if (due_ms < earliest) due_ms = earliest;
    due_ms_[id] = due_ms;
    armed_[id] = 1;
    const int slot = static_cast<int>(due_ms % kSlots);
    next_[id] = slots_[slot];
    slots_[slot] = id;
  }

  // Moves timer `id` (armed or not) to due_ms. Unlinking walks one slot's list: with timers spread
  // over the slots that is a few entries.
  // Inside Advance only the timer being fired (already disarmed) may be rescheduled.
  void Reschedule(uint32_t id, uint64_t due_ms) {
    if (armed_[id]) {
      AS_CHECK(!in_advance_, "TimerWheel::Reschedule: armed timer moved during Advance");
      Unlink(id);
    }
    Schedule(id, due_ms);
  }

  bool armed(uint32_t id) const { return armed_[id] != 0; }

  // Calls fire(id) for every timer due at or before now_ms, oldest slot first. fire may
  // Schedule the same or other timers (a timer re-armed for now fires on the next Advance).
  template <typename Fire>
  void Advance(uint64_t now_ms, Fire&& fire) {
    in_advance_ = true;
    for (; cursor_ms_ <= now_ms; ++cursor_ms_) {
      const int slot = static_cast<int>(cursor_ms_ % kSlots);
      uint32_t id = slots_[slot];
      slots_[slot] = kNone;
      while (id != kNone) {
        const uint32_t next = next_[id];
        if (due_ms_[id] <= cursor_ms_) {
          armed_[id] = 0;
          fire(id);
        } else {  // due on a later turn of the wheel
          next_[id] = slots_[slot];
          slots_[slot] = id;
        }
        id = next;
      }
    }
    in_advance_ = false;
  }

  // The cursor: every timer due before it has fired.

 private:
  void Unlink(uint32_t id) {
    uint32_t* link = &slots_[due_ms_[id] % kSlots];
    while (*link != id) {
      AS_CHECK(*link != kNone, "TimerWheel::Unlink: armed timer not in its slot");
      link = &next_[*link];
    }
    *link = next_[id];
    armed_[id] = 0;
  }

  std::vector<uint64_t> due_ms_;
  std::vector<uint32_t> next_;
  std::vector<uint8_t> armed_;
  uint32_t slots_[kSlots];
  uint64_t cursor_ms_;
  bool in_advance_ = false;
};

}  // namespace bots
