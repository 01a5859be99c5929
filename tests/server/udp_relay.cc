// UdpRelay: poll loop forwarding datagrams both ways, with a queue for held client datagrams.
#include "tests/server/udp_relay.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <vector>

#include "server/core/steady_clock.h"
#include "tests/server/test_client.h"

namespace svtest {

core::Status UdpRelay::Start(uint16_t listen_port, uint16_t server_port, std::unique_ptr<UdpRelay>* out) {
  const int client_fd = ::socket(AF_INET, SOCK_DGRAM, 0);
  const int server_fd = ::socket(AF_INET, SOCK_DGRAM, 0);
  const sockaddr_in listen = Loopback(listen_port);
  const sockaddr_in server = Loopback(server_port);
  if (client_fd < 0 || server_fd < 0 ||
      ::bind(client_fd, reinterpret_cast<const sockaddr*>(&listen), sizeof listen) != 0 ||
      ::connect(server_fd, reinterpret_cast<const sockaddr*>(&server), sizeof server) != 0) {
    if (client_fd >= 0) ::close(client_fd);
    if (server_fd >= 0) ::close(server_fd);
    return core::Status::IoError("relay: cannot bind 127.0.0.1:" + std::to_string(listen_port));
  }
  out->reset(new UdpRelay(client_fd, server_fd));
  return core::Status::OK();
}

uint16_t UdpRelay::listen_port() const {
  sockaddr_in a{};
  socklen_t len = sizeof a;
  if (::getsockname(client_fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0) return 0;
  return ntohs(a.sin_port);
}

UdpRelay::UdpRelay(int client_fd, int server_fd)
    : client_fd_(client_fd), server_fd_(server_fd), thread_([this] { Run(); }) {}

UdpRelay::~UdpRelay() {
  stop_.store(true);
  thread_.join();
  ::close(client_fd_);
  ::close(server_fd_);
}

void UdpRelay::HoldClientDatagrams(int hold_ms) {
  hold_until_ns_.store(static_cast<int64_t>(core::SteadyNs()) + int64_t{hold_ms} * 1'000'000);
}

bool UdpRelay::holding() const {
  return static_cast<int64_t>(core::SteadyNs()) < hold_until_ns_.load();
}

void UdpRelay::Run() {
  std::vector<std::vector<uint8_t>> held;
  std::vector<uint8_t> buf(2048);
  sockaddr_in client{};
  socklen_t client_len = 0;
  while (!stop_.load()) {
    pollfd fds[2] = {{client_fd_, POLLIN, 0}, {server_fd_, POLLIN, 0}};
    ::poll(fds, 2, 1);
    if (fds[0].revents & POLLIN) {
      sockaddr_in from{};
      socklen_t len = sizeof from;
      const ssize_t n = ::recvfrom(client_fd_, buf.data(), buf.size(), 0, reinterpret_cast<sockaddr*>(&from), &len);
      if (n > 0) {
        client = from;
        client_len = len;
        if (holding()) {
          held.emplace_back(buf.begin(), buf.begin() + n);
        } else {
          ::send(server_fd_, buf.data(), static_cast<size_t>(n), 0);
        }
      }
    }
    if (fds[1].revents & POLLIN) {
      const ssize_t n = ::recv(server_fd_, buf.data(), buf.size(), 0);
      if (n > 0 && client_len != 0) {
        ::sendto(client_fd_, buf.data(), static_cast<size_t>(n), 0, reinterpret_cast<const sockaddr*>(&client),
                 client_len);
      }
    }
    if (!held.empty() && !holding()) {
      for (const std::vector<uint8_t>& d : held) ::send(server_fd_, d.data(), d.size(), 0);
      released_after_hold_.fetch_add(held.size());
      held.clear();
    }
  }
}

}  // namespace svtest
