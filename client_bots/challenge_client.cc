// ChallengeClient: non-blocking UDP socket, getchallenge requests and reply parsing.
#include "client_bots/challenge_client.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <vector>

namespace bots {

namespace {

core::Status OpenConnected(uint32_t server_ip, uint16_t port, int* fd_out) {
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return core::Status::IoError(std::string("challenge socket: ") + std::strerror(errno));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = server_ip;
  // connect() filters replies to the server's address and lets us use send/recv.
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    const int e = errno;
    ::close(fd);
    return core::Status::IoError(std::string("challenge socket connect: ") + std::strerror(e));
  }
  *fd_out = fd;
  return core::Status::OK();
}

void SendRequest(int fd, proto::ConnectionlessRequest request) {
  const std::vector<uint8_t> bytes = proto::EncodeRequest(request);
  // A full buffer or a refused port (the server is down) just means "ask again later".
  (void)::send(fd, bytes.data(), bytes.size(), 0);
}

}  // namespace

ChallengeClient::~ChallengeClient() {
  if (fd_ >= 0) ::close(fd_);
}

core::Status ChallengeClient::Open(uint32_t server_ip, uint16_t port) {
  return OpenConnected(server_ip, port, &fd_);
}

bool ChallengeClient::Get(uint64_t now_ms, uint32_t* challenge) {
  if (have_ && now_ms < got_ms_ + kFreshMs) {
    *challenge = challenge_;
    return true;
  }
  have_ = false;
  if (!asked_ || now_ms >= asked_ms_ + kResendMs) {
    SendRequest(fd_, proto::ConnectionlessRequest::kGetChallenge);
    asked_ = true;
    asked_ms_ = now_ms;
  }
  return false;
}

void ChallengeClient::Poll(uint64_t now_ms) {
  uint8_t buf[proto::kMaxConnectionlessBytes];
  for (;;) {
    const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    if (n < 0) return;  // EAGAIN, or ECONNREFUSED while the server is down
    uint32_t c = 0;
    if (proto::ParseChallengeReply({buf, static_cast<size_t>(n)}, &c).ok()) {
      challenge_ = c;
      have_ = true;
      got_ms_ = now_ms;
    }
  }
}

core::Status QueryStatus(uint32_t server_ip, uint16_t port, int timeout_ms, proto::ServerStatus* out) {
  int fd = -1;
  core::Status s = OpenConnected(server_ip, port, &fd);
  if (!s.ok()) return s;
  const auto start = std::chrono::steady_clock::now();
  uint8_t buf[proto::kMaxConnectionlessBytes];
  auto elapsed_ms = [&] {
    return static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                std::chrono::steady_clock::now() - start)
                                .count());
  };
  while (elapsed_ms() < timeout_ms) {
    SendRequest(fd, proto::ConnectionlessRequest::kStatus);
    const int resend_at = std::min(elapsed_ms() + 200, timeout_ms);
    for (int left = resend_at - elapsed_ms(); left > 0; left = resend_at - elapsed_ms()) {
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, left) <= 0) break;
      const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n > 0 && proto::ParseStatusReply({buf, static_cast<size_t>(n)}, out).ok()) {
        ::close(fd);
        return core::Status::OK();
      }
      if (n < 0) ::poll(nullptr, 0, left);  // refused: the server is not up; wait out the slot
    }
  }
  ::close(fd);
  return core::Status::NotFound("no status reply from the server within " + std::to_string(timeout_ms) + " ms");
}

}  // namespace bots
