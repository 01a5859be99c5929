// The bot cluster against a real aftershock-server on loopback: joining and measuring, identity
// resumption across bot runs, durability checking across a server crash, stalls of the server
// and of the bots themselves (SIGSTOP / SIGCONT), and flag errors.
// Each case runs the real binaries as subprocesses; the server binds ports the system picks
// (--port 0, read back from its stats file) and a restarted server takes its predecessor's.
// Counts are small and every wait polls something observable with a generous deadline, so the
// assertions are about behaviour, not speed.

#include <catch2/catch.hpp>

#include <algorithm>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/mini_json.h"
#include "tests/support/poll.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/server_ports.h"
#include "tests/support/subprocess.h"

using testing_util::PollUntil;
using testing_util::ReadFile;
using testing_util::ScratchPath;
using testing_util::Subprocess;

namespace {

const std::string kBin = AS_BIN_DIR;

// The number at `key` of the summary, or of its object `within` ("" = top level); NaN if the
// key is absent. The summary must be valid JSON (ParseJson throws otherwise: the case fails).
double JsonNumber(const std::string& json, const std::string& key, const std::string& within = "") {
  const svtest::Json top = svtest::ParseJson(json);
  if (!within.empty() && !top.Has(within)) return NAN;
  const svtest::Json& obj = within.empty() ? top : top[within];
  return obj.Has(key) ? obj[key].number : NAN;
}

// A server process and the lobby port it bound.
struct ServerRun {
  std::unique_ptr<Subprocess> process;
  uint16_t port = 0;
};

// A server on `port` (0: ports the system picks) with no memory of earlier runs unless `extra`
// names a --data-dir; killed when the process object goes. Returns once the server reported its
// ports in its stats file (its own --stats-out in `extra`, or one of ours): its sockets are bound,
// so the bots' first datagrams wait in the kernel rather than being refused. The case fails if
// the server never reports them.
ServerRun StartServer(uint16_t port, const std::string& tag, std::vector<std::string> extra = {}) {
  std::vector<std::string> argv = {kBin + "/aftershock-server", "--port", std::to_string(port), "--threads", "1",
                                   "--max-players", "32", "--log-level", "warn"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  // No --data-dir: no durability (the server's default ./data would remember earlier runs).
  if (std::find(extra.begin(), extra.end(), "--data-dir") == extra.end()) {
    argv.insert(argv.end(), {"--data-dir", ""});
  }
  auto stats_flag = std::find(extra.begin(), extra.end(), "--stats-out");
  std::string stats = ScratchPath(tag + ".server.json");
  if (stats_flag != extra.end() && stats_flag + 1 != extra.end()) {
    stats = *(stats_flag + 1);
  } else {
    argv.insert(argv.end(), {"--stats-out", stats});
  }
  std::remove(stats.c_str());
  ServerRun run;
  run.process = std::make_unique<Subprocess>(argv, ScratchPath(tag + ".server.out"), ScratchPath(tag + ".server.err"));
  svtest::ServerPorts ports;
  REQUIRE(svtest::WaitForServerPorts(stats, 30000, &ports));
  run.port = ports.lobby;
  return run;
}

std::string Address(uint16_t port) { return "127.0.0.1:" + std::to_string(port); }

struct BotsRun {
  int rc = -1;
  std::string json;
  std::string err;
};

// Runs the bots with `extra` flags and returns their report once they exit (within timeout_s of
// `while_running`, which is called with the running process first, if given).
BotsRun RunBots(uint16_t port, const std::string& tag, std::vector<std::string> extra, double timeout_s = 30,
                const std::function<void(Subprocess&)>& while_running = nullptr) {
  const std::string out = ScratchPath(tag + ".json");
  std::vector<std::string> argv = {kBin + "/aftershock-bots", "--server", Address(port),
                                   "--quiet", "--out", out};
  argv.insert(argv.end(), extra.begin(), extra.end());
  Subprocess bots(argv, ScratchPath(tag + ".bots.out"), ScratchPath(tag + ".bots.err"));
  if (while_running) while_running(bots);
  BotsRun r;
  r.rc = bots.Wait(timeout_s);
  r.json = ReadFile(out);
  r.err = ReadFile(ScratchPath(tag + ".bots.err"));
  return r;
}

// A deadline in seconds, as these tests give them, in the milliseconds PollUntil takes.
int ToMs(double timeout_s) { return static_cast<int>(timeout_s * 1000); }

// The rows of the bots' --series CSV (a row per second: t_s,connected,requests_per_s,
// replies_per_s,...,reconnects) for which `match` holds; `match` gets the row's 9 numbers.
int CountSeriesRows(const std::string& csv_path, const std::function<bool(const double* f)>& match) {
  std::istringstream rows(ReadFile(csv_path));
  std::string row;
  int matching = 0;
  while (std::getline(rows, row)) {
    if (row.empty() || row[0] == 't') continue;  // the header
    double f[9] = {};
    if (std::sscanf(row.c_str(), "%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf", &f[0], &f[1], &f[2], &f[3], &f[4],
                    &f[5], &f[6], &f[7], &f[8]) == 9 &&
        match(f)) {
      ++matching;
    }
  }
  return matching;
}

// Rows that report all `bots` connected, replies received and at least `reconnects` reconnects so
// far.
int SeriesRowsMatching(const std::string& csv_path, int bots, double reconnects) {
  return CountSeriesRows(csv_path, [&](const double* f) { return f[1] == bots && f[3] > 0 && f[8] >= reconnects; });
}

// Polls until a row shows a second in which all `bots` were connected and sent commands and
// none was answered (true), or the deadline passes (false).
bool WaitForUnansweredSecond(const std::string& csv_path, int bots, double timeout_s) {
  return PollUntil([&] {
    return CountSeriesRows(csv_path, [&](const double* f) { return f[1] == bots && f[2] > 0 && f[3] == 0; }) > 0;
  }, ToMs(timeout_s));
}

// Polls until the file holds `text` (true), or the deadline passes (false).
bool WaitForText(const std::string& path, const std::string& text, double timeout_s) {
  return PollUntil([&] { return ReadFile(path).find(text) != std::string::npos; }, ToMs(timeout_s));
}

bool WaitForSeriesRows(const std::string& csv_path, int bots, double reconnects, int rows_needed,
                       double timeout_s) {
  return PollUntil([&] { return SeriesRowsMatching(csv_path, bots, reconnects) >= rows_needed; },
                   ToMs(timeout_s));
}

// `seconds` rows with every bot playing and answered. Two such rows mean a whole second in which
// every bot played and was answered.
bool WaitUntilAllPlaying(const std::string& csv_path, int bots, double timeout_s, int seconds = 1) {
  return WaitForSeriesRows(csv_path, bots, /*reconnects=*/0, seconds, timeout_s);
}

// A row with every bot playing and answered after at least `bots` reconnects in all (each bot
// back after a restart).
bool WaitUntilAllRejoined(const std::string& csv_path, int bots, double timeout_s) {
  return WaitForSeriesRows(csv_path, bots, /*reconnects=*/bots, /*rows_needed=*/1, timeout_s);
}

// The number at `key` of the server's stats file, or -1 while the file is missing.
double ServerFigure(const std::string& stats, const std::string& key) {
  const std::string text = ReadFile(stats);
  return text.empty() ? -1 : JsonNumber(text, key);
}

// Polls the server's stats file (rewritten every --stats-interval) until it shows replies sent
// after a stall: a file written after the stall (uptime past `resumed_uptime_s`) is read, then
// one counting more replies than it. False at the deadline.
bool WaitUntilServerReplies(const std::string& stats, double resumed_uptime_s, double timeout_s) {
  double baseline = -1;
  return PollUntil([&] {
    if (baseline < 0) {
      if (ServerFigure(stats, "uptime_s") >= resumed_uptime_s) baseline = ServerFigure(stats, "replies");
      return false;
    }
    return ServerFigure(stats, "replies") > baseline;
  }, ToMs(timeout_s));
}

void Pause(Subprocess& p, int pause_ms) {
  p.Signal(SIGSTOP);
  std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms));
  p.Signal(SIGCONT);
}

// Runs `bots` bots that play until told (--duration 300), waits until every one of them has
// played and been answered for a second, then stops them with SIGINT, which drains the commands
// in flight as the end of a run does, and returns their report. A busy machine slows the joins,
// not what the caller checks.
BotsRun RunBotsUntilAllPlayed(uint16_t port, const std::string& tag, int bots, std::vector<std::string> extra) {
  const std::string series = ScratchPath(tag + ".csv");
  extra.insert(extra.begin(), {"--bots", std::to_string(bots), "--duration", "300", "--series", series});
  return RunBots(port, tag, extra, 30, [&](Subprocess& process) {
    REQUIRE(WaitUntilAllPlaying(series, bots, 60, 2));
    process.Signal(SIGINT);
  });
}

}  // namespace

TEST_CASE("bots join, play and report sane figures") {
  const ServerRun server = StartServer(0, "sane");
  const std::string series = ScratchPath("sane.csv");
  const BotsRun r = RunBots(server.port, "sane",
                            {"--bots", "6", "--duration", "4", "--ramp", "0.5", "--threads", "2", "--series", series});
  INFO(r.json << r.err);
  REQUIRE(r.rc == 0);
  CHECK(JsonNumber(r.json, "bots") == 6);
  CHECK(JsonNumber(r.json, "connected") == 6);
  const double requests = JsonNumber(r.json, "requests_sent");
  CHECK(requests > 6 * 30);  // a few seconds at 30 Hz each
  CHECK(JsonNumber(r.json, "replies_received") > 0);
  CHECK(JsonNumber(r.json, "response_rate") > 0);
  CHECK(JsonNumber(r.json, "p50", "response_ms") > 0);
  CHECK(JsonNumber(r.json, "p99", "response_ms") >= JsonNumber(r.json, "p50", "response_ms"));
  CHECK(JsonNumber(r.json, "max", "response_ms") >= JsonNumber(r.json, "p99", "response_ms"));
  // Responses end at the kernel's arrival stamp. The thread reads a reply some time after it
  // arrived (its loop sleeps up to a millisecond), so the lag is above 0; a stamp that fell
  // back to the read time would make it exactly 0.
  CHECK(r.json.find("\"arrival_stamps\": true") != std::string::npos);
  CHECK(JsonNumber(r.json, "mean", "read_lag_ms") > 0);
  CHECK(JsonNumber(r.json, "p50", "response_read_ms") > 0);
  CHECK(JsonNumber(r.json, "unanswered") <= requests / 10);
  CHECK(JsonNumber(r.json, "durability_violations") == 0);
  CHECK(JsonNumber(r.json, "cpu_s") > 0);
  // Every command is a datagram of its own and every snapshot one datagram back.
  CHECK(JsonNumber(r.json, "datagrams_sent") >= requests);
  CHECK(JsonNumber(r.json, "datagrams_received") >= JsonNumber(r.json, "replies_received"));
  CHECK(JsonNumber(r.json, "bytes_sent") > JsonNumber(r.json, "datagrams_sent"));
  CHECK(JsonNumber(r.json, "bytes_received") > JsonNumber(r.json, "datagrams_received"));
  CHECK(JsonNumber(r.json, "mean", "join_ms") > 0);
  const std::string csv = ReadFile(series);
  CHECK(csv.rfind("t_s,connected,requests_per_s,replies_per_s", 0) == 0);
  CHECK(std::count(csv.begin(), csv.end(), '\n') >= 3);  // header + a row per second
}

TEST_CASE("every death a bot sees comes with its kill event, once, in the snapshots") {
  const ServerRun server = StartServer(0, "kills", {"--map", "maps/dm_small.map"});
  constexpr int kBots = 24;
  const BotsRun r = RunBots(server.port, "kills",
                            {"--bots", std::to_string(kBots), "--duration", "10", "--ramp", "0.5", "--threads",
                             "2", "--behavior", "fight"});
  INFO(r.json << r.err);
  REQUIRE(r.rc == 0);
  REQUIRE(JsonNumber(r.json, "connections_lost") == 0);
  const double deaths = JsonNumber(r.json, "deaths_seen");
  const double own = JsonNumber(r.json, "own_death_events");
  REQUIRE(deaths >= kBots);  // fighting bots in a small map: about 5 deaths a second
  // A lost or a doubled event would show here (the bounds are one event per bot apart).
  CHECK(JsonNumber(r.json, "kill_events") >= own);
  // A death's event is detected in the world phase after the frame that showed the counter
  // rise, so at the end of the run each bot may have seen one death whose event had not
  // arrived yet, or (its first snapshot) an event for a death it did not count. Nothing else.
  CHECK(own <= deaths + kBots);
  CHECK(own >= deaths - kBots);
  // The server counts what it queued; every bot acknowledged, so none was dropped.
  const std::string stats = ReadFile(ScratchPath("kills.server.json"));
  CHECK(JsonNumber(stats, "queued", "kill_events") > 0);
  CHECK(JsonNumber(stats, "dropped", "kill_events") == 0);
}

TEST_CASE("identities resume after the bots restart, and another seed's token is refused") {
  const ServerRun server = StartServer(0, "resume");
  const std::vector<std::string> same = {"--identity-prefix", "res", "--seed", "5"};
  const BotsRun first = RunBotsUntilAllPlayed(server.port, "resume1", 4, same);
  INFO(first.json << first.err);
  REQUIRE(first.rc == 0);
  CHECK(JsonNumber(first.json, "resumed") == 0);  // a fresh server: no history yet

  const BotsRun second = RunBotsUntilAllPlayed(server.port, "resume2", 4, same);
  INFO(second.json << second.err);
  REQUIRE(second.rc == 0);
  CHECK(JsonNumber(second.json, "connected") == 4);
  CHECK(JsonNumber(second.json, "resumed") == 4);  // every JoinAccept said last sequence > 0
  CHECK(std::isnan(JsonNumber(second.json, "wrong_token", "join_failure_reasons")));
  CHECK(JsonNumber(second.json, "unanswered") == 0);  // SIGINT drained the commands in flight

  // Nobody gets in here, so there is nothing to wait for: a fixed run, long enough for every
  // bot's first join to be refused.
  const BotsRun thief = RunBots(server.port, "resume3",
                                {"--bots", "2", "--duration", "3", "--identity-prefix", "res", "--seed", "6"});
  INFO(thief.json << thief.err);
  CHECK(thief.rc == 1);  // nobody got in
  CHECK(JsonNumber(thief.json, "connected") == 0);
  CHECK(JsonNumber(thief.json, "wrong_token", "join_failure_reasons") >= 2);
}

TEST_CASE("bots with --verify count durability violations when the server forgets its players") {
  ServerRun server = StartServer(0, "forget");
  const std::string out = ScratchPath("forget.json");
  const std::string series = ScratchPath("forget.csv");
  Subprocess bots({kBin + "/aftershock-bots", "--server", Address(server.port), "--bots", "4", "--duration", "300",
                   "--verify", "--quiet", "--identity-prefix", "dur", "--series", series, "--out", out},
                  ScratchPath("forget.bots.out"), ScratchPath("forget.bots.err"));
  REQUIRE(WaitUntilAllPlaying(series, 4, 60, 2));  // every bot was shown commands as applied
  server.process->Kill(SIGKILL);  // crash: everything the bots saw applied is lost
  server = StartServer(server.port, "forget2");  // a fresh server, no recovery: remembers nobody
  REQUIRE(WaitUntilAllRejoined(series, 4, 90));  // then stop the bots (they play until told)
  bots.Signal(SIGINT);
  const int rc = bots.Wait(30);
  const std::string json = ReadFile(out);
  INFO(json << ReadFile(ScratchPath("forget.bots.err")));
  REQUIRE(rc == 0);
  CHECK(JsonNumber(json, "reconnects") >= 4);
  CHECK(JsonNumber(json, "rejoin_checks") >= 4);
  CHECK(JsonNumber(json, "durability_violations") >= 4);  // each bot was shown commands as applied
  CHECK(JsonNumber(json, "outage_ms") >= 300);             // the crash and the rejoin took time
  CHECK(JsonNumber(json, "connected") == 4);              // and they all came back
}

TEST_CASE("bots with --verify report no violation after a crash when the server recovers") {
  const std::string dir = ScratchPath("recover_data");
  std::system(("rm -rf " + dir + " && mkdir -p " + dir).c_str());
  ServerRun server = StartServer(0, "recover", {"--data-dir", dir});
  const std::string out = ScratchPath("recover.json");
  const std::string series = ScratchPath("recover.csv");
  Subprocess bots({kBin + "/aftershock-bots", "--server", Address(server.port), "--bots", "4", "--duration", "300",
                   "--verify", "--quiet", "--identity-prefix", "rec", "--series", series, "--out", out},
                  ScratchPath("recover.bots.out"), ScratchPath("recover.bots.err"));
  REQUIRE(WaitUntilAllPlaying(series, 4, 60, 2));  // every bot has acknowledged commands to check
  server.process->Kill(SIGKILL);
  server = StartServer(server.port, "recover2", {"--data-dir", dir});
  REQUIRE(WaitUntilAllRejoined(series, 4, 90));  // then stop the bots (they play until told)
  bots.Signal(SIGINT);
  const int rc = bots.Wait(30);
  const std::string json = ReadFile(out);
  INFO(json);
  REQUIRE(rc == 0);
  CHECK(JsonNumber(json, "rejoin_checks") >= 4);
  CHECK(JsonNumber(json, "durability_violations") == 0);
  std::system(("rm -rf " + dir).c_str());
}

TEST_CASE("bots with --verify stay clean across a kill -9 while players migrate between locality threads") {
  const std::string dir = ScratchPath("locality_data");
  std::system(("rm -rf " + dir + " && mkdir -p " + dir).c_str());
  const std::string stats = ScratchPath("locality.server.json");
  // Small leaves, no hysteresis and frequent rebalancing: players change threads all the time.
  const std::vector<std::string> locality = {"--threads", "2", "--assign", "locality", "--areanode-depth", "7",
                                             "--migrate-margin", "0", "--rebalance-s", "0.5",
                                             "--data-dir", dir, "--stats-out", stats, "--stats-interval", "0.2"};
  ServerRun server = StartServer(0, "locality", locality);
  const std::string out = ScratchPath("locality.json");
  const std::string series = ScratchPath("locality.csv");
  // The bots play until the test stops them (SIGINT) once every one of them is back after the
  // crash: a busy machine (tests run side by side) slows the joins, not what is checked.
  Subprocess bots({kBin + "/aftershock-bots", "--server", Address(server.port), "--bots", "12", "--duration", "300",
                   "--verify", "--quiet", "--identity-prefix", "loc", "--series", series, "--out", out},
                  ScratchPath("locality.bots.out"), ScratchPath("locality.bots.err"));
  REQUIRE(WaitUntilAllPlaying(series, 12, 60, 2));
  // Kill it once players have migrated (the stats file counts them), so the log holds ticks
  // whose commands ran on a thread other than their port's.
  double migrations = 0;
  PollUntil([&] {
    const std::string text = ReadFile(stats);
    if (!text.empty()) migrations = JsonNumber(text, "migrations", "assignment");
    return migrations >= 3;
  }, ToMs(60));
  REQUIRE(migrations >= 3);
  server.process->Kill(SIGKILL);
  server = StartServer(server.port, "locality2", locality);
  REQUIRE(WaitUntilAllRejoined(series, 12, 90));
  bots.Signal(SIGINT);
  const int rc = bots.Wait(30);
  const std::string json = ReadFile(out);
  INFO(json);
  REQUIRE(rc == 0);
  CHECK(JsonNumber(json, "rejoin_checks") >= 12);
  CHECK(JsonNumber(json, "durability_violations") == 0);
  CHECK(JsonNumber(json, "connected") == 12);
  std::system(("rm -rf " + dir).c_str());
}

TEST_CASE("a server paused for 0.5, 1 and 2 s under load kicks nobody and loses no bot") {
  const std::string stats = ScratchPath("stall.server.json");
  ServerRun server = StartServer(0, "stall", {"--stats-out", stats, "--stats-interval", "0.1"});
  const std::string series = ScratchPath("stall.csv");
  const std::string out = ScratchPath("stall.json");
  // --silence-ms above the longest pause: a stalled server is slow, not lost.
  // The bots play until told (SIGINT, which drains the commands in flight).
  Subprocess bots({kBin + "/aftershock-bots", "--server", Address(server.port), "--bots", "8", "--duration", "300",
                   "--silence-ms", "5000", "--verify", "--quiet", "--identity-prefix", "stall", "--series", series,
                   "--out", out},
                  ScratchPath("stall.bots.out"), ScratchPath("stall.bots.err"));
  REQUIRE(WaitUntilAllPlaying(series, 8, 8));
  for (int pause_ms : {500, 1000, 2000}) {
    // No stats file is written while the server is stopped, and the one read here is at most
    // an interval old: a file whose uptime is a pause later than this was written after it.
    const double uptime_s = ServerFigure(stats, "uptime_s");
    Pause(*server.process, pause_ms);  // the commands sent meanwhile reach the server in one burst
    REQUIRE(WaitUntilServerReplies(stats, uptime_s + pause_ms / 1000.0, 10));  // playing again
  }
  bots.Signal(SIGINT);
  const int rc = bots.Wait(30);
  server.process->Kill(SIGTERM);  // a clean stop writes the final statistics
  const std::string json = ReadFile(out);
  const std::string server_json = ReadFile(stats);
  INFO(json << ReadFile(ScratchPath("stall.bots.err")) << server_json);
  REQUIRE(rc == 0);
  CHECK(JsonNumber(json, "outage_ms") >= 1500);  // the 2 s pause fell while the bots played
  CHECK(JsonNumber(json, "kicks") == 0);
  CHECK(JsonNumber(json, "connections_lost") == 0);
  CHECK(JsonNumber(json, "reconnects") == 0);
  CHECK(JsonNumber(json, "connected") == 8);
  // Every command sent was reported applied (those in flight at the SIGINT in its drain), and
  // no bot had to rejoin: no acknowledged command was lost (--verify counts a violation only on
  // a rejoin that finds one).
  CHECK(JsonNumber(json, "unanswered") == 0);
  CHECK(JsonNumber(json, "durability_violations") == 0);
  CHECK(JsonNumber(server_json, "kicked") == 0);
  CHECK(JsonNumber(server_json, "invalid_packets") == 0);
}

TEST_CASE("a bot process paused for 1.5 s does not blame the server") {
  const ServerRun server = StartServer(0, "selfstall");
  const std::string series = ScratchPath("selfstall.csv");
  const std::string out = ScratchPath("selfstall.json");
  // At 10 Hz a bot usually has no answer in flight when it stops, so without the stall
  // accounting the pause alone would exceed --silence-ms (750 ms) and every bot would rejoin.
  Subprocess bots({kBin + "/aftershock-bots", "--server", Address(server.port), "--bots", "8", "--duration", "300",
                   "--rate", "10", "--quiet", "--identity-prefix", "selfstall", "--series", series, "--out", out},
                  ScratchPath("selfstall.bots.out"), ScratchPath("selfstall.bots.err"));
  REQUIRE(WaitUntilAllPlaying(series, 8, 60));
  const int rows_before = SeriesRowsMatching(series, 8, 0);
  Pause(bots, 1500);
  // Two more seconds with every bot playing and answered: a bot that blamed the server would
  // have rejoined on its first look after the pause, which the report's reconnects counts.
  REQUIRE(WaitForSeriesRows(series, 8, 0, rows_before + 2, 60));
  bots.Signal(SIGINT);
  const int rc = bots.Wait(30);
  const std::string json = ReadFile(out);
  INFO(json << ReadFile(ScratchPath("selfstall.bots.err")));
  REQUIRE(rc == 0);
  CHECK(JsonNumber(json, "self_stalls") >= 1);
  CHECK(JsonNumber(json, "max", "self_stall_ms") >= 1000);
  CHECK(JsonNumber(json, "connections_lost") == 0);
  CHECK(JsonNumber(json, "reconnects") == 0);
  CHECK(JsonNumber(json, "connected") == 8);
}

TEST_CASE("the drain at the end of a run says how it ended, and a second SIGINT ends it at once") {
  ServerRun server = StartServer(0, "drain");
  // An ordinary stop with the server answering: every answer comes in.
  const BotsRun done = RunBotsUntilAllPlayed(server.port, "drain_done", 4, {"--identity-prefix", "drainA"});
  INFO(done.json << done.err);
  REQUIRE(done.rc == 0);
  CHECK(svtest::ParseJson(done.json)["drain"].string == "complete");
  CHECK(JsonNumber(done.json, "unanswered") == 0);

  // With the server stopped (SIGSTOP) the commands in flight are never answered. --silence-ms
  // 60000 keeps the bots waiting for it rather than giving their commands up and rejoining.
  auto stop_while_server_stopped = [&](const std::string& tag, const std::string& drain_ms, bool second_signal) {
    const std::string series = ScratchPath(tag + ".csv");
    const BotsRun r = RunBots(
        server.port, tag,
        {"--bots", "4", "--duration", "300", "--series", series, "--identity-prefix", tag, "--silence-ms", "60000",
         "--drain-ms", drain_ms},
        30, [&](Subprocess& bots) {
          REQUIRE(WaitUntilAllPlaying(series, 4, 60, 2));
          server.process->Signal(SIGSTOP);
          REQUIRE(WaitForUnansweredSecond(series, 4, 30));
          bots.Signal(SIGINT);
          // The bots say when the first signal has been taken; only then is a second one
          // a second signal (two pending SIGINTs merge into one).
          REQUIRE(WaitForText(ScratchPath(tag + ".bots.err"), "stopping on a signal", 30));
          if (second_signal) bots.Signal(SIGINT);
        });
    server.process->Signal(SIGCONT);
    return r;
  };
  // One signal and a short drain: it runs out with answers still in flight.
  const BotsRun timed_out = stop_while_server_stopped("drainB", "200", false);
  INFO(timed_out.json << timed_out.err);
  REQUIRE(timed_out.rc == 0);
  CHECK(svtest::ParseJson(timed_out.json)["drain"].string == "timed_out");
  CHECK(JsonNumber(timed_out.json, "unanswered") > 0);
  // A ten-minute drain and a second signal: the bots exit and report well before RunBots'
  // 30 s deadline, so the second signal ended the wait.
  const BotsRun cut = stop_while_server_stopped("drainC", "600000", true);
  INFO(cut.json << cut.err);
  REQUIRE(cut.rc == 0);
  CHECK(svtest::ParseJson(cut.json)["drain"].string == "cut_short");
  CHECK(JsonNumber(cut.json, "unanswered") > 0);
}

TEST_CASE("bad flags give exit code 2 and a message naming the flag") {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--bots", "0"}, "--bots"},
      {{"--behavior", "dance"}, "--behavior"},
      {{"--server", "localhost"}, "--server"},
      {{"--rate", "abc"}, "rate"},
      {{"--frobnicate"}, "frobnicate"},
      {{"--server", "no.such.host.invalid:27500"}, "cannot resolve"},
      {{"--map", "maps/does_not_exist.map"}, "--map"},
      {{"--drain-ms", "-1"}, "--drain-ms"},
      {{"--drain-ms", "600001"}, "--drain-ms"},
  };
  for (const auto& [args, needle] : cases) {
    std::vector<std::string> argv = {kBin + "/aftershock-bots"};
    argv.insert(argv.end(), args.begin(), args.end());
    Subprocess bots(argv, ScratchPath("flags.out"), ScratchPath("flags.err"));
    const int rc = bots.Wait(20);
    const std::string err = ReadFile(ScratchPath("flags.err"));
    INFO(args[0] << " -> " << err);
    CHECK(rc == 2);
    CHECK(err.find("error") != std::string::npos);
    CHECK(err.find(needle) != std::string::npos);
  }
}
