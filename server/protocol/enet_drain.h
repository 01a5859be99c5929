// DrainHost: read everything an ENet host's socket holds now and hand each event over.
//
// Why not `while (enet_host_service(host, &ev, 0) > 0)`: ENet 1.3.17 reads at most 256 datagrams
// per call and returns 0 when those made no event (acknowledgements, pings, datagrams of
// unknown peers), even if thousands more are queued. A server whose clients acknowledge its
// reliable messages then reads only one such batch per frame and the socket backlog grows until
// the kernel drops datagrams. DrainHost calls again while the last call read a full batch.
//
// And why not stop at the first error: ENet 1.3.17 reads into a 4096-byte buffer and returns -1
// from enet_host_service for a datagram that did not fit (MSG_TRUNC), after the kernel has
// consumed it. One oversize datagram per frame from anyone would otherwise stop the server from
// reading its players' packets behind it. DrainHost counts such failures and goes on; only a
// socket that is broken (EBADF, ENOTSOCK...) makes it give up.
#pragma once

#include <cstdint>
#include <functional>

#include <enet/enet.h>

namespace proto {

// Datagrams ENet reads per enet_host_service call (protocol.c, receive_incoming_commands).
inline constexpr uint32_t kEnetReadBatch = 256;

struct DrainResult {
  uint64_t events = 0;       // events handed to on_event
  uint64_t datagrams = 0;    // datagrams ENet read from the socket, failed reads included
  uint64_t read_errors = 0;  // failed enet_host_service calls (mostly datagrams over 4096 bytes)
  bool error = false;        // the socket is broken (not one datagram that failed): gave up
  bool capped = false;       // stopped at max_datagrams with more possibly queued
};

// Services `host` until a read of less than a full batch shows the socket empty (a call that
// returns no event, or one that returns a packet), its socket is broken, or about max_datagrams were read, counting each failed call
// as one (a flood must not hold the caller forever: the rest waits for the next call). The first
// call waits up to wait_ms for traffic, the others do not wait. Every event goes to on_event,
// which owns a RECEIVE event's packet. Sends queued packets as a side effect, like any
// enet_host_service call. The events a read queued are handed over with enet_host_check_events,
// and a drain whose read found the socket empty ends there: no extra enet_host_service call,
// whose send pass walks every peer slot of the host.
DrainResult DrainHost(ENetHost* host, const std::function<void(ENetEvent&)>& on_event,
                      uint32_t wait_ms = 0, uint64_t max_datagrams = 64 * kEnetReadBatch);

}  // namespace proto
