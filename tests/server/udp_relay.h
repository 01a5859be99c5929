// UdpRelay: a loopback UDP relay between one client and one server port, for tests that need a
// network in between: it forwards datagrams both ways, and on request holds the client's
// datagrams for a while and then releases them all at once (a delay spike, a queue that drains
// in a burst).
//
// Threading: Start and the destructor on the owning thread; HoldClientDatagrams and the counters
// from any thread. The relay's own thread does all socket work.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>

#include "server/core/status.h"

namespace svtest {

class UdpRelay {
 public:
  // Listens on 127.0.0.1:listen_port (0: a port the system picks, see listen_port()) and
  // forwards to 127.0.0.1:server_port; replies go back to the address the client last sent from.
  static core::Status Start(uint16_t listen_port, uint16_t server_port, std::unique_ptr<UdpRelay>* out);
  ~UdpRelay();  // stops and joins the relay's thread, closes the sockets
  UdpRelay(const UdpRelay&) = delete;
  UdpRelay& operator=(const UdpRelay&) = delete;

  // Holds every client-to-server datagram of the next hold_ms, then sends them all, in their
  // order, in one go. Server-to-client datagrams keep flowing.
  void HoldClientDatagrams(int hold_ms);
  bool holding() const;
  uint16_t listen_port() const;  // as bound
  // Datagrams that were held and then released in a burst, over the relay's life.
  uint64_t released_after_hold() const { return released_after_hold_.load(); }

 private:
  UdpRelay(int client_fd, int server_fd);
  void Run();

  const int client_fd_;  // bound to listen_port: talks to the client
  const int server_fd_;  // connected to server_port: talks to the server
  std::atomic<bool> stop_{false};
  std::atomic<int64_t> hold_until_ns_{0};  // steady clock; 0 = not holding
  std::atomic<uint64_t> released_after_hold_{0};
  std::thread thread_;
};

}  // namespace svtest
