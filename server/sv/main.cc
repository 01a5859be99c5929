// aftershock-server: parses flags, starts the Server, and from the main thread handles signals,
// --duration, the periodic stats JSON and console line, and the clean shutdown.
#include <signal.h>

#include <cstdio>
#include <ctime>
#include <memory>
#include <optional>

#include <spdlog/async.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "server/core/atomic_file.h"
#include "server/sv/agones.h"
#include "server/sv/metrics.h"
#include "server/sv/server.h"
#include "server/sv/server_options.h"
#include "server/sv/stats_report.h"

namespace {

void SetUpLogging(const std::string& level) {
  // Frame threads log through an async logger that drops the oldest message rather than block.
  spdlog::init_thread_pool(8192, 1);
  auto logger = spdlog::create_async_nb<spdlog::sinks::stderr_color_sink_mt>("sv");
  logger->set_level(spdlog::level::from_str(level));
  spdlog::set_default_logger(logger);
}

void WriteStats(const sv::StatsReport& report, const std::string& path) {
  if (path.empty()) return;
  const core::Status s = core::WriteFileAtomically(path, sv::ToJson(report));
  if (!s.ok()) spdlog::error("stats: {}", s.ToString());
}

}  // namespace

int main(int argc, char** argv) {
  sv::ServerOptions options;
  if (const std::optional<int> code = sv::ExitForParse(sv::ParseServerOptions(argc, argv, &options))) {
    return *code;
  }
  // Signals are taken synchronously by the main thread only: block them before any thread starts.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  SetUpLogging(options.log_level);

  std::unique_ptr<sv::Server> server;
  const core::Status s = sv::Server::Create(options, &server);
  if (!s.ok()) {
    spdlog::critical("cannot start: {}", s.ToString());
    spdlog::shutdown();
    return 1;
  }
  std::unique_ptr<sv::MetricsServer> metrics;
  if (options.metrics) {
    const core::Status ms = sv::MetricsServer::Start(options.bind_address, options.metrics_port,
                                                     &server->metrics_board(), &metrics);
    if (!ms.ok()) {
      spdlog::critical("cannot start: {}", ms.ToString());
      spdlog::shutdown();
      return 1;
    }
    server->set_metrics_port(metrics->port());
    spdlog::info("metrics on http://{}:{}/metrics", options.bind_address, metrics->port());
  }
  // The recovery figures and the bound ports are in the stats file before the first frame (crash
  // tests and port-0 tests read them).
  WriteStats(server->Report(), options.stats_out);
  sv::AgonesOptions agones_options;
  if (options.agones) {
    const core::Status as = sv::AgonesOptionsFromEnv(options.agones_health_ms, &agones_options);
    if (!as.ok()) {
      spdlog::critical("cannot start: {}", as.ToString());
      spdlog::shutdown();
      return 1;
    }
  }
  server->Start();
  // Recovered (in Create) and listening: Agones may send players now.
  std::unique_ptr<sv::AgonesSdk> agones;
  if (options.agones) agones = sv::AgonesSdk::Start(agones_options);
  bool duration_reached = false;
  const auto start = std::chrono::steady_clock::now();
  auto next_report = start + std::chrono::duration<double>(options.stats_interval_s);
  sv::StatsReport prev = server->Report();
  for (;;) {
    timespec timeout{0, 50'000'000};
    const int sig = sigtimedwait(&signals, nullptr, &timeout);
    if (sig == SIGINT || sig == SIGTERM) {
      spdlog::info("signal {}: shutting down", sig);
      break;
    }
    if (server->stop_requested()) break;  // the server stopped itself (durability failure)
    const auto now = std::chrono::steady_clock::now();
    if (options.duration_s > 0 && now - start >= std::chrono::duration<double>(options.duration_s)) {
      spdlog::info("--duration {} s reached: shutting down", options.duration_s);
      duration_reached = true;
      break;
    }
    if (now >= next_report) {
      next_report += std::chrono::duration_cast<std::chrono::steady_clock::duration>(
          std::chrono::duration<double>(options.stats_interval_s));
      const sv::StatsReport cur = server->Report();
      spdlog::info("{}", sv::ConsoleLine(prev, cur));
      prev = cur;
      WriteStats(cur, options.stats_out);
    }
  }
  server->RequestStop();
  server->Wait();
  if (metrics != nullptr) metrics->Stop();
  const sv::StatsReport final_report = server->Report();
  spdlog::info("final: {}", sv::ConsoleLine(prev, final_report));
  WriteStats(final_report, options.stats_out);
  const core::Status fatal = server->fatal_status();
  server.reset();
  if (agones != nullptr) {
    // Only a clean end asks Agones to shut the game server down; after a signal Agones is
    // already stopping the pod, after a failure the silence marks it unhealthy (and a restarted
    // pod recovers from the data volume).
    if (duration_reached && fatal.ok()) {
      const core::Status as = agones->Shutdown();
      if (!as.ok()) spdlog::error("agones: shutdown not delivered: {}", as.ToString());
    } else {
      agones->Stop();
    }
  }
  if (!fatal.ok()) {
    spdlog::critical("stopped: {}", fatal.ToString());
    spdlog::shutdown();
    return 1;
  }
  spdlog::shutdown();
  return 0;
}
