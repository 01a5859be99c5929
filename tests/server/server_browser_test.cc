// The real QuakeWorld server browser against the real server binary: Debian's qstat
// (`quakestat -qws`) lists the server with its name, map, player count and maximum, and with -P
// every player with id, frags, time, ping and name, in its human and -raw outputs. qstat sends
// "status 23", so this also guards the status request with an argument. Polls with deadlines.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/socket.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "server/core/steady_clock.h"
#include "tests/server/test_client.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/server_ports.h"
#include "tests/support/subprocess.h"

namespace {

using testing_util::ReadFile;
using testing_util::ScratchPath;
using testing_util::Subprocess;

constexpr const char* kQuakestat = "/usr/bin/quakestat";  // Debian package qstat

bool ServerAnswers(uint16_t port) {
  for (int i = 0; i < 600; ++i) {
    uint32_t challenge = 0;
    if (svtest::GetChallenge(port, &challenge).ok()) return true;
  }
  return false;
}

// Runs quakestat with `args` and returns its standard output.
std::string Quakestat(const std::vector<std::string>& args) {
  const std::string out = ScratchPath("qstat.out");
  std::vector<std::string> argv = {kQuakestat};
  argv.insert(argv.end(), args.begin(), args.end());
  Subprocess q(argv, out, "/dev/null");
  REQUIRE(q.started());
  REQUIRE(q.Wait(20) == 0);
  std::string text = ReadFile(out);
  std::remove(out.c_str());
  return text;
}

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  std::stringstream in(s);
  for (std::string p; std::getline(in, p, sep);) parts.push_back(p);
  if (!s.empty() && s.back() == sep) parts.push_back("");
  return parts;
}

std::vector<std::string> Lines(const std::string& s) {
  std::vector<std::string> lines;
  for (const std::string& l : Split(s, '\n')) {
    if (!l.empty()) lines.push_back(l);
  }
  return lines;
}

// A fresh stats file path for one case (the server reports its ports there).
std::string StatsPath(const std::string& tag) {
  const std::string path = ScratchPath(tag + ".json");
  std::remove(path.c_str());
  return path;
}

// Keeps the clients playing (so they stay connected) for about ms milliseconds.
void Play(std::vector<std::unique_ptr<svtest::TestClient>>& clients, int ms) {
  const uint64_t end = core::SteadyMs() + static_cast<uint64_t>(ms);
  while (core::SteadyMs() < end) {
    for (auto& c : clients) c->SendCommand(0, 0, 0, 0, 33);
    for (int i = 0; i < 33; ++i) {
      for (auto& c : clients) c->Service(0);
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
}

}  // namespace

TEST_CASE("quakestat -qws lists the server and, with -P, its players") {
  const std::string stats = StatsPath("list");
  Subprocess server({AS_SERVER_BIN, "--port", "0", "--stats-out", stats, "--bind", "127.0.0.1",
                     "--max-players", "8", "--hostname", "Aftershock browser test",
                     "--log-level", "warn", "--data-dir", "", "--duration", "120"},
                    "/dev/null", "/dev/null");
  svtest::ServerPorts ports;
  REQUIRE(svtest::WaitForServerPorts(stats, 30000, &ports));
  const uint16_t port = ports.lobby;
  REQUIRE(ServerAnswers(port));
  std::vector<std::unique_ptr<svtest::TestClient>> clients;
  for (const char* name : {"alice", "bob the brave"}) {
    auto c = std::make_unique<svtest::TestClient>();
    svtest::JoinParams p;
    p.lobby_port = port;
    p.name = name;
    p.token = 77;
    REQUIRE(c->Join(p, 5000).ok());
    clients.push_back(std::move(c));
  }
  const std::string address = "127.0.0.1:" + std::to_string(port);

  // -raw: one server line "QWS,address,name,map,max,players,ping,retries", then one line per
  // player "id,name,frags,seconds,top,bottom,ping,skin". The master republishes the status
  // about once a second: poll until both players are listed.
  std::vector<std::string> lines;
  const uint64_t deadline = core::SteadyMs() + 20000;
  while (core::SteadyMs() < deadline) {
    lines = Lines(Quakestat({"-qws", address, "-P", "-raw", ",", "-nh"}));
    if (lines.size() == 3) break;
    Play(clients, 300);
  }
  INFO("quakestat -raw output lines: " << lines.size());
  REQUIRE(lines.size() == 3);
  const std::vector<std::string> server_line = Split(lines[0], ',');
  REQUIRE(server_line.size() >= 6);
  CHECK(server_line[0] == "QWS");
  CHECK(server_line[1] == address);
  CHECK(server_line[2] == "Aftershock browser test");
  CHECK(server_line[3] == "dm_arena");
  CHECK(server_line[4] == "8");  // maximum
  CHECK(server_line[5] == "2");  // players
  for (size_t i = 0; i < clients.size(); ++i) {
    // Players are listed by name: "alice" before "bob the brave".
    const std::vector<std::string> p = Split(lines[1 + i], ',');
    INFO(lines[1 + i]);
    REQUIRE(p.size() >= 7);
    CHECK(p[0] == std::to_string(clients[i]->player_id()));
    CHECK(p[1] == (i == 0 ? "alice" : "bob the brave"));
    CHECK(p[2] == "0");                      // frags
    CHECK(std::stoi(p[3]) >= 0);             // connected time, seconds (whole minutes on the wire)
    CHECK(std::stoi(p[6]) >= 1);             // ping, ms (never 0: qstat would take a bot)
    CHECK(std::stoi(p[6]) <= 9999);
  }

  // The human listing: address, players/max, map and name on one line.
  const std::vector<std::string> human = Lines(Quakestat({"-qws", address, "-nh"}));
  REQUIRE(human.size() == 1);
  CHECK(human[0].find(address) == 0);
  CHECK(human[0].find("2/8") != std::string::npos);
  CHECK(human[0].find("dm_arena") != std::string::npos);
  CHECK(human[0].find("Aftershock browser test") != std::string::npos);

  // -P without -raw: a player line per player with frags, minutes@ping and the name.
  const std::string with_players = Quakestat({"-qws", address, "-P", "-nh"});
  CHECK(with_players.find("0 frags") != std::string::npos);
  CHECK(with_players.find("alice") != std::string::npos);
  CHECK(with_players.find("bob the brave") != std::string::npos);

  server.Kill(SIGTERM);
}

// A backslash in --hostname would split the reply's key-value pairs: it is shown as '_', which
// was silent. The server now says at start-up what the status shows.
TEST_CASE("a --hostname the status cannot show as given is shown cleaned, and the log says so") {
  const std::string stats = StatsPath("hostname");
  const std::string err = StatsPath("hostname") + ".err";
  Subprocess server({AS_SERVER_BIN, "--port", "0", "--stats-out", stats, "--bind", "127.0.0.1",
                     "--hostname", "a\\b", "--log-level", "warn", "--data-dir", "", "--duration", "60"},
                    "/dev/null", err);
  svtest::ServerPorts ports;
  REQUIRE(svtest::WaitForServerPorts(stats, 30000, &ports));
  REQUIRE(ServerAnswers(ports.lobby));
  const std::vector<std::string> lines =
      Lines(Quakestat({"-qws", "127.0.0.1:" + std::to_string(ports.lobby), "-raw", ",", "-nh"}));
  REQUIRE(lines.size() == 1);
  CHECK(Split(lines[0], ',')[2] == "a_b");
  // The log is written by spdlog's async thread: poll it.
  bool warned = false;
  for (const uint64_t deadline = core::SteadyMs() + 20000; !warned && core::SteadyMs() < deadline;) {
    warned = ReadFile(err).find("--hostname is shown as 'a_b' in the status reply") != std::string::npos;
    if (!warned) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  CHECK(warned);
}

TEST_CASE("status requests beyond a source's budget get no reply, and qstat's form is answered") {
  const std::string stats = StatsPath("budget");
  Subprocess server({AS_SERVER_BIN, "--port", "0", "--stats-out", stats, "--bind", "127.0.0.1",
                     "--log-level", "warn", "--data-dir", "", "--duration", "120"},
                    "/dev/null", "/dev/null");
  svtest::ServerPorts ports;
  REQUIRE(svtest::WaitForServerPorts(stats, 30000, &ports));
  const uint16_t port = ports.lobby;
  REQUIRE(ServerAnswers(port));
  // One socket (one source address and port) asks 40 times at once: the budget is 8 at once
  // and 4 per second (docs/protocol.md, 3), so most go unanswered; a fresh source is answered.
  const int fd = socket(AF_INET, SOCK_DGRAM, 0);
  REQUIRE(fd >= 0);
  const sockaddr_in to = svtest::Loopback(port);
  const std::string query = "\xff\xff\xff\xffstatus 23\n";
  for (int i = 0; i < 40; ++i) {
    sendto(fd, query.data(), query.size(), 0, reinterpret_cast<const sockaddr*>(&to), sizeof to);
  }
  timeval tv{1, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  int answered = 0;
  char buf[2048];
  for (ssize_t n; (n = recv(fd, buf, sizeof buf, 0)) > 0;) {
    CHECK(std::string(buf, 5) == "\xff\xff\xff\xffn");
    ++answered;
  }
  close(fd);
  CHECK(answered >= 8);
  CHECK(answered < 40);
  std::vector<uint8_t> reply;
  const std::vector<uint8_t> request(query.begin(), query.end());
  REQUIRE(svtest::Connectionless(port, request, 2000, &reply).ok());
  proto::ServerStatus status;
  CHECK(proto::ParseStatusReply(reply, &status).ok());
  server.Kill(SIGTERM);
}
