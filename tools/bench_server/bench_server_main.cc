// bench_server: the server's time breakdown under a load this process generates itself. For each
// (threads, locking) pair it starts an in-process server on loopback, joins --clients codec
// clients (tests/server's TestClient) that send 30 commands/s each for --seconds, and prints one
// row of the paper's breakdown. --overhead instead compares --instrument on/off on 1 thread
// (the paper's Figure 4): mean frame time with and without the phase clocks.
#include <cstdio>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <cxxopts.hpp>
#include <spdlog/spdlog.h>

#include "server/sv/server.h"
#include "server/sv/stats_report.h"
#include "tests/server/play_harness.h"

namespace {

std::vector<std::string> Split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) out.push_back(item);
  return out;
}

bool RunOne(const std::string& map, uint16_t port, int threads, sv::LockingScheme locking,
            bool instrument, int clients, int seconds, sv::StatsReport* out) {
  sv::ServerOptions o = svtest::TestOptions(locking, threads);
  o.port = port;
  o.map_path = map;
  o.max_players = std::max(clients, 8);
  o.instrument = instrument;
  o.region_check = false;
  std::unique_ptr<sv::Server> server;
  const core::Status s = sv::Server::Create(o, &server);
  if (!s.ok()) {
    std::fprintf(stderr, "bench_server: %s\n", s.ToString().c_str());
    return false;
  }
  server->Start();
  svtest::PlayResult r = svtest::Play(server->lobby_port(), clients, "b", seconds * 1000, 1000, 1);
  server->RequestStop();
  server->Wait();
  if (r.joined != clients) std::fprintf(stderr, "only %d of %d joined: %s\n", r.joined, clients, r.join_error.c_str());
  *out = server->Report();
  return true;
}

void PrintRow(const sv::StatsReport& r) {
  const auto pct = sv::Percentages(r.total_ns);
  const double dt = r.info.uptime_s > 0 ? r.info.uptime_s : 1;
  std::printf("%7d %-13s %7.1f %8.0f %7.3f %7.3f |", r.info.threads, r.info.locking.c_str(),
              r.frames / dt, r.requests / dt, r.frame.mean_ms, r.frame.p99_ms);
  for (double p : pct) std::printf(" %6.2f", p);
  std::printf(" | %5.2f %6.1f %6.1f %5.2f±%4.2f\n", r.leaves_per_request, r.relock_pct,
              r.shared_leaves_pct, r.rptf_mean, r.rptf_stddev);
}

}  // namespace

int main(int argc, char** argv) {
  cxxopts::Options options("bench_server", "Time breakdown of aftershock's server under codec-client load");
  options.add_options()
    ("map", "map file", cxxopts::value<std::string>()->default_value("maps/dm_arena.map"))
    ("port", "first base port (each run uses the next 10)", cxxopts::value<int>()->default_value("29000"))
    ("clients", "clients (30 commands/s each)", cxxopts::value<int>()->default_value("32"))
    ("seconds", "seconds of play per run", cxxopts::value<int>()->default_value("5"))
    ("threads", "comma-separated thread counts", cxxopts::value<std::string>()->default_value("1,2,4"))
    ("locking", "comma-separated schemes", cxxopts::value<std::string>()->default_value("global,areanode,areanode-opt"))
    ("overhead", "measure instrumentation overhead (1 thread, on vs off, --repeat times)")
    ("repeat", "runs per setting for --overhead", cxxopts::value<int>()->default_value("3"))
    ("h,help", "help");
  cxxopts::ParseResult args;
  try {
    args = options.parse(argc, argv);
  } catch (const cxxopts::exceptions::exception& e) {
    std::fprintf(stderr, "error: %s\n\n%s", e.what(), options.help().c_str());
    return 2;
  }
  if (args.count("help")) {
    std::printf("%s", options.help().c_str());
    return 0;
  }
  spdlog::set_level(spdlog::level::warn);
  const std::string map = args["map"].as<std::string>();
  const int clients = args["clients"].as<int>();
  const int seconds = args["seconds"].as<int>();
  int port = args["port"].as<int>();
  if (args.count("overhead")) {
    const int repeat = args["repeat"].as<int>();
    double sum[2] = {0, 0};
    for (int rep = 0; rep < repeat; ++rep) {
      for (int on = 1; on >= 0; --on) {
        sv::StatsReport r;
        if (!RunOne(map, static_cast<uint16_t>(port), 1, sv::LockingScheme::kAreanodeOpt, on == 1,
                    clients, seconds, &r)) return 1;
        port += 10;
        std::printf("instrument %-3s run %d: frame mean %.4f ms p99 %.4f ms, %llu frames, %llu commands\n",
                    on ? "on" : "off", rep, r.frame.mean_ms, r.frame.p99_ms,
                    static_cast<unsigned long long>(r.frames), static_cast<unsigned long long>(r.commands));
        sum[on] += r.frame.mean_ms;
      }
    }
    std::printf("mean frame time: instrumented %.4f ms, not %.4f ms: overhead %.1f%%\n",
                sum[1] / repeat, sum[0] / repeat, 100.0 * (sum[1] - sum[0]) / sum[0]);
    return 0;
  }
  std::printf("%d clients x 30 commands/s, %d s per run, map %s\n", clients, seconds, map.c_str());
  std::printf("threads locking       frames/s    req/s  f.mean   f.p99 |  world   recv   exec  lleaf  lpar   reply  intra  inter   idle | lv/rq relock shared  rq/thr/frame\n");
  for (const std::string& t : Split(args["threads"].as<std::string>())) {
    for (const std::string& l : Split(args["locking"].as<std::string>())) {
      const int threads = std::stoi(t);
      sv::LockingScheme locking;
      if (!sv::ParseLockingName(l, &locking)) {
        std::fprintf(stderr, "bench_server: unknown locking scheme '%s'\n", l.c_str());
        return 2;
      }
      if (locking == sv::LockingScheme::kSequential && threads != 1) continue;
      sv::StatsReport r;
      if (!RunOne(map, static_cast<uint16_t>(port), threads, locking, true, clients, seconds, &r)) return 1;
      port += 10;
      PrintRow(r);
      std::fflush(stdout);
    }
  }
  return 0;
}
