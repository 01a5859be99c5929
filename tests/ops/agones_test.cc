// The server's Agones SDK calls against a local HTTP endpoint standing in for the SDK sidecar (a
// real cpp-httplib server in this test that records every call): the real server binary with
// --agones must POST /ready once it has recovered and its ports answer (retrying while the
// "sidecar" fails), /health on its interval, and /shutdown after a clean --duration end, in
// that order and nothing after; a SIGTERM ends it without /shutdown. No Agones sidecar runs
// here (deploy/README.md says what was and was not run); agones_sdk_test.cc tries the SDK
// against listeners that answer badly.
#include <catch2/catch.hpp>

#include <signal.h>
#include <stdlib.h>

#include <chrono>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <httplib.h>

#include "server/core/steady_clock.h"
#include "tests/server/test_client.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/server_ports.h"
#include "tests/support/subprocess.h"

namespace {

using testing_util::Subprocess;

const std::string kBin = AS_BIN_DIR;

struct Call {
  std::string path;
  uint64_t ms = 0;          // steady clock
  bool game_port_up = false;  // the lobby answered getchallenge when the call arrived
  std::string body;
};

// The stand-in sidecar: records calls; answers 503 to the first `fail_ready` /ready calls, and
// answers /shutdown only after `stall_shutdown_ms` (a sidecar that accepts and does not answer).
// The game server binds ports the system picks and names them in `stats_path` before it starts
// the SDK, so a /ready call finds its lobby port there.
class FakeSidecar {
 public:
  FakeSidecar(const std::string& stats_path, int fail_ready, int stall_shutdown_ms = 0)
      : stats_path_(stats_path), fail_ready_(fail_ready) {
    for (const char* path : {"/ready", "/health", "/shutdown"}) {
      http_.Post(path, [this, path, stall_shutdown_ms](const httplib::Request& req, httplib::Response& res) {
        Call c{path, core::SteadyMs(), false, req.body};
        if (c.path == "/ready") {
          uint32_t challenge = 0;
          svtest::ServerPorts ports;
          c.game_port_up = svtest::WaitForServerPorts(stats_path_, 0, &ports) &&
                           svtest::GetChallenge(ports.lobby, &challenge).ok();
        }
        {
          std::lock_guard<std::mutex> lock(mu_);
          calls_.push_back(c);
        }
        if (c.path == "/shutdown" && stall_shutdown_ms > 0) {
          std::this_thread::sleep_for(std::chrono::milliseconds(stall_shutdown_ms));
        }
        std::lock_guard<std::mutex> lock(mu_);
        if (c.path == "/ready" && fail_ready_ > 0) {
          --fail_ready_;
          res.status = 503;
          return;
        }
        res.set_content("{}", "application/json");
      });
    }
    port_ = static_cast<uint16_t>(http_.bind_to_any_port("127.0.0.1"));
    thread_ = std::thread([this] { http_.listen_after_bind(); });
    while (!http_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~FakeSidecar() {
    http_.stop();
    thread_.join();
  }
  uint16_t port() const { return port_; }
  std::vector<Call> calls() {
    std::lock_guard<std::mutex> lock(mu_);
    return calls_;
  }

 private:
  const std::string stats_path_;
  httplib::Server http_;
  std::thread thread_;
  uint16_t port_ = 0;
  std::mutex mu_;
  std::vector<Call> calls_;
  int fail_ready_;
};

// The server on ports the system picks, naming them in `stats_path` (removed first: an old file
// names an old server's ports).
std::unique_ptr<Subprocess> StartServer(const std::string& stats_path, uint16_t sdk_port, const std::string& data,
                                        const std::vector<std::string>& extra) {
  // The child inherits the environment: the variable Agones sets in a game server's pod.
  setenv("AGONES_SDK_HTTP_PORT", std::to_string(sdk_port).c_str(), 1);
  std::remove(stats_path.c_str());
  std::vector<std::string> argv = {kBin + "/aftershock-server", "--port", "0", "--stats-out", stats_path,
                                   "--bind", "127.0.0.1", "--threads", "2", "--data-dir", data,
                                   "--log-level", "warn", "--agones", "--agones-health-ms", "200"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  auto p = std::make_unique<Subprocess>(argv, data + ".out", data + ".err");
  unsetenv("AGONES_SDK_HTTP_PORT");
  return p;
}

}  // namespace

TEST_CASE("agones: Ready after recovery with the ports open, Health on its interval, Shutdown at a clean end") {
  const testing_util::ScratchDir scratch("aftershock_agones_test");  // goes after the processes
  const std::string data = scratch.Path("data");
  const std::string stats = scratch.Path("stats.json");
  // A first life leaves state behind, so the run below starts with a recovery.
  {
    FakeSidecar sidecar(stats, 0);
    auto first = StartServer(stats, sidecar.port(), data, {"--duration", "1"});
    REQUIRE(first->Wait(60) == 0);
  }
  FakeSidecar sidecar(stats, 2);  // the sidecar is not ready at first: the server must retry
  const uint64_t started = core::SteadyMs();
  auto server = StartServer(stats, sidecar.port(), data, {"--duration", "3"});
  REQUIRE(server->Wait(60) == 0);
  const uint64_t ended = core::SteadyMs();
  const std::vector<Call> calls = sidecar.calls();
  REQUIRE(calls.size() >= 5);
  // Sequence: /ready (three times: two refused), then only /health, then /shutdown last.
  for (int i = 0; i < 3; ++i) {
    INFO("call " << i);
    CHECK(calls[i].path == "/ready");
    CHECK(calls[i].game_port_up);  // recovered and listening before Ready
    CHECK(calls[i].body == "{}");
  }
  CHECK(calls[1].ms - calls[0].ms >= 400);  // retried after the 500 ms retry delay, not spun
  size_t health = 0;
  for (size_t i = 3; i + 1 < calls.size(); ++i) {
    INFO("call " << i << " " << calls[i].path);
    CHECK(calls[i].path == "/health");
    if (i > 3) CHECK(calls[i].ms - calls[i - 1].ms >= 150);  // on the 200 ms interval
    ++health;
  }
  CHECK(calls.back().path == "/shutdown");
  // About 3 s of health pings every 200 ms (the first starts after the third Ready, ~1 s in).
  CHECK(health >= 5);
  CHECK(health <= 20);
  // Shutdown came after the --duration end, just before the process exited.
  CHECK(calls.back().ms >= started + 3000);
  CHECK(calls.back().ms <= ended);
}

// A sidecar that accepted /shutdown and never answered held the exit for 5 tries of 2 s each (14 s
// with the health thread's last call): the tries now stop once AgonesSdk::kShutdownBudgetMs has
// passed, so the stalled sidecar sees two at most.
TEST_CASE("agones: a sidecar that never answers Shutdown is given up after a few seconds of tries") {
  const testing_util::ScratchDir scratch("aftershock_agones_stall");  // goes after the processes
  const std::string data = scratch.Path("data");
  const std::string stats = scratch.Path("stats.json");
  FakeSidecar sidecar(stats, 0, /*stall_shutdown_ms=*/4000);
  auto server = StartServer(stats, sidecar.port(), data, {"--duration", "1"});
  REQUIRE(server->Wait(60) == 0);
  int shutdowns = 0;
  for (const Call& c : sidecar.calls()) shutdowns += c.path == "/shutdown";
  CHECK(shutdowns >= 1);
  CHECK(shutdowns <= 2);
  CHECK_THAT(testing_util::ReadFile(data + ".err"), Catch::Contains("agones: shutdown not delivered"));
}

TEST_CASE("agones: a SIGTERM ends the server without Shutdown (Agones is already stopping it)") {
  const testing_util::ScratchDir scratch("aftershock_agones_sigterm");  // goes after the processes
  const std::string data = scratch.Path("data");
  const std::string stats = scratch.Path("stats.json");
  FakeSidecar sidecar(stats, 0);
  auto server = StartServer(stats, sidecar.port(), data, {});
  const uint64_t deadline = core::SteadyMs() + 30000;
  auto count = [&](const std::string& path) {
    int n = 0;
    for (const Call& c : sidecar.calls()) n += c.path == path;
    return n;
  };
  while (count("/health") < 2 && core::SteadyMs() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  REQUIRE(count("/health") >= 2);
  server->Signal(SIGTERM);
  REQUIRE(server->Wait(30) == 0);
  CHECK(count("/ready") == 1);
  CHECK(count("/shutdown") == 0);
}
