// LocalityAssignment: --assign locality (docs/architecture.md, "Locality assignment"). Every frame
// thread owns a connected set of the areanode tree's leaves (areanode::LeafPartition), and the
// commands of a player standing in a thread's leaves run on that thread, so the threads lock
// mostly different leaves. A player's connection stays on the worker port it joined; its
// commands are read there and, if another thread runs them, handed over: each worker runs its
// own port's commands for its own players, then after the route barrier (server.cc) those the
// other ports read for them. Its replies leave from the port as before, so moving between
// threads costs the player nothing it can see.
//
// Once per frame, after the tick's world part (joins, leaves, world phase) and before its
// commands, the master calls Update:
//   - every `rebalance_ticks` ticks it counts the players per leaf, and if the players per
//     thread then differ by more than `rebalance_threshold` of their mean ((max - min) / mean)
//     it moves boundary leaves between neighbouring threads (LeafPartition::Improve: few moves,
//     every thread's set still connected);
//   - a player that joined goes to the owner of the leaf its origin is in;
//   - a player whose origin is in another thread's leaf migrates there, unless a square of
//     `margin` units around its origin still touches a leaf of its thread (hysteresis: walking
//     along a border does not bounce it between threads).
// The inputs are the world's state and the tick, so the live server and aftershock-replay of its
// trace assign alike. The assignment never affects the game: the locks keep any order correct.
//
// Threading: Update on the master in the world phase; ThreadOf from any frame thread in the
// request phase (phase-separated: the barrier after the world phase orders them).
#pragma once

#include <cstdint>
#include <vector>

#include "server/areanode/leaf_partition.h"
#include "server/game/world.h"
#include "server/sv/server_options.h"

namespace sv {

class LocalityAssignment {
 public:
  // Threads 0..threads-1 over `tree`'s leaves (started as equal shares of leaves) for player ids
  // 1..max_players.
  LocalityAssignment(const areanode::AreanodeTree& tree, int threads, int max_players,
                     const LocalityOptions& options);

  // See above. `tick` is the log tick of the frame about to run its commands.
  void Update(const game::World& world, uint64_t tick);

  // The thread that runs `player`'s commands this frame; -1 if it was not connected at the last
  // Update (the caller runs such a command where it was read).
  int ThreadOf(game::EntityId player) const {
    return player >= 1 && player < static_cast<int>(thread_of_.size()) ? thread_of_[player] : -1;
  }

  const areanode::LeafPartition& partition() const { return partition_; }
  uint64_t migrations() const { return migrations_; }
  uint64_t rebalances() const { return rebalances_; }    // rebalances that moved a leaf
  uint64_t leaves_moved() const { return leaves_moved_; }

 private:
  const areanode::AreanodeTree& tree_;
  const LocalityOptions options_;
  areanode::LeafPartition partition_;
  std::vector<int16_t> thread_of_;     // by player id; -1: not connected
  std::vector<int> leaf_of_;           // by player id: this Update's leaf (scratch)
  std::vector<uint32_t> leaf_load_;    // players per leaf (scratch)
  std::vector<int> touching_;          // scratch
  uint64_t last_rebalance_tick_ = 0;
  uint64_t migrations_ = 0, rebalances_ = 0, leaves_moved_ = 0;
};

}  // namespace sv
