// aftershock-bench-udp: what one thread pays the kernel to send R datagrams per second and
// receive R replies per second over loopback, with plain UDP sockets and nothing else: the
// floor under any load generator that sends one datagram per command and gets one per reply,
// as aftershock-bots does through ENet.
//
// The measured thread ("client") wakes every millisecond, sends the datagrams due to an echo
// thread's socket and reads every reply queued on its own socket; the echo thread answers each
// datagram with one reply of --reply-bytes. Reported: the client thread's CPU (its own clock,
// CLOCK_THREAD_CPUTIME_ID) as a share of one core and per 1,000 requests, for one datagram per
// system call and, with --batch N, sendmmsg/recvmmsg of up to N datagrams per call.
// On loopback the sender's system call also runs the receiving side's network stack, as it
// would for the bots.
//
// Example: aftershock-bench-udp --rate 60000 --seconds 10 --request-bytes 80 --reply-bytes 400
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include <cxxopts.hpp>

#include "server/core/cpu_clock.h"

namespace {

constexpr int kMaxBatch = 1024;

struct Options {
  int rate = 60000;
  double seconds = 10;
  int request_bytes = 80;
  int reply_bytes = 400;
  int batch = 1;  // datagrams per system call at most; 1 = sendto/recvfrom
};

int OpenSocket(sockaddr_in* bound) {
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
  if (fd < 0) return -1;
  const int buf = 8 << 20;
  ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof buf);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof buf);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  socklen_t len = sizeof a;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    ::close(fd);
    return -1;
  }
  *bound = a;
  return fd;
}

// Sends `count` datagrams of `bytes` to `to`; returns how many the kernel took.
int SendMany(int fd, const sockaddr_in& to, int count, int bytes, int batch) {
  static thread_local std::vector<char> payload(65536, 'x');
  int sent = 0;
  if (batch <= 1) {
    for (int i = 0; i < count; ++i) {
      if (::sendto(fd, payload.data(), static_cast<size_t>(bytes), 0,
                   reinterpret_cast<const sockaddr*>(&to), sizeof to) >= 0) {
        ++sent;
      }
    }
    return sent;
  }
  static thread_local std::vector<mmsghdr> msgs(kMaxBatch);
  static thread_local std::vector<iovec> iov(kMaxBatch);
  while (sent < count) {
    const int n = std::min(batch, count - sent);
    for (int i = 0; i < n; ++i) {
      iov[i] = {payload.data(), static_cast<size_t>(bytes)};
      msgs[i] = {};
      msgs[i].msg_hdr.msg_name = const_cast<sockaddr_in*>(&to);
      msgs[i].msg_hdr.msg_namelen = sizeof to;
      msgs[i].msg_hdr.msg_iov = &iov[i];
      msgs[i].msg_hdr.msg_iovlen = 1;
    }
    const int r = ::sendmmsg(fd, msgs.data(), static_cast<unsigned>(n), 0);
    if (r <= 0) break;
    sent += r;
  }
  return sent;
}

// Reads every queued datagram; returns how many, and the senders' addresses in *from (echo).
int ReceiveAll(int fd, int batch, std::vector<sockaddr_in>* from) {
  static thread_local std::vector<char> buf(static_cast<size_t>(kMaxBatch) * 2048);
  static thread_local std::vector<mmsghdr> msgs(kMaxBatch);
  static thread_local std::vector<iovec> iov(kMaxBatch);
  static thread_local std::vector<sockaddr_in> addrs(kMaxBatch);
  int total = 0;
  for (;;) {
    if (batch <= 1) {
      sockaddr_in a{};
      socklen_t len = sizeof a;
      const ssize_t r = ::recvfrom(fd, buf.data(), 2048, 0, reinterpret_cast<sockaddr*>(&a), &len);
      if (r < 0) return total;
      ++total;
      if (from != nullptr) from->push_back(a);
      continue;
    }
    for (int i = 0; i < batch; ++i) {
      iov[i] = {buf.data() + static_cast<size_t>(i) * 2048, 2048};
      msgs[i] = {};
      msgs[i].msg_hdr.msg_name = &addrs[i];
      msgs[i].msg_hdr.msg_namelen = sizeof(sockaddr_in);
      msgs[i].msg_hdr.msg_iov = &iov[i];
      msgs[i].msg_hdr.msg_iovlen = 1;
    }
    const int r = ::recvmmsg(fd, msgs.data(), static_cast<unsigned>(batch), MSG_DONTWAIT, nullptr);
    if (r <= 0) return total;
    total += r;
    if (from != nullptr) from->insert(from->end(), addrs.begin(), addrs.begin() + r);
    if (r < batch) return total;
  }
}

int Run(const Options& o) {
  sockaddr_in client_addr{}, echo_addr{};
  const int client_fd = OpenSocket(&client_addr);
  const int echo_fd = OpenSocket(&echo_addr);
  if (client_fd < 0 || echo_fd < 0) {
    std::fprintf(stderr, "aftershock-bench-udp: cannot open loopback sockets: %s\n", std::strerror(errno));
    return 1;
  }
  std::atomic<bool> stop{false};
  std::thread echo([&] {
    std::vector<sockaddr_in> from;
    while (!stop.load(std::memory_order_relaxed)) {
      from.clear();
      ReceiveAll(echo_fd, o.batch, &from);
      for (const sockaddr_in& a : from) SendMany(echo_fd, a, 1, o.reply_bytes, 1);
      std::this_thread::sleep_for(std::chrono::microseconds(500));
    }
  });

  const auto start = std::chrono::steady_clock::now();
  const double cpu0 = core::ThreadCpuSeconds();
  uint64_t sent = 0, received = 0;
  for (int64_t ms = 1;; ++ms) {
    std::this_thread::sleep_until(start + std::chrono::milliseconds(ms));
    if (static_cast<double>(ms) >= o.seconds * 1000) break;
    received += static_cast<uint64_t>(ReceiveAll(client_fd, o.batch, nullptr));
    const uint64_t due = static_cast<uint64_t>(static_cast<double>(o.rate) * static_cast<double>(ms) / 1000.0);
    if (due > sent) {
      sent += static_cast<uint64_t>(SendMany(client_fd, echo_addr, static_cast<int>(due - sent),
                                             o.request_bytes, o.batch));
    }
  }
  const double cpu = core::ThreadCpuSeconds() - cpu0;
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  stop = true;
  echo.join();
  ::close(client_fd);
  ::close(echo_fd);
  std::printf(
      "{\"rate\": %d, \"batch\": %d, \"request_bytes\": %d, \"reply_bytes\": %d, \"seconds\": %.2f,\n"
      " \"sent\": %llu, \"received\": %llu, \"client_cpu_s\": %.3f, \"client_cpu_pct_of_core\": %.1f,\n"
      " \"cpu_s_per_1000_requests\": %.4f, \"us_per_request_and_reply\": %.2f}\n",
      o.rate, o.batch, o.request_bytes, o.reply_bytes, wall,
      static_cast<unsigned long long>(sent), static_cast<unsigned long long>(received), cpu,
      100.0 * cpu / wall, sent > 0 ? 1000.0 * cpu / static_cast<double>(sent) : 0.0,
      sent > 0 ? 1e6 * cpu / static_cast<double>(sent) : 0.0);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  cxxopts::Options parser("aftershock-bench-udp",
                          "Kernel CPU floor of one thread sending and receiving UDP datagrams on loopback");
  parser.add_options()
    ("rate", "Requests per second sent (and replies expected)", cxxopts::value<int>()->default_value("60000"))
    ("seconds", "Measured run length", cxxopts::value<double>()->default_value("10"))
    ("request-bytes", "Request datagram size", cxxopts::value<int>()->default_value("80"))
    ("reply-bytes", "Reply datagram size", cxxopts::value<int>()->default_value("400"))
    ("batch", "Datagrams per system call at most (1 = sendto/recvfrom; >1 = sendmmsg/recvmmsg)",
     cxxopts::value<int>()->default_value("1"))
    ("h,help", "Print help");
  Options o;
  try {
    const auto r = parser.parse(argc, argv);
    if (r.count("help")) {
      std::printf("%s\n", parser.help().c_str());
      return 0;
    }
    o.rate = r["rate"].as<int>();
    o.seconds = r["seconds"].as<double>();
    o.request_bytes = r["request-bytes"].as<int>();
    o.reply_bytes = r["reply-bytes"].as<int>();
    o.batch = r["batch"].as<int>();
  } catch (const cxxopts::exceptions::exception& e) {
    std::fprintf(stderr, "aftershock-bench-udp: %s\n%s\n", e.what(), parser.help().c_str());
    return 2;
  }
  if (o.rate < 1 || o.rate > 2'000'000 || !(o.seconds > 0) || o.request_bytes < 1 ||
      o.request_bytes > 1400 || o.reply_bytes < 1 || o.reply_bytes > 1400 || o.batch < 1 ||
      o.batch > kMaxBatch) {
    std::fprintf(stderr,
                 "aftershock-bench-udp: need 1 <= --rate <= 2000000, --seconds > 0, 1 <= sizes <= 1400, "
                 "1 <= --batch <= %d\n%s\n", kMaxBatch, parser.help().c_str());
    return 2;
  }
  return Run(o);
}
