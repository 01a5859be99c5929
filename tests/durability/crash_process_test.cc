// The real aftershock-server killed with SIGKILL at random moments while aftershock-bots --verify
// play, and restarted on the same data directory each time (with a different checkpoint
// algorithm each time: the files are the same). Every restart must recover (the stats file's
// `recovery` object) to a state whose hash equals the hash the killed server logged live for
// the same tick (--hash-log), and the bots must see no durability violation: no command whose
// result a bot was shown is missing after a restart. Restarts replay the log serially or on 2 or 4
// threads (--replay-threads): the hash must match either way. The server's replay check (the log
// from the older backup to the recovered one) must never disagree. About 30 s.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <chrono>
#include <cstdio>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/mini_json.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/server_ports.h"
#include "tests/support/subprocess.h"

namespace {

using testing_util::ReadFile;
using testing_util::ScratchPath;
using testing_util::Subprocess;

const std::string kBin = AS_BIN_DIR;
constexpr int kBots = 8;
constexpr int kKills = 4;

// True once the lobby answers the connectionless status query (recovered and serving).
bool WaitServerUp(uint16_t port) {
  const int fd = socket(AF_INET, SOCK_DGRAM, 0);
  if (fd < 0) return false;
  timeval tv{0, 50000};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(port);
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const std::string query = "\xff\xff\xff\xffstatus";
  bool up = false;
  for (int i = 0; i < 400 && !up; ++i) {
    sendto(fd, query.data(), query.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof to);
    char buf[2048];
    const ssize_t n = recv(fd, buf, sizeof buf, 0);
    up = n > 5 && std::string(buf, 5) == "\xff\xff\xff\xffn";  // QuakeWorld's print reply
  }
  close(fd);
  return up;
}

// Server n on lobby `port` (0: ports the system picks; a restart takes its predecessor's, where
// the bots look for it). The lobby port it bound: read back from its stats file.
std::unique_ptr<Subprocess> StartServer(const std::string& data, const std::string& algorithm,
                                        int replay_threads, int n, uint16_t* port) {
  std::remove(ScratchPath("stats" + std::to_string(n)).c_str());
  const std::vector<std::string> argv = {
      kBin + "/aftershock-server", "--port", std::to_string(*port), "--bind", "127.0.0.1",
      "--threads", "2", "--max-players", "32", "--data-dir", data, "--checkpoint", algorithm,
      "--durability", "sync", "--replay-threads", std::to_string(replay_threads), "--hash-log",
      "--stats-out", ScratchPath("stats" + std::to_string(n)), "--stats-interval", "1", "--log-level", "warn"};
  auto server = std::make_unique<Subprocess>(argv, ScratchPath("server.out"),
                                             ScratchPath("server" + std::to_string(n) + ".err"));
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

TEST_CASE("kill -9 at random moments: every restart recovers the live state, "
          "nothing acknowledged is lost") {
  const std::string data = ScratchPath("data");
  std::filesystem::remove_all(data);
  const std::string hash_log = data + "/hash.log";
  const std::vector<std::string> algorithms = {"cou", "pingpong", "naive", "none", "cou"};
  const std::vector<int> replay_threads = {2, 1, 2, 4, 2};
  uint16_t port = 0;
  auto server = StartServer(data, algorithms[0], replay_threads[0], 0, &port);
  REQUIRE(port != 0);
  REQUIRE(WaitServerUp(port));
  const std::string bots_json = ScratchPath("bots.json");
  Subprocess bots({kBin + "/aftershock-bots", "--server", "127.0.0.1:" + std::to_string(port),
                   "--bots", std::to_string(kBots), "--duration", "24", "--verify", "--quiet",
                   "--identity-prefix", "crash", "--out", bots_json},
                  ScratchPath("bots.out"), ScratchPath("bots.err"));
  std::mt19937 rng(static_cast<uint32_t>(std::random_device{}()));
  uint64_t last_recovered = 0;
  int checks_matched = 0;
  for (int k = 1; k <= kKills; ++k) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1500 + rng() % 2500));
    server->Kill(SIGKILL);  // and reaped: the hash log holds all it wrote, nothing newer
    const size_t size_at_kill =
        std::filesystem::exists(hash_log) ? std::filesystem::file_size(hash_log) : 0;
    server = StartServer(data, algorithms[k], replay_threads[k], k, &port);
    REQUIRE(port != 0);
    REQUIRE(WaitServerUp(port));
    INFO("kill " << k << ", restarted with --checkpoint " << algorithms[k] << " --replay-threads "
                 << replay_threads[k] << "; "
                 << ReadFile(ScratchPath("server" + std::to_string(k) + ".err")));
    const svtest::Json stats = svtest::ParseJson(ReadFile(ScratchPath("stats" + std::to_string(k))));
    REQUIRE(stats.Has("recovery"));
    const svtest::Json& r = stats["recovery"];
    const auto tick = static_cast<uint64_t>(r["recovered_tick"].number);
    INFO("recovered tick " << tick << ", checkpoint tick " << r["checkpoint_tick"].number
                           << ", replayed " << r["ticks_replayed"].number);
    CHECK(r["found_state"].boolean);
    CHECK(tick > last_recovered);
    CHECK(r["checkpoint_tick"].number + r["ticks_replayed"].number == Approx(tick));
    CHECK(r["state_hash"].string == LiveHash(ReadFile(hash_log), size_at_kill, tick));
    CHECK(r["replay_threads"].number == replay_threads[k]);
    // The server runs 2 workers, so its records carry the lock order; with a pool, replay
    // follows it on every tick the pool takes.
    REQUIRE(r.Has("replay_lock_order_ticks"));
    if (replay_threads[k] == 1) CHECK(r["replay_lock_order_ticks"].number == 0);
    // The replay check (on by default): the log replays the older backup to the recovered one.
    // It may lack a second backup, never disagree.
    REQUIRE(r.Has("replay_check"));
    const std::string check = r["replay_check"]["outcome"].string;
    INFO("replay check: " << check << ", " << r["replay_check"]["detail"].string);
    CHECK((check == "match" || check == "not_run"));
    checks_matched += check == "match" ? 1 : 0;
    // Bots send commands every frame; a replay of a second or more of play has them, and a speed.
    if (r["ticks_replayed"].number >= 30) {
      CHECK(r["commands_replayed"].number > 0);
      CHECK(r["speed_x_realtime"].number > 0);
    }
    last_recovered = tick;
  }
  // Some restart finds two intact backups (a kill may catch a checkpoint writing into the older
  // file, but not at every one of the four, and naive and none leave both intact).
  CHECK(checks_matched >= 1);
  const int rc = bots.Wait(60);
  const std::string json = ReadFile(bots_json);
  INFO(json);
  REQUIRE(rc == 0);
  const svtest::Json b = svtest::ParseJson(json);
  CHECK(b["rejoin_checks"].number >= kBots * (kKills - 1));
  CHECK(b["durability_violations"].number == 0);
  server->Kill(SIGTERM);
  std::filesystem::remove_all(data);
}

}  // namespace
