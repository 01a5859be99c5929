// AgonesSdk: Ready, Health and Shutdown over the Agones SDK sidecar's REST gateway.
#include "server/sv/agones.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <thread>

#include <httplib.h>
#include <spdlog/spdlog.h>

#include "server/core/thread_name.h"
#include "server/sv/bounded_stream.h"

namespace sv {

namespace {

using Clock = std::chrono::steady_clock;

// How often a watchdog repeats ClientImpl::stop() until the call it cuts off has returned: a
// stop() that comes before the client has opened its socket finds nothing to shut and does
// nothing.
constexpr auto kStopRepeat = std::chrono::milliseconds(20);

// Without a content receiver httplib 0.11 appends the whole reply to Response::body: a listener
// announcing 20 GiB and streaming it ended the server with std::bad_alloc. This one reads at most
// kMaxReplyBytes of the body and keeps none of it (only the status matters); a Content-Length
// over the limit is refused before any of the body is read.
struct ReplyLimit {
  void AttachTo(httplib::Request* req) {
    req->response_handler = [this](const httplib::Response& r) {
      if (r.has_header("Content-Length")) {
        announced = r.get_header_value<uint64_t>("Content-Length");
      }
      return announced <= AgonesSdk::kMaxReplyBytes;
    };
    req->content_receiver = [this](const char*, size_t n, uint64_t, uint64_t) {
      received += n;
      return received <= AgonesSdk::kMaxReplyBytes;
    };
  }
  // Why the reply broke the limit, or "" if it did not.
  std::string Broken() const {
    const std::string limit = std::to_string(AgonesSdk::kMaxReplyBytes);
    if (announced > AgonesSdk::kMaxReplyBytes) {
      return "reply of " + std::to_string(announced) + " bytes refused unread (at most " + limit +
             ")";
    }
    if (received > AgonesSdk::kMaxReplyBytes) {
      return "reply longer than " + limit + " bytes, abandoned";
    }
    return "";
  }

  uint64_t announced = 0;  // Content-Length, if the reply had one
  size_t received = 0;
};

// httplib 0.11's client reads a reply's status line and headers without a size limit, before
// any callback of ours runs: a listener sending endless header lines grew the server by about
// 390 MB within one 2 s call. ClientImpl::process_socket is virtual, so this client serves each
// call's socket through a BoundedStream instead of the library's stream: reads end after
// kMaxReplyReadBytes in all, and every wait at the call's deadline.
class BoundedClient final : public httplib::ClientImpl {
 public:
  BoundedClient(const std::string& host, int port, Clock::time_point deadline, int stall_ms)
      : httplib::ClientImpl(host, port), deadline_(deadline), stall_ms_(stall_ms) {}

  // True if a call read kMaxReplyReadBytes and wanted more.
  bool read_limit_reached() const { return read_limit_reached_; }

 private:
  bool process_socket(const Socket& socket,
                      std::function<bool(httplib::Stream& strm)> callback) override {
    BoundedStream stream(socket.sock, deadline_, stall_ms_, AgonesSdk::kMaxReplyReadBytes);
    const bool ok = callback(stream);
    read_limit_reached_ = read_limit_reached_ || stream.read_limit_reached();
    return ok;
  }

  const Clock::time_point deadline_;
  const int stall_ms_;
  bool read_limit_reached_ = false;  // the calling thread's
};

}  // namespace

core::Status AgonesOptionsFromEnv(int health_interval_ms, AgonesOptions* out) {
  AgonesOptions o;
  o.health_interval_ms = health_interval_ms;
  const char* port = std::getenv("AGONES_SDK_HTTP_PORT");
  if (port != nullptr && *port != '\0') {
    char* end = nullptr;
    const long p = std::strtol(port, &end, 10);
    if (*end != '\0' || p < 1 || p > 65535) {
      return core::Status::InvalidArgument(std::string("AGONES_SDK_HTTP_PORT '") + port +
                                           "' is not a port number");
    }
    o.port = static_cast<uint16_t>(p);
  }
  *out = o;
  return core::Status::OK();
}

std::unique_ptr<AgonesSdk> AgonesSdk::Start(const AgonesOptions& options) {
  std::unique_ptr<AgonesSdk> sdk(new AgonesSdk(options));
  sdk->thread_ = std::thread([s = sdk.get()] {
    core::NameThisThread("as-agones");
    s->Run();
  });
  return sdk;
}

AgonesSdk::~AgonesSdk() { Stop(); }

// Why a watchdog: a call's deadline is its stream's (BoundedClient: every wait ends at it, and
// the connect timeout is within it), but nothing in httplib 0.11 ends a call when Stop() is
// called. The library's one way to end a call from outside is ClientImpl::stop(), which shuts the
// socket of a call in flight (under the client's socket mutex, so from another thread).
AgonesSdk::Cut AgonesSdk::WatchCall(httplib::ClientImpl* client) {
  {
    core::MutexLock lock(&mu_);
    while (call_in_flight_ && !stop_) cv_.Wait(&mu_);
    if (!call_in_flight_) return Cut::kNone;
  }
  for (;;) {
    client->stop();  // outside mu_: it waits for the client's socket mutex, held while connecting
    core::MutexLock lock(&mu_);
    if (call_in_flight_) cv_.WaitUntil(&mu_, Clock::now() + kStopRepeat);
    if (!call_in_flight_) return Cut::kStop;
  }
}

core::Status AgonesSdk::Post(const std::string& path, int timeout_ms, bool abandon_on_stop) {
  const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  const int connect_ms = std::min(timeout_ms, 1000);
  BoundedClient client(options_.host, options_.port, deadline, timeout_ms);
  client.set_connection_timeout(connect_ms / 1000, (connect_ms % 1000) * 1000);
  // These take effect although process_socket is ours: the library sets them on the socket it
  // connects as SO_RCVTIMEO and SO_SNDTIMEO (seen with `strace -e setsockopt` on
  // ops_agones_sdk_test), so no single blocking recv or send outlasts the call's timeout either.
  client.set_read_timeout(timeout_ms / 1000, (timeout_ms % 1000) * 1000);
  client.set_write_timeout(timeout_ms / 1000, (timeout_ms % 1000) * 1000);
  // The gateway maps each SDK call to POST with an empty JSON message as the body. The request is
  // built by hand because 0.11's Client::Post has no overload taking a content receiver.
  httplib::Request req;
  req.method = "POST";
  req.path = path;
  req.body = "{}";
  req.set_header("Content-Type", "application/json");
  ReplyLimit limit;
  limit.AttachTo(&req);
  {
    core::MutexLock lock(&mu_);
    call_in_flight_ = true;
  }
  Cut cut = Cut::kNone;  // the watchdog's until joined
  std::thread watchdog;
  if (abandon_on_stop) {
    watchdog = std::thread([&] {
      core::NameThisThread("as-agones-wd");
      cut = WatchCall(&client);
    });
  }
  const auto res = client.send(req);  // returns once complete, failed, past the deadline or cut
  {
    core::MutexLock lock(&mu_);
    call_in_flight_ = false;
  }
  cv_.SignalAll();
  if (watchdog.joinable()) watchdog.join();
  if (const std::string broken = limit.Broken(); !broken.empty()) {
    return core::Status::IoError("agones " + path + ": " + broken);
  }
  if (client.read_limit_reached()) {
    return core::Status::IoError("agones " + path + ": reply longer than " +
                                 std::to_string(kMaxReplyReadBytes) +
                                 " bytes in all (status line and headers included), abandoned");
  }
  if (res) {
    if (res->status != 200) {
      return core::Status::IoError("agones " + path + ": HTTP " + std::to_string(res->status));
    }
    return core::Status::OK();  // complete, even if the watchdog fired just after
  }
  if (cut == Cut::kStop) {
    return core::Status::IoError("agones " + path + ": abandoned, the SDK is stopping");
  }
  if (Clock::now() >= deadline) {  // the stream's waits ended there
    return core::Status::IoError("agones " + path + ": no complete reply within " +
                                 std::to_string(timeout_ms) + " ms, abandoned");
  }
  return core::Status::IoError("agones " + path + ": " + httplib::to_string(res.error()));
}

bool AgonesSdk::WaitStop(int ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  core::MutexLock lock(&mu_);
  while (!stop_) {
    if (!cv_.WaitUntil(&mu_, deadline)) break;
  }
  return stop_;
}

void AgonesSdk::Run() {
  for (int attempt = 1;; ++attempt) {
    const core::Status s = Post("/ready", kCallTimeoutMs, /*abandon_on_stop=*/true);
    if (s.ok()) {
      spdlog::info("agones: ready (attempt {})", attempt);
      break;
    }
    if (WaitStop(0)) return;  // cut off by Stop(): nothing to retry
    if (attempt == 1 || attempt % 20 == 0) spdlog::warn("{}; retrying", s.ToString());
    if (WaitStop(options_.retry_ms)) return;
  }
  while (!WaitStop(options_.health_interval_ms)) {
    const core::Status s = Post("/health", kCallTimeoutMs, /*abandon_on_stop=*/true);
    if (!s.ok()) spdlog::warn("{}", s.ToString());
  }
}

void AgonesSdk::Stop() {
  {
    core::MutexLock lock(&mu_);
    stop_ = true;
  }
  cv_.SignalAll();
  if (thread_.joinable()) thread_.join();
}

core::Status AgonesSdk::Shutdown() {
  Stop();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kShutdownBudgetMs);
  auto left_ms = [&] {
    return static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                deadline - std::chrono::steady_clock::now())
                                .count());
  };
  core::Status s;
  for (int attempt = 1;; ++attempt) {
    // Stop() has set stop_: this call must not be abandoned for it, only for its deadline.
    s = Post("/shutdown", std::clamp(left_ms(), 100, kCallTimeoutMs), /*abandon_on_stop=*/false);
    if (s.ok()) {
      spdlog::info("agones: shutdown sent (attempt {})", attempt);
      return s;
    }
    if (left_ms() <= options_.retry_ms) return s;
    std::this_thread::sleep_for(std::chrono::milliseconds(options_.retry_ms));
  }
}

}  // namespace sv
