// Play harness: scripted clients and the world consistency check.
#include "tests/server/play_harness.h"

#include <chrono>
#include <filesystem>
#include <random>
#include <thread>

#include "server/core/steady_clock.h"
#include "server/game/game_constants.h"

namespace svtest {

bool PlayResult::all_replied() const {
  if (joined == 0 || static_cast<size_t>(joined) != sent.size()) return false;
  for (size_t i = 0; i < sent.size(); ++i) {
    if (snapshots[i] == 0 || applied[i] != sent[i]) return false;
  }
  return true;
}

PlayResult Play(uint16_t lobby_port, int n, const std::string& prefix, int play_ms, int drain_ms,
                uint64_t seed, std::vector<std::unique_ptr<TestClient>>* out_clients) {
  PlayResult r;
  std::vector<std::unique_ptr<TestClient>> local;
  std::vector<std::unique_ptr<TestClient>>& clients = out_clients ? *out_clients : local;
  clients.clear();
  for (int i = 0; i < n; ++i) {
    auto c = std::make_unique<TestClient>();
    JoinParams p;
    p.lobby_port = lobby_port;
    p.name = prefix + std::to_string(i);
    p.token = 1000 + static_cast<uint64_t>(i);
    const core::Status s = c->Join(p, 3000);
    if (!s.ok()) {
      if (r.join_error.empty()) r.join_error = p.name + ": " + s.ToString();
      continue;
    }
    clients.push_back(std::move(c));
  }
  r.joined = static_cast<int>(clients.size());
  std::mt19937_64 rng(seed);
  std::vector<float> yaw(clients.size());
  for (float& y : yaw) y = static_cast<float>(rng() % 360);
  const uint64_t end = core::SteadyMs() + static_cast<uint64_t>(play_ms);
  uint64_t next = core::SteadyMs();
  while (core::SteadyMs() < end) {
    for (size_t i = 0; i < clients.size(); ++i) {
      yaw[i] += static_cast<float>(static_cast<int>(rng() % 21) - 10);
      if (yaw[i] > 180) yaw[i] -= 360;
      if (yaw[i] < -180) yaw[i] += 360;
      const uint8_t buttons = static_cast<uint8_t>((rng() % 8 == 0 ? 1 : 0) | (rng() % 16 == 0 ? 2 : 0));
      const int16_t side = static_cast<int16_t>(static_cast<int>(rng() % 3) * 200 - 200);
      clients[i]->SendCommand(400, side, yaw[i], buttons, 33);
    }
    next += 33;
    while (core::SteadyMs() < next) {
      for (auto& c : clients) c->Service(0);
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  const uint64_t drain_end = core::SteadyMs() + static_cast<uint64_t>(drain_ms);
  uint64_t last_nudge = 0;
  for (;;) {
    bool done = true;
    for (auto& c : clients) {
      c->Service(0);
      done = done && c->snapshots() > 0 && c->last_applied_sequence() == c->last_sent_sequence();
    }
    if (done || core::SteadyMs() > drain_end) break;
    // Commands travel unreliably: a client whose last command was lost resends it (with its
    // redundant copies) by sending one more idle command, as a real client keeps sending.
    if (core::SteadyMs() > last_nudge + 100) {
      last_nudge = core::SteadyMs();
      for (auto& c : clients) {
        if (c->last_applied_sequence() != c->last_sent_sequence()) c->SendCommand(0, 0, 0, 0, 10);
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  for (auto& c : clients) {
    r.sent.push_back(c->last_sent_sequence());
    r.applied.push_back(c->last_applied_sequence());
    r.snapshots.push_back(c->snapshots());
    r.snapshot_errors += c->snapshot_errors();
  }
  return r;
}

std::string RecordTrace(const std::string& data_dir, int n, const std::string& prefix, int play_ms,
                        uint64_t seed) {
  sv::ServerOptions o = TestOptions(sv::LockingScheme::kAreanodeOpt, 2);
  o.data_dir = data_dir;
  o.hash_log = true;
  std::filesystem::remove_all(data_dir);
  std::unique_ptr<sv::Server> server;
  const core::Status s = sv::Server::Create(o, &server);
  if (!s.ok()) return "server: " + s.ToString();
  server->Start();
  const PlayResult play = Play(server->lobby_port(), n, prefix, play_ms, 3000, seed);
  server->RequestStop();
  server->Wait();
  if (!server->fatal_status().ok()) return "server failed: " + server->fatal_status().ToString();
  if (play.joined != n) return "joined " + std::to_string(play.joined) + " of " + std::to_string(n) + ": " + play.join_error;
  return "";
}

std::string CheckWorld(const sv::Server& server, const std::vector<std::string>& names) {
  const game::World& w = server.world();
  for (const std::string& name : names) {
    // Online players are in a player slot, those that left in the record store.
    const game::EntityId online = w.FindPlayer(name);
    const game::EntityId id = online != 0 ? online : w.FindRecord(name);
    if (id == 0) return "player record " + name + " is lost";
    const game::Edict& e = w.Get(id);
    const game::EntityKind kind = online != 0 ? game::EntityKind::kPlayer : game::EntityKind::kRecord;
    if (e.kind != kind || !(e.flags & game::kFlagInUse)) {
      return "player " + name + " is no longer a player record";
    }
  }
  for (game::EntityId id = 1; id <= w.max_players(); ++id) {
    const game::Edict& e = w.Get(id);
    if (!(e.flags & game::kFlagConnected) || (e.flags & game::kFlagDead)) continue;
    const collision::Trace t = server.collision().TraceBox(e.origin, e.origin, e.mins, e.maxs);
    if (t.start_solid) {
      return "player " + std::string(e.name) + " is inside a wall at (" +
             std::to_string(e.origin.x) + ", " + std::to_string(e.origin.y) + ", " +
             std::to_string(e.origin.z) + ")";
    }
  }
  for (int i = 0; i < w.pickup_count(); ++i) {
    if (w.Get(w.first_pickup() + i).kind != game::EntityKind::kPickup) {
      return "pickup " + std::to_string(i) + " was lost";
    }
  }
  return "";
}

sv::ServerOptions TestOptions(sv::LockingScheme locking, int threads) {
  sv::ServerOptions o;
  o.map_path = "maps/dm_arena.map";
  o.bind_address = "127.0.0.1";
  o.port = 0;
  o.threads = threads;
  o.max_players = 32;
  o.locking = locking;
  o.frame_mode = sv::FrameMode::kFixed;
  o.region_check = true;
  return o;
}

}  // namespace svtest
