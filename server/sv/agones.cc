// AgonesSdk: Ready, Health and Shutdown over the Agones SDK sidecar's REST gateway.
#include "server/sv/agones.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <thread>

#include <httplib.h>
#include <spdlog/spdlog.h>

#include "server/core/thread_name.h"

namespace sv {

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

core::Status AgonesSdk::Post(const std::string& path, int read_timeout_ms) {
  httplib::Client client(options_.host, options_.port);
  client.set_connection_timeout(1);
  client.set_read_timeout(read_timeout_ms / 1000, (read_timeout_ms % 1000) * 1000);
  // The gateway maps each SDK call to POST with an empty JSON message as the body. The request is
  // built by hand because 0.11's Client::Post has no overload taking a content receiver, and
  // without one the library appends the whole reply to Response::body: a listener announcing
  // 20 GiB and streaming it ended the server with std::bad_alloc.
  httplib::Request req;
  req.method = "POST";
  req.path = path;
  req.body = "{}";
  req.set_header("Content-Type", "application/json");
  uint64_t announced = 0;  // a Content-Length over the limit: refused before reading any of it
  req.response_handler = [&announced](const httplib::Response& r) {
    if (r.has_header("Content-Length")) {
      announced = r.get_header_value<uint64_t>("Content-Length");
      if (announced > kMaxReplyBytes) return false;
    }
    return true;
  };
  size_t received = 0;  // the body is kept nowhere: only the status matters
  req.content_receiver = [&received](const char*, size_t n, uint64_t, uint64_t) {
    received += n;
    return received <= kMaxReplyBytes;
  };
  const auto res = client.send(req);
  if (announced > kMaxReplyBytes) {
    return core::Status::IoError("agones " + path + ": reply of " + std::to_string(announced) +
                                 " bytes refused unread (at most " + std::to_string(kMaxReplyBytes) +
                                 ")");
  }
  if (received > kMaxReplyBytes) {
    return core::Status::IoError("agones " + path + ": reply longer than " +
                                 std::to_string(kMaxReplyBytes) + " bytes, abandoned");
  }
  if (!res) {
    return core::Status::IoError("agones " + path + ": " + httplib::to_string(res.error()));
  }
  if (res->status != 200) {
    return core::Status::IoError("agones " + path + ": HTTP " + std::to_string(res->status));
  }
  return core::Status::OK();
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
    const core::Status s = Post("/ready");
    if (s.ok()) {
      spdlog::info("agones: ready (attempt {})", attempt);
      break;
    }
    if (attempt == 1 || attempt % 20 == 0) spdlog::warn("{}; retrying", s.ToString());
    if (WaitStop(options_.retry_ms)) return;
  }
  while (!WaitStop(options_.health_interval_ms)) {
    const core::Status s = Post("/health");
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
    s = Post("/shutdown", std::clamp(left_ms(), 100, 2000));
    if (s.ok()) {
      spdlog::info("agones: shutdown sent (attempt {})", attempt);
      return s;
    }
    if (left_ms() <= options_.retry_ms) return s;
    std::this_thread::sleep_for(std::chrono::milliseconds(options_.retry_ms));
  }
}

}  // namespace sv
