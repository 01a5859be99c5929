// SocketBatchScope against real sockets and real ENet hosts on loopback: ENet's calls reach the
// batching functions, datagrams keep their order in and out of scopes, read-ahead carries over,
// oversize datagrams fail as libenet's own receive does, and fewer system calls carry them.
#include "server/protocol/enet_socket_batch.h"

#include <poll.h>
#include <time.h>

#include <catch2/catch.hpp>

#include <chrono>
#include <string>
#include <thread>
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

uint64_t MonotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(ts.tv_nsec);
}

// Until a datagram waits on `s` (it has arrived), without reading it.
void AwaitReadable(ENetSocket s) {
  pollfd fd{static_cast<int>(s), POLLIN, 0};
  REQUIRE(::poll(&fd, 1, 5000) == 1);
}

// The realtime-to-monotonic move of a stamp may be off by the clocks' drift over the datagram's
// wait: microseconds at most.
constexpr uint64_t kClockSlackNs = 100'000;

// Until the kernel stamps datagrams on arrival. SO_TIMESTAMPNS turns the kernel's stamping on
// for everyone, and it does so later, from a work queue; a datagram read before then carries the
// time it was read. Call with a stamped socket of the test open: it keeps stamping wanted.
void AwaitStampsLive() {
  RawPair probe;
  REQUIRE(proto::StampArrivals(probe.b).ok());
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  for (;;) {
    probe.Send(std::string("\x00\x09", 2) + "probe");  // peer id 9
    AwaitReadable(probe.b);
    const uint64_t ready = MonotonicNs();
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    REQUIRE(probe.Receive() == std::string("\x00\x09", 2) + "probe");
    if (proto::LastArrivalNs(probe.b, 9) <= ready + kClockSlackNs) return;  // the arrival's
    REQUIRE(std::chrono::steady_clock::now() < deadline);
  }
}

// An ENet server host on loopback and a client host, destroyed with the pair.
struct HostPair {
  ENetHost* server = nullptr;
  ENetHost* client = nullptr;
  ENetAddress server_addr{};
  explicit HostPair(size_t client_peers) {
    REQUIRE(proto::InitializeEnet().ok());
    ENetAddress bind{};
    enet_address_set_host_ip(&bind, "127.0.0.1");
    server = enet_host_create(&bind, 4, 2, 0, 0);
    client = enet_host_create(nullptr, client_peers, 2, 0, 0);
    REQUIRE((server != nullptr && client != nullptr));
    REQUIRE(enet_socket_get_address(server->socket, &server_addr) == 0);
  }
  ~HostPair() {
    enet_host_destroy(client);
    enet_host_destroy(server);
  }
  // Connects `count` client peers (into *mine) and services both hosts until every one is
  // connected; returns the server's peers for them, in the order the server saw them.
  std::vector<ENetPeer*> Connect(int count, std::vector<ENetPeer*>* mine) {
    for (int i = 0; i < count; ++i) {
      mine->push_back(enet_host_connect(client, &server_addr, 2, 0));
      REQUIRE(mine->back() != nullptr);
    }
    std::vector<ENetPeer*> theirs;
    const auto all_up = [&] {
      if (theirs.size() != mine->size()) return false;
      for (ENetPeer* p : *mine) {
        if (p->state != ENET_PEER_STATE_CONNECTED) return false;
      }
      return true;
    };
    for (int i = 0; i < 400 && !all_up(); ++i) {
      ENetEvent ev;
      while (enet_host_service(server, &ev, 1) > 0) {
        if (ev.type == ENET_EVENT_TYPE_CONNECT) theirs.push_back(ev.peer);
      }
      while (enet_host_service(client, &ev, 0) > 0) {
      }
    }
    REQUIRE(all_up());
    return theirs;
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

TEST_CASE("arrival stamps: the kernel's arrival time, under the ENet peer id the header names") {
  RawPair p;
  REQUIRE(proto::StampArrivals(p.b).ok());
  AwaitStampsLive();
  CHECK(proto::LastArrivalNs(p.b, 7) == 0);
  const uint64_t before_send = MonotonicNs();
  p.Send(std::string("\xB0\x07", 2) + "snapshot");  // flag and session bits above peer id 7
  AwaitReadable(p.b);
  const uint64_t arrived_by = MonotonicNs();
  std::this_thread::sleep_for(std::chrono::milliseconds(3));  // read well after the arrival
  p.Send(std::string("\x0F\xFF", 2) + "connect");            // 0xFFF: no peer id yet
  REQUIRE(p.Receive() == std::string("\xB0\x07", 2) + "snapshot");  // outside a scope
  const uint64_t at = proto::LastArrivalNs(p.b, 7);
  CHECK(at + kClockSlackNs >= before_send);
  CHECK(at <= arrived_by + kClockSlackNs);  // the arrival, not the read 3 ms later
  REQUIRE(p.Receive() == std::string("\x0F\xFF", 2) + "connect");
  CHECK(proto::LastArrivalNs(p.b, 0xFFF) == 0);
  CHECK(proto::LastArrivalNs(p.b, 7) == at);
  CHECK(proto::LastArrivalNs(p.a, 7) == 0);  // never stamped
}

TEST_CASE("arrival stamps name the ENet peer that receives the packet") {
  HostPair hosts(4);
  ENetHost* client = hosts.client;
  REQUIRE(proto::StampArrivals(client->socket).ok());
  AwaitStampsLive();
  // Two client peers: the packet goes to the second, so its stamp must not be the first's.
  std::vector<ENetPeer*> mine;
  const std::vector<ENetPeer*> accepted = hosts.Connect(2, &mine);
  ENetPeer* const first = mine[0];
  ENetPeer* const second = mine[1];
  // The server's peer for `second` is the one whose outgoing id is second's incoming id.
  ENetPeer* to_second = accepted[0]->outgoingPeerID == second->incomingPeerID ? accepted[0] : accepted[1];
  REQUIRE(to_second->outgoingPeerID == second->incomingPeerID);
  std::this_thread::sleep_for(std::chrono::milliseconds(3));  // the handshake's stamps are older
  const uint64_t before_send = MonotonicNs();
  ENetPacket* packet = enet_packet_create("hello", 5, 0);
  REQUIRE(enet_peer_send(to_second, 1, packet) == 0);
  enet_host_flush(hosts.server);
  AwaitReadable(client->socket);
  const uint64_t arrived_by = MonotonicNs();
  ENetEvent ev;
  bool got = false;
  for (int i = 0; i < 400 && !got; ++i) {
    if (enet_host_service(client, &ev, 1) > 0 && ev.type == ENET_EVENT_TYPE_RECEIVE) {
      got = true;
      CHECK(ev.peer == second);
      const uint64_t at = proto::LastArrivalNs(client->socket, ev.peer->incomingPeerID);
      CHECK(at + kClockSlackNs >= before_send);
      CHECK(at <= arrived_by + kClockSlackNs);
      CHECK(proto::LastArrivalNs(client->socket, first->incomingPeerID) < before_send);
      enet_packet_destroy(ev.packet);
    }
  }
  REQUIRE(got);
}

TEST_CASE("ENet hosts talk through scopes: every packet arrives in order, fewer system calls") {
  HostPair hosts(1);
  ENetHost* server = hosts.server;
  ENetHost* client = hosts.client;
  std::vector<ENetPeer*> mine;
  hosts.Connect(1, &mine);
  ENetPeer* peer = mine[0];
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
}

}  // namespace
