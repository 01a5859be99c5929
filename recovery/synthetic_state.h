// SyntheticState: a deterministic stand-in for game state, used by the recovery tests and
// aftershock-ckpt-bench. N objects of S bytes; each tick's payload is the list of objects it
// updates, and an update mixes the tick into the object's bytes, so any lost, repeated or
// mis-ordered update, or a torn object, shows up as a different state.
#pragma once

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "recovery/checkpointer.h"
#include "recovery/coding.h"

namespace recovery {

class SyntheticState {
 public:
  static constexpr uint32_t kMaxObjectSize = 4096;
  // object_size: 8..kMaxObjectSize, a multiple of 8.
  SyntheticState(uint32_t object_count, uint32_t object_size)
      : n_(object_count), size_(object_size), mem_(uint64_t{object_count} * object_size) {
    for (uint64_t k = 0; k < mem_.size(); ++k) mem_[k] = static_cast<uint8_t>(k * 7 + 3);
  }

  // The payload of `tick`: `updates` object ids drawn from a seeded generator (ids repeat).
  static std::string MakePayload(uint64_t seed, uint64_t tick, uint32_t object_count, int updates) {
    std::mt19937_64 rng(seed * 1000003 + tick);
    std::string out;
    for (int k = 0; k < updates; ++k) PutFixed32(&out, static_cast<uint32_t>(rng() % object_count));
    return out;
  }

  // Applies a payload through the hooks (ckpt may be null, e.g. during replay).
  void Apply(uint64_t tick, std::string_view payload, Checkpointer* ckpt) {
    for (size_t p = 0; p + 4 <= payload.size(); p += 4) Update(DecodeFixed32(payload.data() + p), tick, ckpt);
  }

  // One update of object id through the checkpointer's write protocol (if any). It rewrites the
  // bytes from a tick-dependent offset to the end, so writes cover partial 8-byte cells as well
  // as whole ones; every other update goes through Checkpointer::Write (from a cell boundary),
  // the others write in place between OnUpdate and AfterUpdate.
  void Update(uint32_t id, uint64_t tick, Checkpointer* ckpt) {
    const bool whole_cells = (tick + id) % 2 == 0;
    uint32_t first = static_cast<uint32_t>((tick * 31 + id) % size_);
    if (whole_cells) first &= ~uint32_t{7};
    uint8_t* o = object(id);
    uint8_t fresh[kMaxObjectSize];
    uint8_t carry = static_cast<uint8_t>(tick * 13 + id);
    for (uint32_t j = first; j < size_; ++j) {
      carry = static_cast<uint8_t>(o[j] * 167 + carry + j);
      fresh[j] = carry;
    }
    if (ckpt != nullptr && whole_cells) {
      ckpt->Write(id, first, fresh + first, size_ - first);
      return;
    }
    if (ckpt != nullptr) ckpt->OnUpdate(id);
    std::memcpy(o + first, fresh + first, size_ - first);
    if (ckpt != nullptr) ckpt->AfterUpdate(id, first, size_ - first);
  }

  uint8_t* object(uint32_t id) { return mem_.data() + uint64_t{id} * size_; }
  uint8_t* data() { return mem_.data(); }
  const std::vector<uint8_t>& bytes() const { return mem_; }
  uint32_t object_count() const { return n_; }
  uint32_t object_size() const { return size_; }

 private:
  uint32_t n_;
  uint32_t size_;
  std::vector<uint8_t> mem_;
};

}  // namespace recovery
