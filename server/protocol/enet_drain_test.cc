// DrainHost against real ENet hosts on loopback: a backlog of datagrams that make no event
// (more than one 256-datagram batch) must not hide the packet queued behind it.
#include <catch2/catch.hpp>

#include <linux/sock_diag.h>
#include <sys/socket.h>

#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include "server/protocol/enet_drain.h"
#include "server/protocol/enet_pool.h"
#include "server/protocol/enet_socket_batch.h"

namespace {

// The bytes the kernel charges to `socket`'s receive queue (SK_MEMINFO_RMEM_ALLOC): every
// datagram queued adds to it, and only reading takes away.
uint32_t QueuedBytes(ENetSocket socket) {
  uint32_t mem[SK_MEMINFO_VARS] = {};
  socklen_t len = sizeof mem;
  REQUIRE(getsockopt(socket, SOL_SOCKET, SO_MEMINFO, mem, &len) == 0);
  return mem[SK_MEMINFO_RMEM_ALLOC];
}

// Polls (up to 10 s) until `socket`'s receive queue holds more than `before` bytes: the datagram
// sent since has arrived. Fails the case if it never does (the kernel dropped it).
void WaitForArrival(ENetSocket socket, uint32_t before) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (QueuedBytes(socket) <= before && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::yield();
  }
  REQUIRE(QueuedBytes(socket) > before);
}

struct Pair {
  ENetHost* server = nullptr;
  ENetHost* client = nullptr;
  ENetPeer* to_server = nullptr;
  ENetAddress server_addr{};

  Pair() {
    REQUIRE(proto::InitializeEnet().ok());
    ENetAddress bind{};
    enet_address_set_host_ip(&bind, "127.0.0.1");
    bind.port = 0;  // any free port
    server = enet_host_create(&bind, 4, 2, 0, 0);
    REQUIRE(server != nullptr);
    REQUIRE(enet_socket_get_address(server->socket, &server_addr) == 0);
    client = enet_host_create(nullptr, 1, 2, 0, 0);
    REQUIRE(client != nullptr);
    to_server = enet_host_connect(client, &server_addr, 2, 0);
    REQUIRE(to_server != nullptr);
    bool server_saw = false, client_saw = false;
    for (int i = 0; i < 400 && !(server_saw && client_saw); ++i) {
      ENetEvent ev;
      if (enet_host_service(server, &ev, 5) > 0 && ev.type == ENET_EVENT_TYPE_CONNECT) server_saw = true;
      if (enet_host_service(client, &ev, 5) > 0 && ev.type == ENET_EVENT_TYPE_CONNECT) client_saw = true;
    }
    REQUIRE(server_saw);
    REQUIRE(client_saw);
  }
  ~Pair() {
    enet_host_destroy(client);
    enet_host_destroy(server);
    enet_deinitialize();
  }

  // Sends `count` copies of `bytes` to the server from a raw socket, each one in the server's
  // receive queue before the next leaves.
  void QueueRaw(std::vector<uint8_t> bytes, int count) {
    ENetSocket raw = enet_socket_create(ENET_SOCKET_TYPE_DATAGRAM);
    REQUIRE(raw != ENET_SOCKET_NULL);
    for (int i = 0; i < count; ++i) {
      const uint32_t before = QueuedBytes(server->socket);
      ENetBuffer b{bytes.data(), bytes.size()};
      REQUIRE(enet_socket_send(raw, &server_addr, &b, 1) == static_cast<int>(bytes.size()));
      WaitForArrival(server->socket, before);
    }
    enet_socket_destroy(raw);
  }

  // `count` datagrams ENet ignores (peer id beyond the host's peers: no event), then one
  // reliable packet from the connected client; returns once all are in the server's queue.
  void QueueJunkThenPacket(int count) {
    QueueRaw({0x0F, 0xFE, 0x00, 0x00}, count);  // peer id 0xFFE, no command
    const uint8_t payload[3] = {1, 2, 3};
    ENetPacket* p = enet_packet_create(payload, sizeof payload, ENET_PACKET_FLAG_RELIABLE);
    REQUIRE(enet_peer_send(to_server, 0, p) == 0);
    const uint32_t before = QueuedBytes(server->socket);
    enet_host_flush(client);  // one datagram
    WaitForArrival(server->socket, before);
  }
};

}  // namespace

TEST_CASE("ENet alone stops after a batch of datagrams that made no event", "[enet_drain]") {
  Pair p;
  p.QueueJunkThenPacket(300);
  const enet_uint32 before = p.server->totalReceivedPackets;
  ENetEvent ev;
  // The premise DrainHost exists for: one call reads a full batch, finds no event, returns 0.
  REQUIRE(enet_host_service(p.server, &ev, 0) == 0);
  REQUIRE(p.server->totalReceivedPackets - before == proto::kEnetReadBatch);
}

TEST_CASE("DrainHost reads past event-less batches to the packet behind them", "[enet_drain]") {
  Pair p;
  p.QueueJunkThenPacket(300);
  std::vector<uint8_t> got;
  const proto::DrainResult r = proto::DrainHost(p.server, [&](ENetEvent& ev) {
    if (ev.type == ENET_EVENT_TYPE_RECEIVE) {
      got.assign(ev.packet->data, ev.packet->data + ev.packet->dataLength);
      enet_packet_destroy(ev.packet);
    }
  });
  CHECK_FALSE(r.error);
  CHECK_FALSE(r.capped);
  CHECK(r.events == 1);
  CHECK(r.datagrams == 301);  // fewer would mean the kernel dropped some: the test is moot
  REQUIRE(got == std::vector<uint8_t>{1, 2, 3});
}

TEST_CASE("DrainHost hands over a read's packets and ends on the read that found the socket empty",
          "[enet_drain]") {
  Pair p;
  for (int i = 0; i < 5; ++i) {
    const uint8_t payload[1] = {static_cast<uint8_t>(i)};
    REQUIRE(enet_peer_send(p.to_server, 0, enet_packet_create(payload, 1, ENET_PACKET_FLAG_RELIABLE)) == 0);
    const uint32_t before = QueuedBytes(p.server->socket);
    enet_host_flush(p.client);  // one datagram each
    WaitForArrival(p.server->socket, before);
  }
  std::vector<uint8_t> got;
  const proto::SocketBatchCounters before = proto::ThisThreadSocketBatchCounters();
  const proto::DrainResult r = proto::DrainHost(p.server, [&](ENetEvent& ev) {
    if (ev.type == ENET_EVENT_TYPE_RECEIVE) {
      got.push_back(ev.packet->data[0]);
      enet_packet_destroy(ev.packet);
    }
  });
  const proto::SocketBatchCounters after = proto::ThisThreadSocketBatchCounters();
  CHECK(r.events == 5);
  CHECK(r.datagrams == 5);
  CHECK(got == std::vector<uint8_t>{0, 1, 2, 3, 4});
  // Five reads that got a datagram and one that found none: no second pass to find it empty.
  CHECK(after.receive_calls - before.receive_calls == 6);
}

TEST_CASE("DrainHost stops at its datagram cap and the next call goes on", "[enet_drain]") {
  Pair p;
  p.QueueJunkThenPacket(600);
  int received = 0;
  auto on_event = [&](ENetEvent& ev) {
    if (ev.type == ENET_EVENT_TYPE_RECEIVE) {
      ++received;
      enet_packet_destroy(ev.packet);
    }
  };
  const proto::DrainResult first = proto::DrainHost(p.server, on_event, 0, 2 * proto::kEnetReadBatch);
  CHECK(first.capped);
  CHECK(first.datagrams == 2 * proto::kEnetReadBatch);
  CHECK(received == 0);
  const proto::DrainResult second = proto::DrainHost(p.server, on_event, 0, 2 * proto::kEnetReadBatch);
  CHECK_FALSE(second.capped);
  CHECK(second.datagrams == 601 - 2 * proto::kEnetReadBatch);
  CHECK(received == 1);
}

TEST_CASE("DrainHost reads past datagrams too large for ENet's buffer", "[enet_drain]") {
  Pair p;
  // ENet 1.3.17 fails the whole enet_host_service call for a datagram over its 4096-byte buffer
  // (MSG_TRUNC); the kernel has consumed it by then.
  p.QueueRaw(std::vector<uint8_t>(6000, 0xAB), 5);
  p.QueueJunkThenPacket(10);
  ENetEvent ev;
  REQUIRE(enet_host_service(p.server, &ev, 0) < 0);  // the premise; this consumed the first one
  std::vector<uint8_t> got;
  const proto::DrainResult r = proto::DrainHost(p.server, [&](ENetEvent& ev) {
    if (ev.type == ENET_EVENT_TYPE_RECEIVE) {
      got.assign(ev.packet->data, ev.packet->data + ev.packet->dataLength);
      enet_packet_destroy(ev.packet);
    }
  });
  CHECK_FALSE(r.error);
  CHECK(r.read_errors == 4);
  REQUIRE(got == std::vector<uint8_t>{1, 2, 3});
}
