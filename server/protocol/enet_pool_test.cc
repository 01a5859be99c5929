// The pooled ENet allocator: blocks are reused per size class, the free lists are bounded,
// large blocks bypass the pool, and ENet runs on it (a packet round trip over loopback).
#include <catch2/catch.hpp>
#include <cstring>
#include <thread>
#include <vector>

#include <enet/enet.h>

#include "server/protocol/enet_pool.h"

namespace {

TEST_CASE("a freed block is reused for the next allocation of its size class") {
  void* a = proto::PoolMalloc(100);
  std::memset(a, 0xAB, 100);
  const proto::PoolCounters before = proto::ThisThreadPoolCounters();
  proto::PoolFree(a);
  void* b = proto::PoolMalloc(120);  // the same class (up to 128 bytes)
  const proto::PoolCounters after = proto::ThisThreadPoolCounters();
  CHECK(b == a);
  CHECK(after.returned == before.returned + 1);
  CHECK(after.reused == before.reused + 1);
  CHECK(reinterpret_cast<uintptr_t>(b) % 16 == 0);
  proto::PoolFree(b);
  proto::PoolFree(nullptr);  // as free(nullptr)
}

TEST_CASE("large blocks bypass the pool and the free lists stay bounded") {
  const proto::PoolCounters before = proto::ThisThreadPoolCounters();
  void* big = proto::PoolMalloc(1 << 20);
  std::memset(big, 1, 1 << 20);
  proto::PoolFree(big);
  CHECK(proto::ThisThreadPoolCounters().returned == before.returned);

  std::vector<void*> blocks;
  for (int i = 0; i < 10000; ++i) blocks.push_back(proto::PoolMalloc(64));
  const proto::PoolCounters mid = proto::ThisThreadPoolCounters();
  for (void* p : blocks) proto::PoolFree(p);
  const uint64_t kept = proto::ThisThreadPoolCounters().returned - mid.returned;
  CHECK(kept > 0);
  CHECK(kept < 10000);  // the rest went back to malloc
}

TEST_CASE("a block allocated on one thread may be freed on another") {
  void* p = nullptr;
  std::thread t([&] { p = proto::PoolMalloc(500); });
  t.join();
  std::memset(p, 7, 500);
  proto::PoolFree(p);
  void* q = proto::PoolMalloc(500);
  CHECK(q == p);
  proto::PoolFree(q);
}

TEST_CASE("ENet runs on the pool: a packet goes from one host to another") {
  REQUIRE(proto::InitializeEnet().ok());
  ENetAddress addr{};
  addr.host = ENET_HOST_ANY;
  addr.port = 0;
  ENetHost* server = enet_host_create(&addr, 4, 2, 0, 0);
  REQUIRE(server != nullptr);
  ENetAddress bound{};
  REQUIRE(enet_socket_get_address(server->socket, &bound) == 0);
  ENetHost* client = enet_host_create(nullptr, 1, 2, 0, 0);
  REQUIRE(client != nullptr);
  ENetAddress to{};
  enet_address_set_host(&to, "127.0.0.1");
  to.port = bound.port;
  ENetPeer* peer = enet_host_connect(client, &to, 2, 0);
  REQUIRE(peer != nullptr);
  const proto::PoolCounters before = proto::ThisThreadPoolCounters();
  bool connected = false, received = false;
  ENetEvent ev;
  for (int i = 0; i < 500 && !received; ++i) {  // polls with a deadline of 500 x 10 ms
    while (enet_host_service(client, &ev, 0) > 0) {
      if (ev.type == ENET_EVENT_TYPE_CONNECT) {
        connected = true;
        const char text[] = "hello through the pool";
        enet_peer_send(peer, 0, enet_packet_create(text, sizeof text, ENET_PACKET_FLAG_RELIABLE));
      }
    }
    while (enet_host_service(server, &ev, 10) > 0) {
      if (ev.type == ENET_EVENT_TYPE_RECEIVE) {
        received = std::strcmp(reinterpret_cast<const char*>(ev.packet->data), "hello through the pool") == 0;
        enet_packet_destroy(ev.packet);
      }
    }
  }
  CHECK(connected);
  CHECK(received);
  CHECK(proto::ThisThreadPoolCounters().reused > before.reused);  // ENet's frees came back
  enet_host_destroy(client);
  enet_host_destroy(server);
}

}  // namespace
