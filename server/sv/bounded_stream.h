// BoundedStream: a connected TCP socket as cpp-httplib's Stream, for one HTTP exchange whose
// every wait is bounded. Both of our HTTP endpoints serve through it: the /metrics server
// (MetricsHttp, each accepted connection) and the Agones SDK client (each call's socket).
//
// httplib 0.11 bounds each read and write on its own sockets (set_read_timeout), never a whole
// exchange, and reads a reply's status line and headers without a size limit. This stream adds
// both: no wait goes past the exchange's deadline, and reads end once `max_read_bytes` have been
// delivered to the library. A peer that drips, stalls or sends endless headers therefore costs
// at most the deadline and that many bytes of memory.
//
// Threading: one thread uses a stream. Another thread may shut the socket down (shutdown(2));
// a wait in progress then returns at once and the next read or write fails.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <limits>
#include <string>
#include <utility>

#include <httplib.h>

namespace sv {

class BoundedStream final : public httplib::Stream {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr size_t kUnlimited = std::numeric_limits<size_t>::max();

  // Serves `fd` (not owned: the caller closes it) until `deadline`. Each wait for the socket
  // ends after stall_ms or at the deadline, whichever comes first. Reads deliver at most
  // max_read_bytes in all; the read that would go past them fails (read_limit_reached()).
  // `already_read` (bytes the caller took from the socket before) is delivered first.
  BoundedStream(int fd, Clock::time_point deadline, int stall_ms,
                size_t max_read_bytes = kUnlimited, std::string already_read = {})
      : fd_(fd),
        deadline_(deadline),
        stall_ms_(stall_ms),
        max_read_bytes_(max_read_bytes),
        already_read_(std::move(already_read)) {}

  bool is_readable() const override;
  bool is_writable() const override;
  ssize_t read(char* ptr, size_t size) override;  // buffered: httplib reads lines a byte at a time
  ssize_t write(const char* ptr, size_t size) override;
  void get_remote_ip_and_port(std::string& ip, int& port) const override;
  void get_local_ip_and_port(std::string& ip, int& port) const override;
  socket_t socket() const override { return fd_; }

  // True once a read was refused for going past max_read_bytes.
  bool read_limit_reached() const { return read_limit_reached_; }

 private:
  // Waits for `events` (poll's) up to wait_ms, never past the deadline; false if they did not
  // come. A socket shut from another thread ends the wait at once (true: the recv or send that
  // follows fails).
  bool Wait(short events, int wait_ms) const;

  const int fd_;
  const Clock::time_point deadline_;
  const int stall_ms_;
  const size_t max_read_bytes_;
  std::string already_read_;
  size_t already_read_off_ = 0;
  size_t delivered_ = 0;
  bool read_limit_reached_ = false;
  char buf_[4096];
  size_t off_ = 0;
  size_t len_ = 0;
};

}  // namespace sv
