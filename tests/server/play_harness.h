// Test harness: drives N TestClients against a live server (join, play at 30 Hz, drain) and
// checks a stopped server's world for consistency. Used by the server integration tests.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "server/sv/server.h"
#include "tests/server/test_client.h"

namespace svtest {

struct PlayResult {
  int joined = 0;
  std::string join_error;             // first join failure, if any
  std::vector<uint32_t> sent;         // last command sequence sent, per client
  std::vector<uint32_t> applied;      // last applied sequence seen in a snapshot, per client
  std::vector<uint64_t> snapshots;    // snapshots decoded, per client
  uint64_t snapshot_errors = 0;
  bool all_replied() const;           // every client got snapshots and saw its last command
};

// Joins `n` clients (names "<prefix><i>"), plays for play_ms with commands every 33 ms (moves,
// turns, jumps, attacks), then stops sending and services until every client saw its last
// command applied or drain_ms passed. Clients are returned so callers can keep using them.
PlayResult Play(uint16_t lobby_port, int n, const std::string& prefix, int play_ms, int drain_ms,
                uint64_t seed, std::vector<std::unique_ptr<TestClient>>* clients = nullptr);

// Records a short game into `data_dir` (emptied first) for replay tests: an in-process server
// (2 threads, areanode-opt, durable with hash.log) with `n` clients playing for play_ms (Play).
// "" when the server stopped cleanly and every client joined, else what failed.
std::string RecordTrace(const std::string& data_dir, int n, const std::string& prefix, int play_ms,
                        uint64_t seed);

// After Server::Wait(): "" if every joined player record exists with its name (online, or in
// the record store), no connected
// player's box is inside solid geometry, and every pickup is still a pickup; else what failed.
std::string CheckWorld(const sv::Server& server, const std::vector<std::string>& names);

// Options for an in-process test server on 127.0.0.1 at ports the system picks (port 0): read
// them back with Server::lobby_port() / worker_port() after Create.
sv::ServerOptions TestOptions(sv::LockingScheme locking, int threads);

}  // namespace svtest
