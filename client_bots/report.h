// The run's outputs: the JSON summary (--out), the per-second CSV series (--series) and the
// console lines. Schemas in docs/bots.md. Called from the main thread only.
#pragma once

#include <cstdio>
#include <string>

#include "client_bots/bot_options.h"
#include "client_bots/bot_stats.h"
#include "server/core/status.h"

namespace bots {

// Whole-run facts that are not per-thread counters.
struct RunFacts {
  double elapsed_s = 0;  // run start to stop (drain not included)
  double cpu_s = 0;      // user + system CPU seconds of the process during the run
  std::string nav_map;   // map used for navigation, or "" (feedback only)
};

// One second of the run, as the console and the CSV show it.
struct SecondSample {
  double t_s = 0;
  int connected = 0;
  uint64_t requests = 0;  // in this second
  uint64_t replies = 0;
  double mean_ms = 0, p50_ms = 0, p99_ms = 0;  // response times answered in this second
  uint64_t join_failures = 0;  // cumulative
  uint64_t reconnects = 0;     // cumulative
};

std::string SummaryJson(const BotOptions& o, const BotStats& s, const RunFacts& f);


// CSV series: header once, then one row per second. Not thread-safe.
class SeriesWriter {
 public:
  ~SeriesWriter();
  core::Status Open(const std::string& path);
  void Append(const SecondSample& s);

 private:
  std::FILE* file_ = nullptr;
};

std::string ConsoleLine(const SecondSample& s, int bots);

}  // namespace bots
