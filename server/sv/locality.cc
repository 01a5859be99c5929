// LocalityAssignment: players to the thread that owns their part of the map.
#include "server/sv/locality.h"

#include <algorithm>

#include <spdlog/fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "server/core/steady_clock.h"

namespace sv {

LocalityAssignment::LocalityAssignment(const areanode::AreanodeTree& tree, int threads,
                                       int max_players, const LocalityOptions& options)
    : tree_(tree),
      options_(options),
      partition_(tree, threads),
      thread_of_(static_cast<size_t>(max_players) + 1, -1),
      leaf_of_(static_cast<size_t>(max_players) + 1, -1),
      leaf_load_(static_cast<size_t>(tree.leaf_count()), 1) {
  partition_.Grow(leaf_load_);  // no players yet: equal shares of leaves
}

void LocalityAssignment::Update(const game::World& world, uint64_t tick) {
  std::fill(leaf_load_.begin(), leaf_load_.end(), 0);
  int players = 0;
  for (game::EntityId p = 1; p < static_cast<int>(thread_of_.size()); ++p) {
    const game::Edict& e = world.Get(p);
    if ((e.flags & game::kFlagConnected) == 0) {
      leaf_of_[p] = -1;
      continue;
    }
    leaf_of_[p] = tree_.LeafAt(e.origin, leaf_of_[p]);  // most players stay in last frame's leaf
    ++leaf_load_[leaf_of_[p]];
    ++players;
  }

  if (tick >= last_rebalance_tick_ + static_cast<uint64_t>(options_.rebalance_ticks)) {
    last_rebalance_tick_ = tick;
    const std::vector<uint64_t> load = partition_.PartLoads(leaf_load_);
    const auto [lo, hi] = std::minmax_element(load.begin(), load.end());
    const double mean = static_cast<double>(players) / partition_.parts();
    if (players >= partition_.parts() &&
        static_cast<double>(*hi - *lo) > options_.rebalance_threshold * mean) {
      const uint64_t t0 = core::SteadyNs();
      const int moved = partition_.Improve(leaf_load_);
      const double ms = static_cast<double>(core::SteadyNs() - t0) / 1e6;
      if (moved > 0) {
        ++rebalances_;
        leaves_moved_ += static_cast<uint64_t>(moved);
      }
      if (spdlog::should_log(spdlog::level::debug)) {
        const std::vector<uint64_t> after = partition_.PartLoads(leaf_load_);
        spdlog::debug("locality: players per thread {} -> {} ({} leaves moved in {:.2f} ms)",
                      fmt::join(load, "/"), fmt::join(after, "/"), moved, ms);
      }
    }
  }

  for (game::EntityId p = 1; p < static_cast<int>(thread_of_.size()); ++p) {
    if (leaf_of_[p] < 0) {
      thread_of_[p] = -1;
      continue;
    }
    const int owner = partition_.owner(leaf_of_[p]);
    const int current = thread_of_[p];
    if (current == owner) continue;
    if (current < 0) {  // joined: no thread to stay with
      thread_of_[p] = static_cast<int16_t>(owner);
      continue;
    }
    const core::Vec3 o = world.Get(p).origin;
    const float m = options_.margin;
    tree_.LeavesTouching(core::Bounds{{o.x - m, o.y - m, o.z}, {o.x + m, o.y + m, o.z}},
                         &touching_);
    const bool near_own = std::any_of(touching_.begin(), touching_.end(),
                                      [&](int leaf) { return partition_.owner(leaf) == current; });
    if (near_own) continue;
    thread_of_[p] = static_cast<int16_t>(owner);
    ++migrations_;
  }
}

}  // namespace sv
