// SocketBatchScope against real sockets and real ENet hosts on loopback: ENet's calls reach the
// batching functions, datagrams keep their order in and out of scopes, read-ahead carries over,
// oversize datagrams fail as libenet's own receive does, and fewer system calls carry them.
#include "server/protocol/enet_socket_batch.h"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "server/protocol/enet_drain.h"
#include "server/protocol/enet_pool.h"

namespace {

// Two raw ENet sockets on loopback: `a` sends to `b`.
struct RawPair {
  ENetSocket a = ENET_SOCKET_NULL, b = ENET_SOCKET_NULL;
  ENetAddress b_addr{};
  RawPair() {
    REQUIRE(proto::InitializeEnet().ok());
    a = enet_socket_create(ENET_SOCKET_TYPE_DATAGRAM);
    b = enet_socket_create(ENET_SOCKET_TYPE_DATAGRAM);
    REQUIRE((a != ENET_SOCKET_NULL && b != ENET_SOCKET_NULL));
    ENetAddress bind{};
    enet_address_set_host_ip(&bind, "127.0.0.1");
    REQUIRE(enet_socket_bind(b, &bind) == 0);
    REQUIRE(enet_socket_get_address(b, &b_addr) == 0);
    REQUIRE(enet_socket_set_option(b, ENET_SOCKOPT_NONBLOCK, 1) == 0);
  }
  ~RawPair() {
    enet_socket_destroy(a);
    enet_socket_destroy(b);
  }
  void Send(const std::string& text) {
    ENetBuffer buf{const_cast<char*>(text.data()), text.size()};
    REQUIRE(enet_socket_send(a, &b_addr, &buf, 1) == static_cast<int>(text.size()));
  }
  // The next datagram on b as text; "" if none waits; "<error>" if the receive failed.
  std::string Receive() {
    char data[ENET_PROTOCOL_MAXIMUM_MTU];
    ENetBuffer buf{data, sizeof data};
    ENetAddress from{};
    for (int spins = 0; spins < 1000; ++spins) {  // loopback delivery is quick but not instant
      const int r = enet_socket_receive(b, &from, &buf, 1);
      if (r < 0) return "<error>";
      if (r > 0) return std::string(data, static_cast<size_t>(r));
    }
    return "";
  }
};

TEST_CASE("ENet's socket calls reach the batching functions") {
  CHECK(proto::SocketBatchingActive());
}

TEST_CASE("sends queued in a scope leave at its end, in order, in fewer system calls") {
  RawPair p;
  const proto::SocketBatchCounters before = proto::ThisThreadSocketBatchCounters();
  {
    proto::SocketBatchScope batch;
    for (int i = 0; i < 150; ++i) p.Send("d" + std::to_string(i));
    // 150 > 2 * kBatch: two full batches have left, 22 datagrams wait for the scope's end.
  }
  p.Send("after");  // out of scope: straight to the kernel, behind the batch
  const proto::SocketBatchCounters after = proto::ThisThreadSocketBatchCounters();
  CHECK(after.datagrams_sent - before.datagrams_sent == 151);
  CHECK(after.send_calls - before.send_calls == 4);  // 64 + 64 + 22, then one plain send
  for (int i = 0; i < 150; ++i) REQUIRE(p.Receive() == "d" + std::to_string(i));
  CHECK(p.Receive() == "after");
}

TEST_CASE("datagrams read ahead in a scope are handed over in order, in or out of a scope") {
  RawPair p;
  for (int i = 0; i < 100; ++i) p.Send("r" + std::to_string(i));
  std::vector<std::string> got;
  {
    proto::SocketBatchScope batch;
    for (int i = 0; i < 10; ++i) got.push_back(p.Receive());  // reads ahead up to kBatch
  }
  while (got.size() < 100) {
    const std::string s = p.Receive();  // the rest of the read-ahead first, then the kernel's
    REQUIRE(!s.empty());
    got.push_back(s);
  }
  for (int i = 0; i < 100; ++i) CHECK(got[static_cast<size_t>(i)] == "r" + std::to_string(i));
  proto::SocketBatchScope batch;
  CHECK(p.Receive().empty());
}

TEST_CASE("an oversize datagram fails its receive, as libenet's own does, and the next one arrives") {
  RawPair p;
  std::vector<std::string> unbatched, batched;
  for (int round = 0; round < 2; ++round) {
    p.Send("before");
    p.Send(std::string(6000, 'x'));  // over ENet's 4096-byte buffer
    p.Send("after");
    std::vector<std::string>& got = round == 0 ? unbatched : batched;
    if (round == 0) {
      for (int i = 0; i < 3; ++i) got.push_back(p.Receive());
    } else {
      proto::SocketBatchScope batch;
      for (int i = 0; i < 3; ++i) got.push_back(p.Receive());
    }
  }
  CHECK(unbatched == std::vector<std::string>{"before", "<error>", "after"});
  CHECK(batched == unbatched);
}

TEST_CASE("ENet hosts talk through scopes: every packet arrives in order, fewer system calls") {
  REQUIRE(proto::InitializeEnet().ok());
  ENetAddress bind{};
  enet_address_set_host_ip(&bind, "127.0.0.1");
  ENetHost* server = enet_host_create(&bind, 4, 2, 0, 0);
  ENetHost* client = enet_host_create(nullptr, 1, 2, 0, 0);
  REQUIRE((server != nullptr && client != nullptr));
  ENetAddress server_addr{};
  REQUIRE(enet_socket_get_address(server->socket, &server_addr) == 0);
  ENetPeer* peer = enet_host_connect(client, &server_addr, 2, 0);
  REQUIRE(peer != nullptr);
  bool connected = false;
  for (int i = 0; i < 400 && !connected; ++i) {
    proto::SocketBatchScope batch;
    ENetEvent ev;
    if (enet_host_service(server, &ev, 1) > 0 && ev.type == ENET_EVENT_TYPE_CONNECT) connected = true;
    while (enet_host_service(client, &ev, 0) > 0) {
    }
  }
  REQUIRE(connected);
  const proto::SocketBatchCounters before = proto::ThisThreadSocketBatchCounters();
  constexpr int kPackets = 500;
  {
    proto::SocketBatchScope batch;
    for (int i = 0; i < kPackets; ++i) {
      const std::string text = "p" + std::to_string(i);
      ENetPacket* packet = enet_packet_create(text.data(), text.size(), ENET_PACKET_FLAG_RELIABLE);
      REQUIRE(enet_peer_send(peer, 0, packet) == 0);
      if (i % 5 == 4) enet_host_flush(client);  // about one datagram per flush
    }
  }
  std::vector<std::string> got;
  for (int round = 0; round < 400 && got.size() < kPackets; ++round) {
    proto::SocketBatchScope batch;
    proto::DrainHost(server, [&](ENetEvent& ev) {
      if (ev.type == ENET_EVENT_TYPE_RECEIVE) {
        got.emplace_back(reinterpret_cast<const char*>(ev.packet->data), ev.packet->dataLength);
        enet_packet_destroy(ev.packet);
      }
    }, 1);
    ENetEvent ev;
    while (enet_host_service(client, &ev, 0) > 0) {  // acknowledgements
    }
  }
  REQUIRE(got.size() == kPackets);
  for (int i = 0; i < kPackets; ++i) CHECK(got[static_cast<size_t>(i)] == "p" + std::to_string(i));
  const proto::SocketBatchCounters after = proto::ThisThreadSocketBatchCounters();
  const uint64_t datagrams = (after.datagrams_sent - before.datagrams_sent) +
                             (after.datagrams_received - before.datagrams_received);
  const uint64_t calls = (after.send_calls - before.send_calls) +
                         (after.receive_calls - before.receive_calls);
  INFO("datagrams " << datagrams << ", system calls " << calls);
  CHECK(calls * 4 < datagrams);
  enet_host_destroy(client);
  enet_host_destroy(server);
}

}  // namespace
