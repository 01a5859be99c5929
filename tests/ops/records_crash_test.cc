// kill -9 while the record store evicts: the real server binary with a tiny store (--max-records
// 6) under a churn of one-shot and returning names, so nearly every leave evicts a record, is
// killed at random moments and restarted with each checkpoint algorithm; every restart must
// recover the state hash the live server logged for that tick (--hash-log).
#include <catch2/catch.hpp>

#include <signal.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "server/core/steady_clock.h"
#include "tests/server/test_client.h"
#include "tests/support/mini_json.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/server_ports.h"
#include "tests/support/subprocess.h"

namespace {

using testing_util::ReadFile;
using testing_util::ScratchPath;
using testing_util::Subprocess;

const std::string kBin = AS_BIN_DIR;

bool ServerAnswers(uint16_t port) {
  for (int i = 0; i < 600; ++i) {
    uint32_t challenge = 0;
    if (svtest::GetChallenge(port, &challenge).ok()) return true;
  }
  return false;
}

// Server n on lobby `port` (0: ports the system picks; a restart takes its predecessor's, where
// the churning clients look for it). The lobby port it bound: read back from its stats file.
std::unique_ptr<Subprocess> StartServer(const std::string& data, const std::string& algorithm, int n,
                                        uint16_t* port) {
  std::remove(ScratchPath("stats" + std::to_string(n)).c_str());
  auto server = std::make_unique<Subprocess>(
      std::vector<std::string>{kBin + "/aftershock-server", "--port", std::to_string(*port),
                               "--bind", "127.0.0.1", "--threads", "2", "--max-players", "16",
                               "--max-records", "6", "--data-dir", data, "--checkpoint", algorithm,
                               "--hash-log", "--stats-out", ScratchPath("stats" + std::to_string(n)),
                               "--stats-interval", "0.2", "--log-level", "warn"},
      ScratchPath("server.out"), ScratchPath("server" + std::to_string(n) + ".err"));
  svtest::ServerPorts ports;
  *port = svtest::WaitForServerPorts(ScratchPath("stats" + std::to_string(n)), 60000, &ports) ? ports.lobby : 0;
  return server;
}

// The last hash line for `tick` among the first `size` bytes of the hash log.
std::string LiveHash(const std::string& log, size_t size, uint64_t tick) {
  std::istringstream in(log.substr(0, size));
  std::string found, line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    uint64_t t = 0;
    std::string hash;
    if ((fields >> t >> hash) && t == tick) found = hash;
  }
  return found;
}

// Evictions so far, from the newest stats file of server n (-1 if not readable yet).
double Evicted(int n) {
  try {
    const svtest::Json j = svtest::ParseJson(ReadFile(ScratchPath("stats" + std::to_string(n))));
    return j["records"]["evicted"].number;
  } catch (const std::exception&) {
    return -1;
  }
}

}  // namespace

TEST_CASE("kill -9 while the record store evicts: every restart recovers the live hash") {
  const std::string data = ScratchPath("data");
  std::filesystem::remove_all(data);
  const std::string hash_log = data + "/hash.log";
  const std::vector<std::string> algorithms = {"cou", "naive", "pingpong", "none"};
  uint16_t port = 0;
  auto server = StartServer(data, algorithms[0], 0, &port);
  REQUIRE(port != 0);
  REQUIRE(ServerAnswers(port));
  // Churn: 20 names, each joins and leaves at once; 6 records fit, so leaves evict all the time
  // and some joins resume a record that survived.
  std::atomic<bool> stop{false};
  std::vector<std::thread> churn;
  for (int t = 0; t < 2; ++t) {
    churn.emplace_back([&stop, t, port] {
      std::mt19937 rng(static_cast<uint32_t>(t + 1));
      while (!stop.load()) {
        svtest::TestClient c;
        svtest::JoinParams p;
        p.lobby_port = port;
        p.name = "churn" + std::to_string(rng() % 20);
        p.token = 5;
        if (c.Join(p, 2000).ok()) c.Disconnect();
      }
    });
  }
  std::mt19937 rng(static_cast<uint32_t>(std::random_device{}()));
  uint64_t last_recovered = 0;
  double evicted_before = 0;
  for (int k = 1; k < static_cast<int>(algorithms.size()); ++k) {
    // Kill only once this server has evicted records: the kill lands amid evictions.
    const uint64_t deadline = core::SteadyMs() + 30000;
    while (Evicted(k - 1) <= evicted_before && core::SteadyMs() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    REQUIRE(Evicted(k - 1) > evicted_before);
    std::this_thread::sleep_for(std::chrono::milliseconds(200 + rng() % 800));
    server->Kill(SIGKILL);
    const size_t size_at_kill = std::filesystem::file_size(hash_log);
    server = StartServer(data, algorithms[k], k, &port);
    REQUIRE(port != 0);
    REQUIRE(ServerAnswers(port));
    INFO("kill " << k << ", restarted with --checkpoint " << algorithms[k] << "; "
                 << ReadFile(ScratchPath("server" + std::to_string(k) + ".err")));
    const svtest::Json stats = svtest::ParseJson(ReadFile(ScratchPath("stats" + std::to_string(k))));
    const svtest::Json& r = stats["recovery"];
    const auto tick = static_cast<uint64_t>(r["recovered_tick"].number);
    CHECK(r["found_state"].boolean);
    CHECK(tick > last_recovered);
    CHECK(r["state_hash"].string == LiveHash(ReadFile(hash_log), size_at_kill, tick));
    last_recovered = tick;
    // The eviction count is in the state: the restarted server starts from the recovered one.
    const double recovered_evictions = stats["records"]["evicted"].number;
    CHECK(recovered_evictions > 0);
    evicted_before = recovered_evictions;
  }
  stop.store(true);
  for (auto& t : churn) t.join();
  server->Kill(SIGTERM);
  std::filesystem::remove_all(data);
}
