// Prometheus metrics: the snapshot the frame loop publishes (MetricsSnapshot, MetricsBoard), its
// rendering in Prometheus' text exposition format 0.0.4 (RenderPrometheus; every metric is listed
// in docs/stats.md), and the HTTP endpoint that serves it (MetricsServer, cpp-httplib).
//
// Scraping never stalls a frame: the master publishes a complete snapshot every
// kMetricsPublishMs from its world phase with a try-lock (a scrape holding the lock makes it skip
// one publication, never wait), and the HTTP thread only renders the published copy.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "server/core/log_histogram.h"
#include "server/core/mutex.h"
#include "server/core/status.h"
#include "server/core/thread_annotations.h"
#include "server/sv/stats_report.h"

namespace sv {

inline constexpr uint64_t kMetricsPublishMs = 250;

// Everything one scrape shows: plain values, copied on the frame thread.
struct MetricsSnapshot {
  StatsReport report;
  core::LogHistogram frame_hist;  // microseconds
  // Raw leaf-locking counters (the report has them only as percentages).
  uint64_t leaf_relocks = 0;
  uint64_t shared_leaf_frames = 0;
  uint16_t protocol_version = 0;
};

// The latest snapshot. Publish from one thread (the frame master); Latest from any thread.
class MetricsBoard {
 public:
  // Never blocks: returns false (and drops `snapshot`) if a reader holds the lock right now.
  bool TryPublish(std::shared_ptr<const MetricsSnapshot> snapshot) EXCLUDES(mu_);
  // The latest published snapshot, or null before the first.
  std::shared_ptr<const MetricsSnapshot> Latest() const EXCLUDES(mu_);

 private:
  mutable core::Mutex mu_;
  std::shared_ptr<const MetricsSnapshot> latest_ GUARDED_BY(mu_);
};

// The text exposition of `s` (names, HELP and TYPE lines, labels, `# EOF`-less 0.0.4 format).
std::string RenderPrometheus(const MetricsSnapshot& s);

class MetricsHttp;  // metrics.cc: cpp-httplib's server with bounded connections

// GET /metrics on bind_address:port, served by one HTTP thread from the board's latest snapshot
// (503 before the first). Other paths answer 404; a request that carries a body (Content-Length
// other than 0, or Transfer-Encoding) answers 413 before any of the body is read.
//
// One request per connection (Connection: close). At most kMetricsMaxConnections connections are
// held at once; one accepted beyond them is answered 503 (Retry-After: 1) at once and closed, so
// a flood of connections holds a bounded number of the process's file descriptors. The request
// heads of all held connections are read together, as their bytes come, and a request is served
// once its head is complete, so clients that send nothing or drip their request do not delay a
// scrape beside them. A connection is closed if it sends nothing for kMetricsIdleMs after it was
// accepted, if its head is longer than kMetricsMaxHeadBytes (431), if writing the reply stalls
// kMetricsStallMs, or if it has not been answered kMetricsExchangeMs after it was accepted.
// Create/Stop on one controlling thread.
inline constexpr int kMetricsIdleMs = 1000;
inline constexpr int kMetricsStallMs = 2000;
inline constexpr int kMetricsExchangeMs = 5000;
inline constexpr int kMetricsMaxConnections = 32;
inline constexpr int kMetricsListenBacklog = 64;  // connections the kernel queues for accept
inline constexpr size_t kMetricsMaxHeadBytes = 8192;

class MetricsServer {
 public:
  // Binds and starts the HTTP thread. `board` must outlive the server.
  static core::Status Start(const std::string& bind_address, uint16_t port,
                            const MetricsBoard* board, std::unique_ptr<MetricsServer>* out);
  ~MetricsServer();  // Stop()
  // Closes the listening socket and the connection being served, whatever its client is doing,
  // and joins the HTTP thread: returns at once (in milliseconds), not when a client is done.
  void Stop();
  uint16_t port() const { return port_; }

 private:
  MetricsServer() = default;

  std::unique_ptr<MetricsHttp> http_;
  std::thread thread_;
  uint16_t port_ = 0;
};

}  // namespace sv
