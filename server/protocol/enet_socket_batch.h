// SocketBatchScope: ENet's datagram system calls in batches (sendmmsg/recvmmsg), for the server
// and the bots.
//
// Why: ENet 1.3.17 makes one sendmsg per peer per flush and one recvmsg per datagram. On this
// project's machines the system call itself, not the network stack, is most of a datagram's
// kernel cost (aftershock-bench-udp: 4.6 us per request and reply one at a time, 2.2 us in
// batches of 64); at 1,000 players that was a third of the server's CPU and 45% of the bots'.
//
// How: Debian's libenet calls its own enet_socket_send, enet_socket_receive and
// enet_socket_destroy through its PLT, so definitions in the program take their place (ELF symbol
// interposition; as_protocol's link options export them from every executable that links this
// file). Outside a scope they call libenet's own functions (dlsym RTLD_NEXT): behaviour is
// ENet's, byte for byte. Inside a scope on a thread:
//   - each datagram ENet sends is copied into its socket's queue; the queue leaves with one
//     sendmmsg when kBatch datagrams wait and when the outermost scope ends;
//   - a receive with an empty queue reads up to kBatch datagrams with one recvmmsg and hands
//     ENet the first; the rest are handed to the next receives on that socket, in order, in a
//     scope or not (a socket's queue lives on the thread that read it).
// A datagram too large for ENet's buffer fails its receive (-1), as libenet's own does; a
// sendmmsg that the kernel refuses part of (a full socket buffer) drops the rest, as a UDP send
// may. enet_socket_destroy forgets the socket's queues on the calling thread.
//
// Contract: a scope covers ENet calls on one thread (scopes nest; the outermost sends). A host
// whose socket was read ahead inside a scope must be read on that thread from then on: ENet's
// own rule (one host, one thread) already asks for it. If the platform's libenet binds these
// calls internally, SocketBatchingActive() is false and scopes change nothing.
#pragma once

#include <cstddef>
#include <cstdint>

#include <enet/enet.h>

#include "server/core/status.h"

namespace proto {

class SocketBatchScope {
 public:
  static constexpr size_t kBatch = 64;  // datagrams per system call at most

  SocketBatchScope();
  ~SocketBatchScope();  // the outermost one sends every queued datagram
  SocketBatchScope(const SocketBatchScope&) = delete;
  SocketBatchScope& operator=(const SocketBatchScope&) = delete;
};

// True if libenet's socket calls reach this file's functions (see above).
bool SocketBatchingActive();

// Arrival stamps, for a client that times its server's answers (the bots). A client thread that
// serves thousands of connections reads a datagram some time after it arrived; that delay is the
// client's, not the server's, and a response time taken when the thread gets to the packet
// includes it. After StampArrivals(socket) on the thread that reads the socket:
//   - the kernel stamps each datagram on arrival (SO_TIMESTAMPNS), and every read of the socket
//     on this thread goes through the read-ahead path above, in a scope or not, so no datagram
//     reaches ENet unstamped;
//   - each datagram handed to ENet records its arrival under the ENet peer it is addressed to
//     (the peer id in ENet's protocol header, which is the receiving peer's incomingPeerID).
// LastArrivalNs(socket, peer_id) is that record: the arrival, on CLOCK_MONOTONIC (what
// std::chrono::steady_clock reads) in ns, of the newest datagram handed to ENet for that peer, or
// 0 if none was. ENet dispatches a packet after handing over the datagram that carried it, so
// for a packet event the record is its datagram's arrival or a later datagram's: never earlier.
// A datagram the kernel did not stamp is recorded at the time it was read; so is one that
// arrived just after the first socket of the process asked for stamps, while the kernel was
// still turning its stamping on (it does that from a work queue).
// IoError if the kernel refuses the option.
core::Status StampArrivals(ENetSocket socket);
uint64_t LastArrivalNs(ENetSocket socket, uint16_t peer_id);

// This thread's datagrams and the system calls that carried them, through this file's
// functions (batched or not); for tests and benchmarks.
struct SocketBatchCounters {
  uint64_t datagrams_sent = 0, send_calls = 0;
  uint64_t datagrams_received = 0, receive_calls = 0;
};
SocketBatchCounters ThisThreadSocketBatchCounters();

}  // namespace proto
