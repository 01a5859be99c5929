// The real Prometheus (Debian's prometheus 2.42) scrapes the real server binary's /metrics while
// real bots play, and its HTTP query API returns aftershock series with sane values. Prometheus
// runs with its own config, TSDB directory and listen address; every wait polls with a deadline.
#include <catch2/catch.hpp>

#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

#include <httplib.h>

#include "server/core/steady_clock.h"
#include "tests/server/test_client.h"
#include "tests/support/mini_json.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/server_ports.h"
#include "tests/support/subprocess.h"

namespace {

using testing_util::ReadFile;
using testing_util::Subprocess;

const std::string kBin = AS_BIN_DIR;
constexpr const char* kPrometheus = "/usr/bin/prometheus";  // Debian package prometheus

bool ServerAnswers(uint16_t port) {
  for (int i = 0; i < 600; ++i) {
    uint32_t challenge = 0;
    if (svtest::GetChallenge(port, &challenge).ok()) return true;
  }
  return false;
}

// The single value of an instant query's vector result, or nullopt while Prometheus has none.
std::optional<double> QueryValue(httplib::Client* api, const std::string& query) {
  const auto res = api->Get("/api/v1/query", httplib::Params{{"query", query}}, httplib::Headers{});
  if (!res || res->status != 200) return std::nullopt;
  const svtest::Json j = svtest::ParseJson(res->body);
  if (j["status"].string != "success") return std::nullopt;
  const svtest::Json& result = j["data"]["result"];
  if (result.array.size() != 1) return std::nullopt;
  return std::stod(result.array[0]["value"].array.at(1).string);  // [time, "value"]
}

// Polls Prometheus' log until it names the address it listens on (started with
// --web.listen-address=127.0.0.1:0, it logs `msg="Listening on" address=127.0.0.1:PORT`), or
// timeout_ms pass; 0 if it never did.
uint16_t WaitForPrometheusPort(const std::string& log_path, int timeout_ms) {
  const std::string marker = "msg=\"Listening on\" address=127.0.0.1:";
  const uint64_t deadline = core::SteadyMs() + static_cast<uint64_t>(timeout_ms);
  do {
    const std::string log = ReadFile(log_path);
    const size_t at = log.find(marker);
    if (at != std::string::npos) {
      const int port = std::atoi(log.c_str() + at + marker.size());
      return port > 0 && port <= 65535 ? static_cast<uint16_t>(port) : 0;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  } while (core::SteadyMs() < deadline);
  return 0;
}

// Polls `query` until its value satisfies `ok` or 60 s pass; returns the last value seen.
std::optional<double> WaitFor(httplib::Client* api, const std::string& query,
                              const std::function<bool(double)>& ok) {
  std::optional<double> v;
  const uint64_t deadline = core::SteadyMs() + 60000;
  while (core::SteadyMs() < deadline) {
    v = QueryValue(api, query);
    if (v && ok(*v)) return v;
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  return v;
}

}  // namespace

TEST_CASE("a real Prometheus scrapes the server under bot load and answers queries") {
  // Every port is the system's pick: the server names its own in the stats file, Prometheus
  // logs the address it bound.
  const testing_util::ScratchDir scratch("aftershock_prometheus_test");  // goes after the processes
  const std::string dir = scratch.path();
  Subprocess server({kBin + "/aftershock-server", "--port", "0", "--stats-out", dir + "/stats.json", "--bind",
                     "127.0.0.1", "--threads", "2", "--metrics-port", "0",
                     "--data-dir", dir + "/data", "--log-level", "warn", "--duration", "120"},
                    dir + "/server.out", dir + "/server.err");
  svtest::ServerPorts ports;
  REQUIRE(svtest::WaitForServerPorts(dir + "/stats.json", 30000, &ports));
  const uint16_t port = ports.lobby;
  const uint16_t metrics_port = ports.metrics;
  REQUIRE(metrics_port != 0);
  REQUIRE(ServerAnswers(port));
  Subprocess bots({kBin + "/aftershock-bots", "--server", "127.0.0.1:" + std::to_string(port),
                   "--bots", "8", "--duration", "60", "--quiet", "--out", dir + "/bots.json"},
                  dir + "/bots.out", dir + "/bots.err");
  {
    std::ofstream config(dir + "/prometheus.yml");
    config << "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
           << "scrape_configs:\n  - job_name: aftershock\n    static_configs:\n"
           << "      - targets: ['127.0.0.1:" << metrics_port << "']\n";
  }
  Subprocess prometheus({kPrometheus, "--config.file=" + dir + "/prometheus.yml",
                         "--storage.tsdb.path=" + dir + "/tsdb",
                         "--web.listen-address=127.0.0.1:0"},
                        dir + "/prometheus.out", dir + "/prometheus.err");
  REQUIRE(prometheus.started());
  const uint16_t prometheus_port = WaitForPrometheusPort(dir + "/prometheus.err", 30000);
  INFO(ReadFile(dir + "/prometheus.err").substr(0, 4000));
  REQUIRE(prometheus_port != 0);
  httplib::Client api("127.0.0.1", prometheus_port);
  api.set_connection_timeout(2);
  api.set_read_timeout(5);

  // The scrape target is up, and the series carry what 8 playing bots produce.
  INFO(ReadFile(dir + "/prometheus.err").substr(0, 4000));
  const auto up = WaitFor(&api, "up{job=\"aftershock\"}", [](double v) { return v == 1; });
  REQUIRE(up);
  CHECK(*up == 1);
  const auto players = WaitFor(&api, "aftershock_players", [](double v) { return v == 8; });
  REQUIRE(players);
  CHECK(*players == 8);
  CHECK(QueryValue(&api, "aftershock_max_players") == 64);
  const auto requests = WaitFor(&api, "sum(aftershock_requests_total)", [](double v) { return v > 100; });
  REQUIRE(requests);
  CHECK(*requests > 100);
  // Counters grow between scrapes: a rate over the last seconds is positive and bounded by what
  // 8 bots at 30 commands a second can send.
  const auto rate = WaitFor(&api, "sum(rate(aftershock_requests_total[5s]))", [](double v) { return v > 0; });
  REQUIRE(rate);
  CHECK(*rate > 0);
  CHECK(*rate < 8 * 40);
  const auto frames = WaitFor(&api, "aftershock_frame_duration_seconds_count", [](double v) { return v > 30; });
  REQUIRE(frames);
  const auto p99 = QueryValue(&api, "histogram_quantile(0.99, aftershock_frame_duration_seconds_bucket)");
  REQUIRE(p99);
  CHECK(*p99 > 0);
  CHECK(*p99 < 1.0);
  const auto phases = QueryValue(&api, "sum(aftershock_phase_seconds_total)");
  REQUIRE(phases);
  CHECK(*phases > 0);
  CHECK(QueryValue(&api, "aftershock_durability_enabled") == 1);
  const auto log_bytes = WaitFor(&api, "aftershock_log_bytes_total", [](double v) { return v > 0; });
  REQUIRE(log_bytes);
  CHECK(*log_bytes > 0);
  // The default durability is sync: every frame's record is fdatasync'ed, and the syncs are timed.
  const auto log_sync = WaitFor(&api, "aftershock_log_sync_seconds_total", [](double v) { return v > 0; });
  REQUIRE(log_sync);
  CHECK(*log_sync > 0);
  CHECK(QueryValue(&api, "aftershock_recovery_found_state") == 0);  // a fresh data dir

  prometheus.Kill(SIGTERM);
  bots.Kill(SIGTERM);
  server.Kill(SIGTERM);
}
