// sv::AgonesSdk in this process against whatever may listen on the SDK port and answer badly: a
// raw TCP listener that announces or streams gigabytes, or drips its reply a byte at a time.
// Every call must fail cleanly (no memory exhausted, an error that says why), and Stop() and
// Shutdown() must return. Label tsan: the calls' watchdog threads stop the client of another
// thread.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "server/core/status.h"
#include "server/sv/agones.h"
#include "tests/support/poll.h"

using testing_util::PollUntil;
using testing_util::ReturnsWithin;

namespace {

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


}  // namespace

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

// httplib reads a reply's status line and headers without a limit, before any callback: a
// listener sending endless header lines grew the server by about 390 MB within one 2 s call. The
// whole reply is now read up to kMaxReplyReadBytes, so the call fails at once, naming the limit;
// before, it ran to its deadline ("no complete reply within"). The sidecar sends 64 MiB of
// headers at most, then holds the connection.
TEST_CASE("agones: endless reply headers fail the call once the reply passes 16 KiB") {
  const std::string line = "X-Pad: " + std::string(1000, 'h') + "\r\n";
  RawSidecar sidecar([&](RawSidecar& self, int fd) {
    if (!self.Send(fd, "HTTP/1.1 200 OK\r\n")) return;
    std::string mib;
    while (mib.size() < (1u << 20)) mib += line;
    for (int i = 0; i < 64; ++i) {
      if (!self.Send(fd, mib)) return;
    }
    self.Hold(fd);
  });
  auto sdk = StartSdk(sidecar.port());
  REQUIRE(PollUntil([&] { return sidecar.requests("/ready") >= 2; }, 30000));
  const core::Status s = sdk->Shutdown();
  CHECK_FALSE(s.ok());
  CHECK_THAT(s.ToString(),
             Catch::Contains("agones /shutdown: reply longer than 16384 bytes in all (status line "
                             "and headers included), abandoned"));
  CHECK(sidecar.requests("/health") == 0);
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
