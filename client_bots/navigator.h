// Bot behaviours: what a bot wants (NavMap: waypoints from the map file) and how it steers toward
// it (BotBrain: perception from snapshots, one UserCmd per client frame). Cheap by design: a
// handful of float operations per command and one pass over a snapshot's <= 64 entities.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "client_bots/bot_options.h"
#include "maps/map.h"
#include "server/core/status.h"
#include "server/core/vec3.h"
#include "server/protocol/messages.h"
#include "server/protocol/snapshot.h"

namespace bots {

// Places worth going to, taken from the map the server runs. Immutable after Build; shared
// read-only by every bot thread. Empty (no waypoints) when no map is known: bots then navigate
// from snapshot feedback alone.
struct NavMap {
  std::vector<core::Vec3> waypoints;  // spawns, pickups, teleporters, jump pads
  std::vector<core::Vec3> pickups;    // item_* / weapon_* origins
  std::vector<core::Vec3> movers;     // teleporter and jump pad trigger centres
  core::Vec3 hotspot;                 // the waypoint nearest the map's centre

  bool empty() const { return waypoints.empty(); }
  static NavMap Build(const maps::Map& map);
};

// Loads `path` with the map loader and builds its NavMap.
core::Status LoadNavMap(const std::string& path, NavMap* out);

// One bot's mind. Plain data, owned by its bot; touched only by the bot's thread.
struct BotBrain {
  Behavior role = Behavior::kWander;  // never kMixed: resolved by ChooseRole
  uint64_t rng = 1;
  uint16_t player_id = proto::kNoPlayer;

  // Perception, refreshed by Perceive from each snapshot.
  bool enemy_visible = false;
  core::Vec3 enemy;
  bool item_visible = false;
  core::Vec3 item;

  // Navigation.
  bool has_goal = false;
  core::Vec3 goal;
  float heading_deg = 0;        // walk direction when there is no goal
  uint64_t goal_until_ms = 0;   // give up on the goal then
  core::Vec3 check_origin;      // where we were at the last stuck check
  uint64_t check_ms = 0;
  uint64_t strafe_flip_ms = 0;
  int8_t strafe_dir = 1;
  uint8_t impulse_countdown = 0;
};

// The role of bot `index` for `behavior` (kMixed: 40% wander, 25% fight, 20% items, 15% hotspot).
Behavior ChooseRole(Behavior behavior, uint64_t seed, int index);

// Updates perception from a decoded snapshot (nearest live enemy, nearest available pickup).
void Perceive(const proto::Snapshot& snap, BotBrain* brain);

// Fills the movement fields of *cmd (angles, moves, buttons, impulse) for this frame, from the
// bot's own state `me`. Sequence and duration are the caller's.
void Steer(const proto::PlayerState& me, const NavMap& nav, uint64_t now_ms, BotBrain* brain,
           proto::UserCmd* cmd);

}  // namespace bots
