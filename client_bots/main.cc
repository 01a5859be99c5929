// aftershock-bots: the bot cluster. Parses flags, finds the map for navigation, starts the bot
// threads, prints a console line (and a CSV row) every second, and writes the JSON summary.
// Exit codes: 0 ok, 1 no bot ever received a snapshot (or an output file failed), 2 bad flags.
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <thread>
#include <vector>

#include <enet/enet.h>

#include "client_bots/bot_options.h"
#include "client_bots/bot_thread.h"
#include "client_bots/challenge_client.h"
#include "client_bots/navigator.h"
#include "client_bots/report.h"
#include "server/protocol/enet_pool.h"
#include "server/core/atomic_file.h"
#include "server/core/cpu_clock.h"
#include "server/core/thread_name.h"

namespace {

// SIGINT or SIGTERM ends the run as its duration would: no new command, up to --drain-ms for the
// answers in flight, then the report. A second one cuts that wait short. (Lock-free atomics
// only: they are safe in a signal handler.)
std::atomic<bool> g_stop{false};
std::atomic<bool> g_abort{false};
static_assert(std::atomic<bool>::is_always_lock_free);

void OnSignal(int) {
  if (g_stop.exchange(true)) g_abort.store(true);
}


// --map if given; else the server's map by its status name, under maps/ or maps/librequake/.
// Empty NavMap (feedback-only navigation) when none is found; false only for a bad --map.
bool FindNavMap(const bots::BotOptions& o, const ENetAddress& lobby, bots::NavMap* nav, std::string* used) {
  std::string path = o.map_path;
  if (path.empty()) {
    proto::ServerStatus status;
    if (bots::QueryStatus(lobby.host, lobby.port, 1500, &status).ok()) {
      for (const std::string dir : {"maps/", "maps/librequake/"}) {
        if (std::filesystem::exists(dir + status.map + ".map")) {
          path = dir + status.map + ".map";
          break;
        }
      }
    }
    if (path.empty()) {
      std::printf("navigation: no map known (server's status unanswered or map not found): feedback only\n");
      return true;
    }
  }
  const core::Status s = bots::LoadNavMap(path, nav);
  if (!s.ok()) {
    if (!o.map_path.empty()) {
      std::fprintf(stderr, "error: --map %s: %s\n", path.c_str(), s.ToString().c_str());
      return false;
    }
    std::printf("navigation: %s did not load (%s): feedback only\n", path.c_str(), s.ToString().c_str());
    return true;
  }
  *used = path;
  std::printf("navigation: %s (%zu waypoints)\n", path.c_str(), nav->waypoints.size());
  return true;
}

// Samples the threads' live counters once; returns this second's row.
bots::SecondSample Sample(std::vector<std::unique_ptr<bots::BotThread>>& threads, double t_s, uint64_t* last_req,
                          uint64_t* last_rep) {
  bots::SecondSample s;
  s.t_s = t_s;
  uint64_t req = 0, rep = 0;
  core::LogHistogram h;
  for (auto& t : threads) {
    bots::LiveStats& live = t->live();
    req += live.requests.load(std::memory_order_relaxed);
    rep += live.replies.load(std::memory_order_relaxed);
    s.join_failures += live.join_failures.load(std::memory_order_relaxed);
    s.reconnects += live.reconnects.load(std::memory_order_relaxed);
    s.connected += live.connected.load(std::memory_order_relaxed);
    core::MutexLock lock(&live.mu);
    h.Merge(live.interval);
    live.interval.Clear();
  }
  s.requests = req - *last_req;
  s.replies = rep - *last_rep;
  *last_req = req;
  *last_rep = rep;
  s.mean_ms = h.mean_us() / 1000;
  s.p50_ms = h.Percentile(0.5) / 1000;
  s.p99_ms = h.Percentile(0.99) / 1000;
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  bots::BotOptions o;
  const bots::ParseResult parsed = bots::ParseBotOptions(argc, argv, &o);
  if (parsed.outcome == bots::ParseOutcome::kHelp) {
    std::printf("%s", parsed.text.c_str());
    return 0;
  }
  if (parsed.outcome == bots::ParseOutcome::kError) {
    std::fprintf(stderr, "%s", parsed.text.c_str());
    return 2;
  }
  if (!proto::InitializeEnet().ok()) {
    std::fprintf(stderr, "error: enet_initialize failed\n");
    return 1;
  }
  std::vector<ENetAddress> lobbies;
  for (const bots::Endpoint& e : o.servers) {
    ENetAddress lobby{};
    if (enet_address_set_host(&lobby, e.host.c_str()) != 0) {
      std::fprintf(stderr, "error: --server: cannot resolve host '%s'\n", e.host.c_str());
      return 2;
    }
    lobby.port = e.port;
    lobbies.push_back(lobby);
  }
  bots::NavMap nav;
  bots::RunFacts facts;
  if (!FindNavMap(o, lobbies[0], &nav, &facts.nav_map)) return 2;

  std::signal(SIGINT, OnSignal);
  std::signal(SIGTERM, OnSignal);
  const auto epoch = std::chrono::steady_clock::now();
  const double cpu_start = core::ProcessCpuSeconds();
  std::vector<std::unique_ptr<bots::BotThread>> threads;
  for (int t = 0; t < o.threads; ++t) {
    std::vector<int> mine;
    for (int i = t; i < o.bots; i += o.threads) mine.push_back(i);
    threads.push_back(std::make_unique<bots::BotThread>(std::move(mine), o, nav, lobbies, epoch));
    const core::Status s = threads.back()->Init();
    if (!s.ok()) {
      std::fprintf(stderr, "error: bot thread %d: %s\n", t, s.ToString().c_str());
      return 1;
    }
  }
  std::vector<std::thread> running;
  for (size_t i = 0; i < threads.size(); ++i) {
    running.emplace_back([&t = threads[i], i] {
      core::NameThisThread("as-bots-" + std::to_string(i));
      t->Run(g_stop, g_abort);
    });
  }

  bots::SeriesWriter series;
  if (!o.series_path.empty()) {
    const core::Status s = series.Open(o.series_path);
    if (!s.ok()) std::fprintf(stderr, "warning: --series: %s\n", s.ToString().c_str());
  }
  uint64_t last_req = 0, last_rep = 0;
  auto since = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - epoch).count(); };
  for (int second = 1; !g_stop.load() && since() < o.duration_s; ++second) {
    const auto wake = epoch + std::chrono::seconds(second);
    while (!g_stop.load() && std::chrono::steady_clock::now() < wake && since() < o.duration_s) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (std::chrono::steady_clock::now() < wake) break;  // the run ended mid-second
    const bots::SecondSample s = Sample(threads, since(), &last_req, &last_rep);
    series.Append(s);
    if (!o.quiet) std::printf("%s\n", bots::ConsoleLine(s, o.bots).c_str());
    std::fflush(stdout);
  }
  facts.elapsed_s = std::min(since(), o.duration_s);
  if (g_stop.load()) {
    std::fprintf(stderr, "stopping on a signal: no new commands; waiting up to %d ms for the answers in flight "
                 "(a second signal ends the wait)\n", o.drain_ms);
  }
  for (auto& r : running) r.join();
  facts.cpu_s = core::ProcessCpuSeconds() - cpu_start;

  bots::BotStats total;
  for (auto& t : threads) total.Merge(t->stats());
  const std::string json = bots::SummaryJson(o, total, facts);
  std::printf("%s", json.c_str());
  int rc = total.replies_received > 0 ? 0 : 1;
  if (!o.out_path.empty()) {
    const core::Status s = core::WriteFileAtomically(o.out_path, json);
    if (!s.ok()) {
      std::fprintf(stderr, "error: --out: %s\n", s.ToString().c_str());
      rc = 1;
    }
  }
  enet_deinitialize();
  return rc;
}
