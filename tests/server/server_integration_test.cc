// Integration: an in-process server on loopback with codec-only test clients, for every locking
// scheme and 1, 2 and 4 worker threads: everyone joins, plays, gets replies to its requests
// (the applied sequence reaches the last one sent), the world stays consistent, the server stops
// cleanly and its stats are complete. Every server binds ports the system picks.
#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <spdlog/spdlog.h>

#include "server/sv/server.h"
#include "server/sv/stats_report.h"
#include "tests/server/play_harness.h"
#include "tests/support/mini_json.h"
#include "tests/support/scratch_dir.h"

namespace {

using sv::LockingScheme;

void RunScenario(sv::ServerOptions o, int clients, int play_ms) {
  spdlog::set_level(spdlog::level::warn);
  std::unique_ptr<sv::Server> server;
  const core::Status s = sv::Server::Create(o, &server);
  REQUIRE(s.ok());
  server->Start();
  const std::string prefix = std::string("p") + sv::LockingName(o.locking) + "_";
  svtest::PlayResult r = svtest::Play(server->lobby_port(), clients, prefix, play_ms, 3000, 7);
  server->RequestStop();
  server->Wait();
  INFO("join error: " << r.join_error);
  REQUIRE(r.joined == clients);
  CHECK(r.snapshot_errors == 0);
  for (size_t i = 0; i < r.sent.size(); ++i) {
    INFO("client " << i << " sent " << r.sent[i] << " applied " << r.applied[i] << " snapshots "
                   << r.snapshots[i]);
    CHECK(r.snapshots[i] > 0);
    CHECK(r.applied[i] == r.sent[i]);
  }
  std::vector<std::string> names;
  for (int i = 0; i < clients; ++i) names.push_back(prefix + std::to_string(i));
  CHECK(svtest::CheckWorld(*server, names) == "");

  const sv::StatsReport rep = server->Report();
  CHECK(rep.joins == static_cast<uint64_t>(clients));
  CHECK(rep.frames > 0);
  CHECK(rep.requests > 0);
  CHECK(rep.commands > 0);
  CHECK(rep.replies > 0);
  CHECK(rep.invalid_packets == 0);
  CHECK(rep.kicked == 0);
  // Every thread's time is fully attributed: the breakdown sums to 100.
  double sum = 0;
  for (double p : sv::Percentages(rep.total_ns)) sum += p;
  CHECK(sum == Approx(100.0).margin(0.01));
  const bool leaf_locking = o.locking == LockingScheme::kAreanode ||
                            o.locking == LockingScheme::kAreanodeOpt;
  if (leaf_locking) {
    CHECK(rep.leaves_per_request >= 1.0);
    CHECK(rep.leaves_per_request <= 16.0);
  } else {
    CHECK(rep.leaf_acquisitions == 0);
  }
  // The JSON form parses and carries the required keys.
  const svtest::Json j = svtest::ParseJson(sv::ToJson(rep));
  for (const char* key : {"threads", "locking", "frame_mode", "map", "players", "frames",
                          "requests", "replies", "kill_events", "breakdown_pct", "per_thread", "frame_ms",
                          "lock", "invalid_packets", "kicked", "requests_per_thread_per_frame"}) {
    INFO(key);
    CHECK(j.Has(key));
  }
  CHECK(j["per_thread"].array.size() == static_cast<size_t>(o.threads));
  CHECK(j["threads"].number == o.threads);
}

}  // namespace

// The names of this process's threads, as top -H and ps -L show them.
std::multiset<std::string> ThreadNames() {
  std::multiset<std::string> names;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream comm(task.path() / "comm");
    std::string name;
    std::getline(comm, name);
    names.insert(name);
  }
  return names;
}

TEST_CASE("the server's threads carry names an operator can tell apart") {
  spdlog::set_level(spdlog::level::warn);
  sv::ServerOptions o = svtest::TestOptions(LockingScheme::kAreanodeOpt, 2);
  const testing_util::ScratchDir scratch("aftershock_thread_names");
  o.data_dir = scratch.Path("data");  // durability on: the log and checkpoint threads run
  std::unique_ptr<sv::Server> server;
  REQUIRE(sv::Server::Create(o, &server).ok());
  server->Start();
  // A thread names itself once it runs: poll until every name shows, or 10 s.
  const std::vector<std::string> want = {"as-frame-0", "as-frame-1", "as-lobby", "as-log",
                                         "as-checkpoint"};
  std::multiset<std::string> names;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  for (;;) {
    names = ThreadNames();
    bool all = true;
    for (const std::string& name : want) all = all && names.count(name) > 0;
    if (all || std::chrono::steady_clock::now() > deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  server->RequestStop();
  server->Wait();
  server.reset();
  for (const std::string& name : want) {
    INFO(name);
    CHECK(names.count(name) == 1);
  }
}

TEST_CASE("sequential scheme with 1 thread: clients play and get replies") {
  RunScenario(svtest::TestOptions(LockingScheme::kSequential, 1), 8, 2000);
}

TEST_CASE("global scheme: clients play and get replies") {
  int threads = GENERATE(1, 2, 4);
  INFO("threads " << threads);
  RunScenario(svtest::TestOptions(LockingScheme::kGlobal, threads), 12, 2000);
}

TEST_CASE("areanode scheme: clients play and get replies") {
  int threads = GENERATE(1, 2, 4);
  INFO("threads " << threads);
  RunScenario(svtest::TestOptions(LockingScheme::kAreanode, threads), 12, 2000);
}

TEST_CASE("areanode-opt scheme: clients play and get replies") {
  int threads = GENERATE(1, 2, 4);
  INFO("threads " << threads);
  RunScenario(svtest::TestOptions(LockingScheme::kAreanodeOpt, threads), 12, 2000);
}

TEST_CASE("request frame mode (the paper's): clients play and get replies") {
  sv::ServerOptions o = svtest::TestOptions(LockingScheme::kAreanodeOpt, 2);
  o.frame_mode = sv::FrameMode::kRequest;
  RunScenario(o, 12, 2000);
}

TEST_CASE("locality assignment: commands follow migrating players, none lost, repeated or refused") {
  spdlog::set_level(spdlog::level::warn);
  sv::ServerOptions o = svtest::TestOptions(LockingScheme::kAreanodeOpt, 2);
  o.assign = sv::Assignment::kLocality;
  o.areanode_depth = 7;     // small leaves: the clients cross borders often
  o.migrate_margin = 0;
  o.rebalance_s = 0.2;
  std::unique_ptr<sv::Server> server;
  REQUIRE(sv::Server::Create(o, &server).ok());
  server->Start();
  // Rounds of play until players have migrated (a deadline, not a timing assumption): every
  // round's clients must see every command they sent applied.
  std::vector<std::string> names;
  for (int round = 0; round < 8; ++round) {
    const std::string prefix = "loc" + std::to_string(round) + "_";
    svtest::PlayResult r = svtest::Play(server->lobby_port(), 8, prefix, 1500, 3000, 40 + round);
    INFO("round " << round << " join error: " << r.join_error);
    REQUIRE(r.joined == 8);
    for (size_t i = 0; i < r.sent.size(); ++i) {
      INFO("client " << i << " sent " << r.sent[i] << " applied " << r.applied[i]);
      CHECK(r.applied[i] == r.sent[i]);
    }
    for (int i = 0; i < 8; ++i) names.push_back(prefix + std::to_string(i));
    const sv::StatsReport rep = server->Report();
    if (rep.assignment.migrations > 0 && rep.assignment.routed_commands > 0) break;
  }
  server->RequestStop();
  server->Wait();
  const sv::StatsReport rep = server->Report();
  CHECK(rep.assignment.migrations > 0);
  CHECK(rep.assignment.routed_commands > 0);
  // The game refuses a command whose sequence is not above the player's last: a repeated or
  // reordered command would be counted here.
  CHECK(rep.replay.commands_refused == 0);
  CHECK(rep.invalid_packets == 0);
  CHECK(rep.kicked == 0);
  CHECK(svtest::CheckWorld(*server, names) == "");
}

TEST_CASE("locality assignment needs fixed frames") {
  sv::ServerOptions o = svtest::TestOptions(LockingScheme::kAreanodeOpt, 2);
  o.assign = sv::Assignment::kLocality;
  o.frame_mode = sv::FrameMode::kRequest;
  std::unique_ptr<sv::Server> server;
  const core::Status s = sv::Server::Create(o, &server);
  CHECK_FALSE(s.ok());
  CHECK(s.message().find("--frame-mode fixed") != std::string::npos);
}

TEST_CASE("round-robin assignment: clients play and get replies") {
  sv::ServerOptions o = svtest::TestOptions(LockingScheme::kAreanode, 2);
  o.assign = sv::Assignment::kRoundRobin;
  RunScenario(o, 8, 1500);
}
