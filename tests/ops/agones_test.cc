// The server's Agones SDK calls against a local HTTP endpoint standing in for the SDK sidecar (a
// real cpp-httplib server in this test that records every call): the real server binary with
// --agones must POST /ready once it has recovered and its ports answer (retrying while the
// "sidecar" fails), /health on its interval, and /shutdown after a clean --duration end, in
// that order and nothing after; a SIGTERM ends it without /shutdown. No Agones sidecar runs
// here (deploy/README.md says what was and was not run). Then sv::AgonesSdk in this process
// against a raw TCP listener that answers badly (gigabytes, one byte at a time): every call must
// fail cleanly, and Stop/Shutdown return.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <httplib.h>

#include "server/core/steady_clock.h"
#include "server/sv/agones.h"
#include "tests/server/test_client.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/server_ports.h"
#include "tests/support/subprocess.h"

namespace {

using testing_util::Subprocess;

const std::string kBin = AS_BIN_DIR;

struct Call {
  std::string path;
  uint64_t ms = 0;          // steady clock
  bool game_port_up = false;  // the lobby answered getchallenge when the call arrived
  std::string body;
};

// The stand-in sidecar: records calls; answers 503 to the first `fail_ready` /ready calls, and
// answers /shutdown only after `stall_shutdown_ms` (a sidecar that accepts and does not answer).
// The game server binds ports the system picks and names them in `stats_path` before it starts
// the SDK, so a /ready call finds its lobby port there.
class FakeSidecar {
 public:
  FakeSidecar(const std::string& stats_path, int fail_ready, int stall_shutdown_ms = 0)
      : stats_path_(stats_path), fail_ready_(fail_ready) {
    for (const char* path : {"/ready", "/health", "/shutdown"}) {
      http_.Post(path, [this, path, stall_shutdown_ms](const httplib::Request& req, httplib::Response& res) {
        Call c{path, core::SteadyMs(), false, req.body};
        if (c.path == "/ready") {
          uint32_t challenge = 0;
          svtest::ServerPorts ports;
          c.game_port_up = svtest::WaitForServerPorts(stats_path_, 0, &ports) &&
                           svtest::GetChallenge(ports.lobby, &challenge).ok();
        }
        {
          std::lock_guard<std::mutex> lock(mu_);
          calls_.push_back(c);
        }
        if (c.path == "/shutdown" && stall_shutdown_ms > 0) {
          std::this_thread::sleep_for(std::chrono::milliseconds(stall_shutdown_ms));
        }
        std::lock_guard<std::mutex> lock(mu_);
        if (c.path == "/ready" && fail_ready_ > 0) {
          --fail_ready_;
          res.status = 503;
          return;
        }
        res.set_content("{}", "application/json");
      });
    }
    port_ = static_cast<uint16_t>(http_.bind_to_any_port("127.0.0.1"));
    thread_ = std::thread([this] { http_.listen_after_bind(); });
    while (!http_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~FakeSidecar() {
    http_.stop();
    thread_.join();
  }
  uint16_t port() const { return port_; }
  std::vector<Call> calls() {
    std::lock_guard<std::mutex> lock(mu_);
    return calls_;
  }

 private:
  const std::string stats_path_;
  httplib::Server http_;
  std::thread thread_;
  uint16_t port_ = 0;
  std::mutex mu_;
  std::vector<Call> calls_;
  int fail_ready_;
};

// The server on ports the system picks, naming them in `stats_path` (removed first: an old file
// names an old server's ports).
std::unique_ptr<Subprocess> StartServer(const std::string& stats_path, uint16_t sdk_port, const std::string& data,
                                        const std::vector<std::string>& extra) {
  // The child inherits the environment: the variable Agones sets in a game server's pod.
  setenv("AGONES_SDK_HTTP_PORT", std::to_string(sdk_port).c_str(), 1);
  std::remove(stats_path.c_str());
  std::vector<std::string> argv = {kBin + "/aftershock-server", "--port", "0", "--stats-out", stats_path,
                                   "--bind", "127.0.0.1", "--threads", "2", "--data-dir", data,
                                   "--log-level", "warn", "--agones", "--agones-health-ms", "200"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  auto p = std::make_unique<Subprocess>(argv, data + ".out", data + ".err");
  unsetenv("AGONES_SDK_HTTP_PORT");
  return p;
}

// A sidecar that misbehaves: a TCP listener on 127.0.0.1 (a port the system picks) that reads each
// request's head and body, counts it by path, and answers with `reply(fd)` on a thread of its own.
// A reply runs until it is done, the peer hangs up, or the sidecar is destroyed (Quit()).
class RawSidecar {
 public:
  using Reply = std::function<void(RawSidecar& self, int fd)>;

  explicit RawSidecar(Reply reply) : reply_(std::move(reply)) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    REQUIRE(::listen(listen_fd_, 16) == 0);
    socklen_t len = sizeof a;
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    accept_thread_ = std::thread([this] { AcceptLoop(); });
  }
  ~RawSidecar() {
    Quit();
    accept_thread_.join();
    for (std::thread& t : conn_threads_) t.join();
    ::close(listen_fd_);
  }
  // Ends every reply in progress (their connections are closed) and accepts no more.
  void Quit() { quit_.store(true); }
  bool quitting() const { return quit_.load(); }
  uint16_t port() const { return port_; }
  int requests(const std::string& path) {
    std::lock_guard<std::mutex> lock(mu_);
    int n = 0;
    for (const std::string& p : paths_) n += p == path;
    return n;
  }
  int drips() const { return drips_.load(); }

  // Sends all of `data`; false once the peer is gone or the sidecar quits.
  bool Send(int fd, const std::string& data) {
    for (size_t off = 0; off < data.size();) {
      if (quitting()) return false;
      pollfd p{fd, POLLOUT, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      const ssize_t n = ::send(fd, data.data() + off, data.size() - off, MSG_NOSIGNAL);
      if (n <= 0) return false;
      off += static_cast<size_t>(n);
    }
    return true;
  }
  // Sends `data` one byte every 100 ms (the audit's sidecar dripped one every 500 ms), repeating
  // it, until the peer is gone or the sidecar quits.
  void Drip(int fd, const std::string& data) {
    for (size_t i = 0; Send(fd, data.substr(i % data.size(), 1)); ++i) {
      drips_.fetch_add(1);
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  // Holds the connection open, sending nothing, until the peer hangs up or the sidecar quits.
  void Hold(int fd) {
    char buf[4096];
    while (!quitting()) {
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 50) > 0 && ::recv(fd, buf, sizeof buf, 0) <= 0) return;
    }
  }

 private:
  void AcceptLoop() {
    while (!quitting()) {
      pollfd p{listen_fd_, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      const int fd = ::accept(listen_fd_, nullptr, nullptr);
      if (fd < 0) continue;
      conn_threads_.emplace_back([this, fd] {
        if (ReadRequest(fd)) reply_(*this, fd);
        ::close(fd);
      });
    }
  }
  // Reads the request's head and its Content-Length body; records the path.
  bool ReadRequest(int fd) {
    std::string in;
    char buf[4096];
    size_t head_end = std::string::npos;
    while (head_end == std::string::npos || in.size() < head_end + 4 + BodyLength(in, head_end)) {
      if (quitting()) return false;
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n <= 0) return false;
      in.append(buf, static_cast<size_t>(n));
      head_end = in.find("\r\n\r\n");
    }
    const size_t sp = in.find(' ');
    std::lock_guard<std::mutex> lock(mu_);
    paths_.push_back(in.substr(sp + 1, in.find(' ', sp + 1) - sp - 1));
    return true;
  }
  static size_t BodyLength(const std::string& in, size_t head_end) {
    const size_t at = in.find("Content-Length: ");
    return at < head_end ? std::stoul(in.substr(at + 16)) : 0;
  }

  Reply reply_;
  int listen_fd_ = -1;
  uint16_t port_ = 0;
  std::atomic<bool> quit_{false};
  std::atomic<int> drips_{0};
  std::thread accept_thread_;
  std::vector<std::thread> conn_threads_;  // the accept thread's until it is joined
  std::mutex mu_;
  std::vector<std::string> paths_;
};

// The SDK in this process, pinging a sidecar on `port` every 200 ms, retrying every 100 ms.
std::unique_ptr<sv::AgonesSdk> StartSdk(uint16_t port) {
  sv::AgonesOptions o;
  o.port = port;
  o.health_interval_ms = 200;
  o.retry_ms = 100;
  return sv::AgonesSdk::Start(o);
}

// Polls `done` every 10 ms until it holds or `deadline_ms` pass (a deadline for something
// observable, not a timing assumption); returns what it last saw.
bool PollUntil(const std::function<bool()>& done, int deadline_ms) {
  const uint64_t deadline = core::SteadyMs() + static_cast<uint64_t>(deadline_ms);
  while (!done() && core::SteadyMs() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return done();
}

// Runs `call` on a thread of its own and waits up to `deadline_ms` for it to return. If it has not
// returned by then, `unblock` ends whatever holds it (so the test ends, failing, rather than
// hangs) and the thread is joined. True if `call` returned in time.
bool ReturnsWithin(const std::function<void()>& call, int deadline_ms, const std::function<void()>& unblock) {
  std::atomic<bool> returned{false};
  std::thread t([&] {
    call();
    returned.store(true);
  });
  const bool in_time = PollUntil([&] { return returned.load(); }, deadline_ms);
  if (!in_time) unblock();
  t.join();
  return in_time;
}

}  // namespace

TEST_CASE("agones: Ready after recovery with the ports open, Health on its interval, Shutdown at a clean end") {
  const testing_util::ScratchDir scratch("aftershock_agones_test");  // goes after the processes
  const std::string data = scratch.Path("data");
  const std::string stats = scratch.Path("stats.json");
  // A first life leaves state behind, so the run below starts with a recovery.
  {
    FakeSidecar sidecar(stats, 0);
    auto first = StartServer(stats, sidecar.port(), data, {"--duration", "1"});
    REQUIRE(first->Wait(60) == 0);
  }
  FakeSidecar sidecar(stats, 2);  // the sidecar is not ready at first: the server must retry
  const uint64_t started = core::SteadyMs();
  auto server = StartServer(stats, sidecar.port(), data, {"--duration", "3"});
  REQUIRE(server->Wait(60) == 0);
  const uint64_t ended = core::SteadyMs();
  const std::vector<Call> calls = sidecar.calls();
  REQUIRE(calls.size() >= 5);
  // Sequence: /ready (three times: two refused), then only /health, then /shutdown last.
  for (int i = 0; i < 3; ++i) {
    INFO("call " << i);
    CHECK(calls[i].path == "/ready");
    CHECK(calls[i].game_port_up);  // recovered and listening before Ready
    CHECK(calls[i].body == "{}");
  }
  CHECK(calls[1].ms - calls[0].ms >= 400);  // retried after the 500 ms retry delay, not spun
  size_t health = 0;
  for (size_t i = 3; i + 1 < calls.size(); ++i) {
    INFO("call " << i << " " << calls[i].path);
    CHECK(calls[i].path == "/health");
    if (i > 3) CHECK(calls[i].ms - calls[i - 1].ms >= 150);  // on the 200 ms interval
    ++health;
  }
  CHECK(calls.back().path == "/shutdown");
  // About 3 s of health pings every 200 ms (the first starts after the third Ready, ~1 s in).
  CHECK(health >= 5);
  CHECK(health <= 20);
  // Shutdown came after the --duration end, just before the process exited.
  CHECK(calls.back().ms >= started + 3000);
  CHECK(calls.back().ms <= ended);
}

// A sidecar that accepted /shutdown and never answered held the exit for 5 tries of 2 s each (14 s
// with the health thread's last call): the tries now stop once AgonesSdk::kShutdownBudgetMs has
// passed, so the stalled sidecar sees two at most.
TEST_CASE("agones: a sidecar that never answers Shutdown is given up after a few seconds of tries") {
  const testing_util::ScratchDir scratch("aftershock_agones_stall");  // goes after the processes
  const std::string data = scratch.Path("data");
  const std::string stats = scratch.Path("stats.json");
  FakeSidecar sidecar(stats, 0, /*stall_shutdown_ms=*/4000);
  auto server = StartServer(stats, sidecar.port(), data, {"--duration", "1"});
  REQUIRE(server->Wait(60) == 0);
  int shutdowns = 0;
  for (const Call& c : sidecar.calls()) shutdowns += c.path == "/shutdown";
  CHECK(shutdowns >= 1);
  CHECK(shutdowns <= 2);
  CHECK_THAT(testing_util::ReadFile(data + ".err"), Catch::Contains("agones: shutdown not delivered"));
}

TEST_CASE("agones: a SIGTERM ends the server without Shutdown (Agones is already stopping it)") {
  const testing_util::ScratchDir scratch("aftershock_agones_sigterm");  // goes after the processes
  const std::string data = scratch.Path("data");
  const std::string stats = scratch.Path("stats.json");
  FakeSidecar sidecar(stats, 0);
  auto server = StartServer(stats, sidecar.port(), data, {});
  const uint64_t deadline = core::SteadyMs() + 30000;
  auto count = [&](const std::string& path) {
    int n = 0;
    for (const Call& c : sidecar.calls()) n += c.path == path;
    return n;
  };
  while (count("/health") < 2 && core::SteadyMs() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  REQUIRE(count("/health") >= 2);
  server->Signal(SIGTERM);
  REQUIRE(server->Wait(30) == 0);
  CHECK(count("/ready") == 1);
  CHECK(count("/shutdown") == 0);
}

// A listener on the SDK port that answered with Content-Length 20 GiB and streamed bytes ended the
// server with std::bad_alloc: the whole reply was read into memory. A reply is now read up to
// kMaxReplyBytes: the call fails and the SDK carries on (Ready is retried). The sidecar here
// streams 64 MiB at most and then holds the connection, so without the limit the call fails on
// the read timeout with a different message instead of exhausting the test machine's memory.
TEST_CASE("agones: a reply longer than a few KiB fails the call instead of filling memory") {
  const std::string chunk(1 << 20, 'x');
  std::string header, frame_prefix, frame_suffix, expected;
  SECTION("announced by Content-Length") {
    header = "HTTP/1.1 200 OK\r\nContent-Length: 21474836480\r\n\r\n";
    expected = "agones /shutdown: reply of 21474836480 bytes refused unread (at most 4096)";
  }
  SECTION("chunked, no length announced") {
    header = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
    frame_prefix = "100000\r\n";
    frame_suffix = "\r\n";
    expected = "agones /shutdown: reply longer than 4096 bytes, abandoned";
  }
  RawSidecar sidecar([&](RawSidecar& self, int fd) {
    if (!self.Send(fd, header)) return;
    for (int mib = 0; mib < 64; ++mib) {
      if (!self.Send(fd, frame_prefix + chunk + frame_suffix)) return;
    }
    self.Hold(fd);
  });
  auto sdk = StartSdk(sidecar.port());
  // The first Ready failed and was retried: the process survived its reply.
  REQUIRE(PollUntil([&] { return sidecar.requests("/ready") >= 2; }, 30000));
  const core::Status s = sdk->Shutdown();
  CHECK_FALSE(s.ok());
  CHECK_THAT(s.ToString(), Catch::Contains(expected));
  CHECK(sidecar.requests("/health") == 0);  // Ready never succeeded
}

// A sidecar that dripped its reply's body one byte every 0.5 s held the call for good (httplib
// bounds each read, not a call), so Stop() joined the SDK thread forever and the server never
// acted on SIGTERM. Stop() now abandons the call in flight; it returns in about a second at most
// (the connect timeout), the deadline here is generous.
TEST_CASE("agones: Stop returns while the sidecar drips its reply") {
  RawSidecar sidecar([](RawSidecar& self, int fd) {
    if (self.Send(fd, "HTTP/1.1 200 OK\r\nContent-Length: 4000\r\n\r\n")) self.Drip(fd, "x");
  });
  auto sdk = StartSdk(sidecar.port());
  REQUIRE(PollUntil([&] { return sidecar.drips() >= 2; }, 30000));  // Ready is in flight, dripping
  CHECK(ReturnsWithin([&] { sdk->Stop(); }, 10000, [&] { sidecar.Quit(); }));
  CHECK(sidecar.requests("/health") == 0);
}

// The same for Shutdown, and a sidecar that drips the reply's headers (the call never reaches its
// content receiver): each try is cut off at its deadline, and Shutdown gives up once
// kShutdownBudgetMs have passed, saying why.
TEST_CASE("agones: Shutdown gives up on a sidecar that drips its reply headers") {
  RawSidecar sidecar([](RawSidecar& self, int fd) {
    if (self.Send(fd, "HTTP/1.1 200 OK\r\nX-Drip: ")) self.Drip(fd, "abc");
  });
  auto sdk = StartSdk(sidecar.port());
  REQUIRE(PollUntil([&] { return sidecar.drips() >= 2; }, 30000));
  core::Status s;
  CHECK(ReturnsWithin([&] { s = sdk->Shutdown(); }, 20000, [&] { sidecar.Quit(); }));
  CHECK(sidecar.requests("/shutdown") >= 1);
  CHECK_THAT(s.ToString(), Catch::Contains("agones /shutdown: no complete reply within"));
}
