// AgonesSdk: the game server's side of Agones' SDK, over the SDK sidecar's REST interface
// (cpp-httplib): Ready once the world is recovered and the ports are open, Health on an
// interval, Shutdown after a clean --duration end. The sidecar listens on
// localhost:$AGONES_SDK_HTTP_PORT (default 9358) and may start after the game server, so calls
// are retried. Which calls happen when: deploy/README.md.
//
// Whatever listens on that port is trusted only for its status code: a reply's body is read up
// to kMaxReplyBytes and a longer one fails the call, so a listener that sends gigabytes costs a
// failed call, not the process's memory.
//
// Threading: Start/Shutdown/Stop on one controlling thread (main); the calls run on the SDK's
// own thread, never on a frame thread.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "server/core/mutex.h"
#include "server/core/status.h"
#include "server/core/thread_annotations.h"

namespace sv {

struct AgonesOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 9358;            // $AGONES_SDK_HTTP_PORT
  int health_interval_ms = 2000;   // Agones' default health period is 5 s
  int retry_ms = 500;              // between attempts of a failed call
};

// The options from the environment: AGONES_SDK_HTTP_PORT if set (InvalidArgument if it is not
// a port number), the defaults otherwise.
core::Status AgonesOptionsFromEnv(int health_interval_ms, AgonesOptions* out);

class AgonesSdk {
 public:
  // Starts the SDK thread: POST /ready (retried until it succeeds or Stop/Shutdown), then
  // POST /health every health_interval_ms. Call once recovery finished and the ports are open.
  static std::unique_ptr<AgonesSdk> Start(const AgonesOptions& options);
  ~AgonesSdk();  // Stop()

  // A clean end: stops the health pings, then POST /shutdown, tried again (retry_ms apart) while
  // it fails and kShutdownBudgetMs have not passed since the first try; each try waits for the
  // reply at most what is left of the budget (and 2 s). The result of the last try. A sidecar
  // that accepts and never answers so costs the process's exit about 3 s, not 5 tries of 2 s.
  core::Status Shutdown();
  static constexpr int kShutdownBudgetMs = 3000;
  // Stops the SDK thread without telling Agones (a signal or an error ends the process: Agones
  // sees the pod end, or the health pings stop).
  void Stop();

  // The most of a reply's body a call reads (the gateway answers `{}`); a longer one fails it.
  static constexpr size_t kMaxReplyBytes = 4096;

 private:
  explicit AgonesSdk(const AgonesOptions& options) : options_(options) {}
  void Run();
  // POST `path` ({}), waiting up to read_timeout_ms for each read of the reply: OK on HTTP 200
  // with a body of at most kMaxReplyBytes.
  core::Status Post(const std::string& path, int read_timeout_ms = 2000);
  bool WaitStop(int ms) EXCLUDES(mu_);  // true if stopping

  const AgonesOptions options_;
  core::Mutex mu_;
  core::CondVar cv_;
  bool stop_ GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace sv
