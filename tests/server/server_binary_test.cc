// The real aftershock-server binary as a subprocess: bad flags exit 2 with the help text; a
// --duration run with clients exits 0 and leaves a valid stats JSON (required keys, breakdown
// summing to 100, per-thread entries); SIGTERM shuts it down cleanly with the stats written.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/server/mini_json.h"
#include "tests/server/play_harness.h"
#include "tests/server/test_client.h"

namespace {

pid_t Spawn(const std::vector<std::string>& args, bool quiet) {
  const pid_t pid = fork();
  if (pid == 0) {
    if (quiet) {
      FILE* null = std::fopen("/dev/null", "w");
      if (null) {
        dup2(fileno(null), 1);
        dup2(fileno(null), 2);
      }
    }
    std::vector<char*> argv;
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(AS_SERVER_BIN, argv.data());
    _exit(127);
  }
  return pid;
}

int WaitExit(pid_t pid, int timeout_s) {
  for (int i = 0; i < timeout_s * 100; ++i) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  return -2;
}

bool WaitServerUp(uint16_t port) {
  for (int i = 0; i < 100; ++i) {
    uint32_t challenge;
    std::vector<uint8_t> reply;
    if (svtest::Connectionless(port, proto::EncodeRequest(proto::ConnectionlessRequest::kGetChallenge),
                               50, &reply).ok()) {
      return proto::ParseChallengeReply(reply, &challenge).ok();
    }
  }
  return false;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void CheckStats(const svtest::Json& j, int threads) {
  for (const char* key : {"threads", "locking", "frame_mode", "map", "players", "frames",
                          "requests", "replies", "breakdown_pct", "per_thread", "frame_ms",
                          "lock", "invalid_packets", "kicked", "requests_per_thread_per_frame"}) {
    INFO(key);
    REQUIRE(j.Has(key));
  }
  CHECK(j["threads"].number == threads);
  double sum = 0;
  for (const char* k : {"world", "receive", "exec", "lock_leaf", "lock_parent", "reply",
                        "checkpoint", "log_sync", "intra_wait", "inter_wait", "idle"}) {
    INFO(k);
    REQUIRE(j["breakdown_pct"].Has(k));
    sum += j["breakdown_pct"][k].number;
  }
  CHECK(sum == Approx(100.0).margin(0.05));
  REQUIRE(j["per_thread"].array.size() == static_cast<size_t>(threads));
  for (const char* k : {"mean", "p50", "p99", "max"}) CHECK(j["frame_ms"].Has(k));
  for (const char* k : {"leaves_per_request", "relock_pct", "shared_leaves_pct"}) CHECK(j["lock"].Has(k));
  CHECK(j["frames"].number > 0);
}

}  // namespace

TEST_CASE("bad flags exit 2 with the help text") {
  CHECK(WaitExit(Spawn({AS_SERVER_BIN, "--locking", "bogus"}, true), 10) == 2);
  CHECK(WaitExit(Spawn({AS_SERVER_BIN, "--no-such-flag"}, true), 10) == 2);
  CHECK(WaitExit(Spawn({AS_SERVER_BIN, "--threads", "0"}, true), 10) == 2);
  CHECK(WaitExit(Spawn({AS_SERVER_BIN, "--help"}, true), 10) == 0);
}

TEST_CASE("a --duration run with clients exits 0 and writes valid stats") {
  const uint16_t port = 28600;
  const std::string stats = "/tmp/aftershock_binary_test_" + std::to_string(getpid()) + ".json";
  std::remove(stats.c_str());
  const std::string data = "/tmp/aftershock_binary_test_" + std::to_string(getpid()) + ".data";
  std::filesystem::remove_all(data);
  const pid_t pid = Spawn({AS_SERVER_BIN, "--port", std::to_string(port), "--bind", "127.0.0.1",
                           "--threads", "2", "--duration", "4", "--stats-out", stats,
                           "--stats-interval", "1", "--log-level", "warn", "--data-dir", data},
                          true);
  REQUIRE(WaitServerUp(port));
  svtest::PlayResult r = svtest::Play(port, 6, "bin", 1500, 1500, 5);
  INFO(r.join_error);
  CHECK(r.joined == 6);
  CHECK(r.all_replied());
  REQUIRE(WaitExit(pid, 20) == 0);
  const svtest::Json j = svtest::ParseJson(ReadFile(stats));
  CheckStats(j, 2);
  CHECK(j["requests"].number > 0);
  CHECK(j["replies"].number > 0);
  CHECK(j["max_players_online"].number == 6);
  for (const char* k : {"recovery", "checkpoint", "log"}) CHECK(j.Has(k));  // durability on
  std::remove(stats.c_str());
  std::filesystem::remove_all(data);
}

TEST_CASE("SIGTERM shuts the server down cleanly with stats written") {
  const uint16_t port = 28620;
  const std::string stats = "/tmp/aftershock_sigterm_test_" + std::to_string(getpid()) + ".json";
  std::remove(stats.c_str());
  const pid_t pid = Spawn({AS_SERVER_BIN, "--port", std::to_string(port), "--bind", "127.0.0.1",
                           "--threads", "1", "--locking", "sequential", "--stats-out", stats,
                           "--log-level", "warn", "--data-dir", ""},
                          true);
  REQUIRE(WaitServerUp(port));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  kill(pid, SIGTERM);
  REQUIRE(WaitExit(pid, 10) == 0);
  CheckStats(svtest::ParseJson(ReadFile(stats)), 1);
  std::remove(stats.c_str());
}
