// AgonesSdk: the game server's side of Agones' SDK, over the SDK sidecar's REST interface
// (cpp-httplib): Ready once the world is recovered and the ports are open, Health on an
// interval, Shutdown after a clean --duration end. The sidecar listens on
// localhost:$AGONES_SDK_HTTP_PORT (default 9358) and may start after the game server, so calls
// are retried. Which calls happen when: deploy/README.md.
//
// Whatever listens on that port is trusted only for its status code: every call must end within
// a deadline (connect, request and reply together), and a reply's body is read up to
// kMaxReplyBytes and the whole reply up to kMaxReplyReadBytes, a longer one failing the call.
// So a listener that stalls, drips its reply or sends gigabytes costs a failed call, never the
// process's memory or its exit.
//
// Threading: Start/Shutdown/Stop on one controlling thread (main); the calls run on the SDK's
// own thread, never on a frame thread. Each Ready or Health call has a watchdog thread
// (as-agones-wd) that cuts it off when Stop() is called, joined before the call returns. A call's
// deadline is its socket's: every wait ends at it (BoundedStream).
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "server/core/mutex.h"
#include "server/core/status.h"
#include "server/core/thread_annotations.h"

namespace httplib {
class ClientImpl;
}

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

  // A clean end: Stop(), then POST /shutdown, tried again (retry_ms apart) while it fails and
  // kShutdownBudgetMs have not passed since the first try; each try must end within what is left
  // of the budget (and kCallTimeoutMs). The result of the last try. A sidecar that accepts and
  // never answers, or drips its reply, so costs the process's exit about 3 s (plus Stop's).
  core::Status Shutdown();
  static constexpr int kShutdownBudgetMs = 3000;
  // Stops the SDK thread without telling Agones (a signal or an error ends the process: Agones
  // sees the pod end, or the health pings stop). A call in flight is abandoned at once, so this
  // returns within about the 1 s connect timeout whatever the sidecar does.
  void Stop();

  // Each call (Ready, Health, one Shutdown try) must end within kCallTimeoutMs. A reply's body is
  // read up to kMaxReplyBytes (the gateway answers `{}`), and the whole reply (status line,
  // headers, chunk framing and body) up to kMaxReplyReadBytes; a longer one fails the call.
  static constexpr int kCallTimeoutMs = 2000;
  static constexpr size_t kMaxReplyBytes = 4096;
  static constexpr size_t kMaxReplyReadBytes = 16384;

 private:
  explicit AgonesSdk(const AgonesOptions& options) : options_(options) {}
  void Run();
  // POST `path` ({}): OK on HTTP 200 with a body of at most kMaxReplyBytes. The call is cut off
  // (an IoError that says why) once timeout_ms have passed since it began (its socket's waits end
  // there) and, with abandon_on_stop, as soon as Stop() is called. One call at a time: from the
  // SDK thread, then from the controlling thread once Stop() joined it.
  core::Status Post(const std::string& path, int timeout_ms, bool abandon_on_stop) EXCLUDES(mu_);
  // Why a call was cut off by its watchdog, if it was.
  enum class Cut { kNone, kStop };
  // Post's watchdog, on its own thread: waits until the call ends (call_in_flight_ clears) or
  // Stop() is called; in the second case stops `client` (again, until the call has returned).
  Cut WatchCall(httplib::ClientImpl* client) EXCLUDES(mu_);
  bool WaitStop(int ms) EXCLUDES(mu_);  // true if stopping

  const AgonesOptions options_;
  core::Mutex mu_;
  core::CondVar cv_;  // signalled when stop_ is set and when a call ends
  bool stop_ GUARDED_BY(mu_) = false;
  bool call_in_flight_ GUARDED_BY(mu_) = false;  // a Post's watchdog waits for it to clear
  std::thread thread_;
};

}  // namespace sv
