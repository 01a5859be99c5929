// BoundedStream: one HTTP exchange over a socket, every wait and the bytes read bounded.
#include "server/sv/bounded_stream.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>

namespace sv {

namespace {

using NameFn = int (*)(int, sockaddr*, socklen_t*);

void Address(int fd, NameFn name, std::string& ip, int& port) {
  sockaddr_storage a{};
  socklen_t len = sizeof a;
  char text[INET6_ADDRSTRLEN] = "";
  if (name(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) return;
  if (a.ss_family == AF_INET) {
    const auto* v4 = reinterpret_cast<const sockaddr_in*>(&a);
    ::inet_ntop(AF_INET, &v4->sin_addr, text, sizeof text);
    port = ntohs(v4->sin_port);
  } else if (a.ss_family == AF_INET6) {
    const auto* v6 = reinterpret_cast<const sockaddr_in6*>(&a);
    ::inet_ntop(AF_INET6, &v6->sin6_addr, text, sizeof text);
    port = ntohs(v6->sin6_port);
  }
  ip = text;
}

}  // namespace

bool BoundedStream::is_readable() const {
  return already_read_off_ < already_read_.size() || off_ < len_ || Wait(POLLIN, stall_ms_);
}

bool BoundedStream::is_writable() const { return Wait(POLLOUT, stall_ms_); }

ssize_t BoundedStream::read(char* ptr, size_t size) {
  if (delivered_ >= max_read_bytes_) {
    read_limit_reached_ = true;
    return -1;
  }
  if (already_read_off_ < already_read_.size()) {
    const size_t n = std::min({size, already_read_.size() - already_read_off_,
                               max_read_bytes_ - delivered_});
    std::copy_n(already_read_.data() + already_read_off_, n, ptr);
    already_read_off_ += n;
    delivered_ += n;
    return static_cast<ssize_t>(n);
  }
  if (off_ == len_) {
    if (!Wait(POLLIN, stall_ms_)) return -1;
    const ssize_t n = ::recv(fd_, buf_, sizeof buf_, 0);
    if (n <= 0) return n;
    off_ = 0;
    len_ = static_cast<size_t>(n);
  }
  const size_t n = std::min({size, len_ - off_, max_read_bytes_ - delivered_});
  std::copy_n(buf_ + off_, n, ptr);
  off_ += n;
  delivered_ += n;
  return static_cast<ssize_t>(n);
}

ssize_t BoundedStream::write(const char* ptr, size_t size) {
  // Never a blocking send: the library sets a 5 s send timeout on the sockets it accepts, and a
  // blocking send of more than the socket's free space waited that long whatever the deadline.
  // A partial count is fine (the library writes the rest in further calls, each waiting here).
  for (;;) {
    if (!is_writable()) return -1;
    const ssize_t n = ::send(fd_, ptr, size, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) return n;
  }
}

void BoundedStream::get_remote_ip_and_port(std::string& ip, int& port) const {
  Address(fd_, ::getpeername, ip, port);
}

void BoundedStream::get_local_ip_and_port(std::string& ip, int& port) const {
  Address(fd_, ::getsockname, ip, port);
}

bool BoundedStream::Wait(short events, int wait_ms) const {
  for (;;) {
    // Rounded up, so that a wait that ends for want of time ends at or after the deadline.
    const int64_t left_ms =
        std::chrono::ceil<std::chrono::milliseconds>(deadline_ - Clock::now()).count();
    const int ms = static_cast<int>(std::min<int64_t>(wait_ms, left_ms));
    if (ms <= 0) return false;
    pollfd p{fd_, events, 0};
    const int r = ::poll(&p, 1, ms);
    if (r < 0 && errno == EINTR) continue;
    return r > 0;  // with POLLHUP or POLLERR the recv or send that follows fails
  }
}

}  // namespace sv
