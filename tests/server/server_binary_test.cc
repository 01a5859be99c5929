// The real aftershock-server binary as a subprocess: bad flags exit 2 with the help text; a
// --duration run with clients exits 0 and leaves a valid stats JSON (required keys, breakdown
// summing to 100, per-thread entries); SIGTERM shuts it down cleanly with the stats written.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <initializer_list>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/server/play_harness.h"
#include "tests/server/test_client.h"
#include "tests/support/mini_json.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/server_ports.h"
#include "tests/support/subprocess.h"

namespace {

using testing_util::ReadFile;
using testing_util::Subprocess;

// The server binary with `args`, its output discarded.
std::unique_ptr<Subprocess> Spawn(std::vector<std::string> args) {
  args.insert(args.begin(), AS_SERVER_BIN);
  return std::make_unique<Subprocess>(args, "/dev/null", "/dev/null");
}

// Polls for up to ~30 s: a first start on a map builds its PVS before opening the port.
bool WaitServerUp(uint16_t port) {
  for (int i = 0; i < 600; ++i) {
    uint32_t challenge;
    std::vector<uint8_t> reply;
    if (svtest::Connectionless(port, proto::EncodeRequest(proto::ConnectionlessRequest::kGetChallenge),
                               50, &reply).ok()) {
      return proto::ParseChallengeReply(reply, &challenge).ok();
    }
  }
  return false;
}

// The lobby port of a server started with --port 0 --stats-out stats (0 if it never said).
uint16_t LobbyPort(const std::string& stats) {
  svtest::ServerPorts ports;
  return svtest::WaitForServerPorts(stats, 30000, &ports) ? ports.lobby : 0;
}

// Polls the stats file (rewritten every --stats-interval) until it counts a completed frame.
bool WaitForFrames(const std::string& stats) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < deadline) {
    const std::string text = ReadFile(stats);
    if (!text.empty() && svtest::ParseJson(text)["frames"].number > 0) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

void CheckStats(const svtest::Json& j, int threads) {
  for (const char* key : {"threads", "locking", "frame_mode", "map", "players", "frames",
                          "requests", "replies", "kill_events", "breakdown_pct", "per_thread", "frame_ms",
                          "lock", "invalid_packets", "kicked", "junk",
                          "requests_per_thread_per_frame"}) {
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

// Checks that each of `parts` occurs in `log`, each at or after where the one before it was found.
void CheckInOrder(const std::string& log, std::initializer_list<const char*> parts) {
  size_t at = 0;
  for (const std::string part : parts) {
    INFO("looking for: " << part);
    const size_t found = log.find(part, at);
    CHECK(found != std::string::npos);
    if (found != std::string::npos) at = found;
  }
}

}  // namespace

TEST_CASE("bad flags exit 2 with the help text") {
  CHECK(Spawn({"--locking", "bogus"})->Wait(10) == 2);
  CHECK(Spawn({"--no-such-flag"})->Wait(10) == 2);
  CHECK(Spawn({"--threads", "0"})->Wait(10) == 2);
  CHECK(Spawn({"--help"})->Wait(10) == 0);
}

TEST_CASE("bad --replay-threads values exit 2 with an error naming the flag and its range") {
  const testing_util::ScratchDir scratch("aftershock_binary_test");
  const std::string err = scratch.Path("server.err");
  for (const std::string bad : {"0", "65", "-2", "many"}) {
    INFO("--replay-threads " << bad);
    Subprocess server({AS_SERVER_BIN, "--replay-threads", bad, "--data-dir", ""}, "/dev/null", err);
    CHECK(server.Wait(10) == 2);
    const std::string text = ReadFile(err);
    CHECK_THAT(text, Catch::Contains("replay-threads"));
    if (bad != "many") CHECK_THAT(text, Catch::Contains("--replay-threads must be 1..64"));
  }
}

// Before, the server started and logged an error at every write; and a --stats-out naming a
// device (/dev/full, run as root) was replaced by a JSON file.
TEST_CASE("a --stats-out that cannot take a file exits 2 before the server starts") {
  const testing_util::ScratchDir scratch("aftershock_binary_test");
  const std::string err = scratch.Path("server.err");
  REQUIRE(std::filesystem::create_directory(scratch.Path("sub")));
  const std::vector<std::pair<std::string, std::string>> cases = {
      {scratch.Path("missing/stats.json"), "missing cannot be used"},
      {scratch.Path("sub"), "not a regular file (a directory)"},
      {"/dev/null", "--stats-out /dev/null exists and is not a regular file (a device)"},
  };
  for (const auto& [path, message] : cases) {
    INFO("--stats-out " << path);
    Subprocess server({AS_SERVER_BIN, "--stats-out", path, "--data-dir", ""}, "/dev/null", err);
    CHECK(server.Wait(10) == 2);
    CHECK_THAT(ReadFile(err), Catch::Contains(message));
  }
}

// Both used to say "(port in use?)": an address not on this host is another mistake.
TEST_CASE("a port that cannot be bound exits 1 with the system's reason") {
  const testing_util::ScratchDir scratch("aftershock_binary_test");
  const std::string err = scratch.Path("server.err");
  {  // 192.0.2.1 is TEST-NET-1 (RFC 5737), never a local address
    Subprocess server({AS_SERVER_BIN, "--bind", "192.0.2.1", "--port", "0", "--data-dir", ""}, "/dev/null", err);
    CHECK(server.Wait(30) == 1);
    CHECK_THAT(ReadFile(err), Catch::Contains("cannot bind UDP 192.0.2.1:0: Cannot assign requested address"));
  }
  const int taken = ::socket(AF_INET, SOCK_DGRAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(taken, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  socklen_t len = sizeof a;
  REQUIRE(::getsockname(taken, reinterpret_cast<sockaddr*>(&a), &len) == 0);
  const std::string port = std::to_string(ntohs(a.sin_port));
  {
    Subprocess server({AS_SERVER_BIN, "--bind", "127.0.0.1", "--port", port, "--data-dir", ""}, "/dev/null", err);
    CHECK(server.Wait(30) == 1);
    CHECK_THAT(ReadFile(err), Catch::Contains("cannot bind UDP 127.0.0.1:" + port + ": Address already in use"));
  }
  ::close(taken);
}

// On a large map the start-up's steps take minutes together, and before, nothing was logged until
// the PVS build ended. Each step now says when it begins or ends, in order; the bind that fails
// last ends the run.
TEST_CASE("start-up logs the map, the collision and the visibility steps in order") {
  const testing_util::ScratchDir scratch("aftershock_binary_test");
  const std::string err = scratch.Path("server.err");  // the log goes to stderr
  Subprocess server({AS_SERVER_BIN, "--bind", "192.0.2.1", "--port", "0", "--data-dir", "",
                     "--map", "maps/dm_arena.map"},
                    "/dev/null", err);
  CHECK(server.Wait(60) == 1);
  const std::string log = ReadFile(err);
  INFO(log);
  CheckInOrder(log, {"loading map maps/dm_arena.map", "map loaded in ",
                     "233 brushes, 18 spawn points", "collision built in ",
                     "224 solid brushes; visibility next", "visibility: "});
}

TEST_CASE("a start-up that builds the visibility says so, and says when every row is traced") {
  const testing_util::ScratchDir scratch("aftershock_binary_test");
  const std::string err = scratch.Path("server.err");
  Subprocess server({AS_SERVER_BIN, "--bind", "192.0.2.1", "--port", "0", "--data-dir", "",
                     "--vis-cache", "none", "--map", "maps/dm_small.map"},
                    "/dev/null", err);
  CHECK(server.Wait(60) == 1);
  const std::string log = ReadFile(err);
  INFO(log);
  CheckInOrder(log, {"visibility next", "visibility: not cached: building, ", " rows to trace",
                     "visibility: all ", " rows traced in ", "visibility: built in "});
}

TEST_CASE("a bad --recovery-check value exits 2 with an error naming the flag") {
  const testing_util::ScratchDir scratch("aftershock_binary_test");
  const std::string err = scratch.Path("server.err");
  for (const std::string bad : {"maybe", "1", ""}) {
    INFO("--recovery-check '" << bad << "'");
    Subprocess server({AS_SERVER_BIN, "--recovery-check", bad, "--data-dir", ""}, "/dev/null", err);
    CHECK(server.Wait(10) == 2);
    CHECK_THAT(ReadFile(err), Catch::Contains("--recovery-check must be on, off or refuse"));
  }
}

TEST_CASE("bad --assign locality, --areanode-depth and --bind flags exit 2 with an error naming the flag") {
  const testing_util::ScratchDir scratch("aftershock_binary_test");
  const std::string err = scratch.Path("server.err");
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--assign", "nearest"}, "--assign must be block, round-robin or locality"},
      {{"--assign", "locality", "--frame-mode", "request"}, "--assign locality needs --frame-mode fixed"},
      {{"--assign", "locality", "--rebalance-s", "0"}, "--rebalance-s must be in (0, 3600]"},
      {{"--rebalance-threshold", "-1"}, "--rebalance-threshold must be in [0, 100]"},
      {{"--migrate-margin", "-5"}, "--migrate-margin must be in [0, 65536]"},
      {{"--migrate-margin", "wide"}, "--migrate-margin: Argument \u2018wide\u2019 failed to parse"},
      {{"--areanode-depth", "0"}, "--areanode-depth must be 1..12"},
      {{"--areanode-depth", "13"}, "--areanode-depth must be 1..12"},
      {{"--bind", "abc"}, "--bind must be an IPv4 address such as 0.0.0.0 or 127.0.0.1, not 'abc'"},
  };
  for (const auto& [flags, message] : cases) {
    std::vector<std::string> argv = {AS_SERVER_BIN, "--data-dir", ""};
    argv.insert(argv.end(), flags.begin(), flags.end());
    INFO(flags[0] << " " << flags[1]);
    Subprocess server(argv, "/dev/null", err);
    CHECK(server.Wait(10) == 2);
    CHECK_THAT(ReadFile(err), Catch::Contains(message));
  }
}

TEST_CASE("a --duration run with clients exits 0 and writes valid stats") {
  const testing_util::ScratchDir scratch("aftershock_binary_test");
  const std::string stats = scratch.Path("stats.json");
  const std::string data = scratch.Path("data");
  auto server = Spawn({"--port", "0", "--bind", "127.0.0.1", "--threads", "2",
                       "--duration", "4", "--stats-out", stats, "--stats-interval", "1",
                       "--log-level", "warn", "--data-dir", data});
  const uint16_t port = LobbyPort(stats);
  REQUIRE(port != 0);
  REQUIRE(WaitServerUp(port));
  svtest::PlayResult r = svtest::Play(port, 6, "bin", 1500, 1500, 5);
  INFO(r.join_error);
  CHECK(r.joined == 6);
  CHECK(r.all_replied());
  REQUIRE(server->Wait(20) == 0);
  const svtest::Json j = svtest::ParseJson(ReadFile(stats));
  CheckStats(j, 2);
  CHECK(j["requests"].number > 0);
  CHECK(j["replies"].number > 0);
  CHECK(j["max_players_online"].number == 6);
  for (const char* k : {"recovery", "checkpoint", "log"}) CHECK(j.Has(k));  // durability on
}

TEST_CASE("SIGTERM shuts the server down cleanly with stats written") {
  const testing_util::ScratchDir scratch("aftershock_sigterm_test");
  const std::string stats = scratch.Path("stats.json");
  auto server = Spawn({"--port", "0", "--bind", "127.0.0.1", "--threads", "1",
                       "--locking", "sequential", "--stats-out", stats, "--stats-interval", "0.05",
                       "--log-level", "warn", "--data-dir", ""});
  const uint16_t port = LobbyPort(stats);
  REQUIRE(port != 0);
  REQUIRE(WaitServerUp(port));
  REQUIRE(WaitForFrames(stats));  // running frames: the stop below interrupts a live server
  server->Signal(SIGTERM);
  REQUIRE(server->Wait(10) == 0);
  CheckStats(svtest::ParseJson(ReadFile(stats)), 1);
}
