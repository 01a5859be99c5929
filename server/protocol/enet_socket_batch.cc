// Batched datagram I/O under ENet by interposing its socket calls; see enet_socket_batch.h.
#include "server/protocol/enet_socket_batch.h"

#include <arpa/inet.h>
#include <dlfcn.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <time.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <enet/enet.h>

#include "server/core/check.h"

namespace proto {
namespace {

using SendFn = int (*)(ENetSocket, const ENetAddress*, const ENetBuffer*, size_t);
using ReceiveFn = int (*)(ENetSocket, ENetAddress*, ENetBuffer*, size_t);
using DestroyFn = void (*)(ENetSocket);

// libenet's own functions, next after ours in the lookup order.
template <typename Fn>
Fn Next(const char* name) {
  void* f = dlsym(RTLD_NEXT, name);
  AS_CHECK(f != nullptr, "enet_socket_batch: libenet's own socket function is missing");
  return reinterpret_cast<Fn>(f);
}
SendFn EnetSend() { static const SendFn f = Next<SendFn>("enet_socket_send"); return f; }
ReceiveFn EnetReceive() { static const ReceiveFn f = Next<ReceiveFn>("enet_socket_receive"); return f; }
DestroyFn EnetDestroy() { static const DestroyFn f = Next<DestroyFn>("enet_socket_destroy"); return f; }

// ENet never sends or receives more than its maximum MTU in one datagram.
constexpr size_t kSlotBytes = ENET_PROTOCOL_MAXIMUM_MTU;
constexpr size_t kBatch = SocketBatchScope::kBatch;

struct Slot {
  std::array<uint8_t, kSlotBytes> bytes;
  sockaddr_in addr;
  size_t length;
  bool truncated;
  uint64_t arrival_ns;  // CLOCK_MONOTONIC; stamped sockets only
};

// Room for one SCM_TIMESTAMPNS control message.
constexpr size_t kControlBytes = CMSG_SPACE(sizeof(timespec));
using ArrivalTable = std::array<uint64_t, ENET_PROTOCOL_MAXIMUM_PEER_ID + 1>;

// One socket's queues on this thread.
struct SocketQueues {
  ENetSocket fd = -1;
  std::unique_ptr<std::array<Slot, kBatch>> out;  // to send: out[0 .. out_count)
  size_t out_count = 0;
  std::unique_ptr<std::array<Slot, kBatch>> in;   // read ahead: in[in_head .. in_count)
  size_t in_head = 0, in_count = 0;
  // StampArrivals: the control buffers recvmmsg fills, and the newest arrival per ENet peer id.
  std::unique_ptr<std::array<std::array<uint8_t, kControlBytes>, kBatch>> control;
  std::unique_ptr<ArrivalTable> arrival_ns;
};

uint64_t ClockNs(clockid_t clock) {
  timespec ts;
  clock_gettime(clock, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(ts.tv_nsec);
}

// Both clocks at one moment: the monotonic reading is taken on both sides of the realtime one,
// and a pair that a preemption split (more than kClockPairNs apart) is read again, a few times.
void ReadClocks(uint64_t* real_now, uint64_t* mono_now) {
  constexpr uint64_t kClockPairNs = 20'000;
  for (int tries = 0;; ++tries) {
    const uint64_t before = ClockNs(CLOCK_MONOTONIC);
    *real_now = ClockNs(CLOCK_REALTIME);
    const uint64_t after = ClockNs(CLOCK_MONOTONIC);
    *mono_now = before + (after - before) / 2;
    if (after - before <= kClockPairNs || tries == 3) return;
  }
}

// The kernel's arrival stamp of a received message (CLOCK_REALTIME), moved to CLOCK_MONOTONIC
// with the offset between the two clocks now; no stamp, or one in the future: `mono_now`.
uint64_t ArrivalOf(msghdr& h, uint64_t real_now, uint64_t mono_now) {
  for (cmsghdr* c = CMSG_FIRSTHDR(&h); c != nullptr; c = CMSG_NXTHDR(&h, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_TIMESTAMPNS) continue;
    timespec ts;
    std::memcpy(&ts, CMSG_DATA(c), sizeof ts);
    const uint64_t real = static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(ts.tv_nsec);
    const uint64_t age = real_now > real ? real_now - real : 0;
    return mono_now > age ? mono_now - age : mono_now;
  }
  return mono_now;
}

struct ThreadState {
  int depth = 0;  // open scopes
  std::vector<std::unique_ptr<SocketQueues>> sockets;
  SocketBatchCounters counters;

  SocketQueues* Find(ENetSocket fd) {
    for (auto& q : sockets) {
      if (q->fd == fd) return q.get();
    }
    return nullptr;
  }
  SocketQueues& Get(ENetSocket fd) {
    if (SocketQueues* q = Find(fd)) return *q;
    sockets.push_back(std::make_unique<SocketQueues>());
    sockets.back()->fd = fd;
    return *sockets.back();
  }
};

ThreadState& State() {
  thread_local ThreadState state;
  return state;
}

// Sends q's queue with sendmmsg; whatever the kernel refuses (a full buffer) is dropped.
void SendQueued(ThreadState& t, SocketQueues& q) {
  if (q.out_count == 0) return;
  std::array<mmsghdr, kBatch> msgs{};
  std::array<iovec, kBatch> iov{};
  for (size_t i = 0; i < q.out_count; ++i) {
    Slot& s = (*q.out)[i];
    iov[i] = {s.bytes.data(), s.length};
    msgs[i].msg_hdr.msg_name = &s.addr;
    msgs[i].msg_hdr.msg_namelen = sizeof s.addr;
    msgs[i].msg_hdr.msg_iov = &iov[i];
    msgs[i].msg_hdr.msg_iovlen = 1;
  }
  size_t done = 0;
  while (done < q.out_count) {
    const int r = sendmmsg(q.fd, msgs.data() + done, static_cast<unsigned>(q.out_count - done), MSG_NOSIGNAL);
    ++t.counters.send_calls;
    if (r < 0) {
      if (errno == EINTR) continue;
      break;  // EAGAIN, ENOBUFS...: the rest is lost, as a datagram may be
    }
    done += static_cast<size_t>(r);
  }
  t.counters.datagrams_sent += q.out_count;
  q.out_count = 0;
}

// Reads up to kBatch datagrams into q's empty read-ahead queue. ENet's convention: 0 if none
// is waiting, -1 (errno set) if the socket failed.
int ReadAhead(ThreadState& t, SocketQueues& q) {
  if (!q.in) q.in = std::make_unique<std::array<Slot, kBatch>>();
  std::array<mmsghdr, kBatch> msgs{};
  std::array<iovec, kBatch> iov{};
  for (size_t i = 0; i < kBatch; ++i) {
    Slot& s = (*q.in)[i];
    iov[i] = {s.bytes.data(), s.bytes.size()};
    msgs[i].msg_hdr.msg_name = &s.addr;
    msgs[i].msg_hdr.msg_namelen = sizeof s.addr;
    msgs[i].msg_hdr.msg_iov = &iov[i];
    msgs[i].msg_hdr.msg_iovlen = 1;
    if (q.control) {
      msgs[i].msg_hdr.msg_control = (*q.control)[i].data();
      msgs[i].msg_hdr.msg_controllen = kControlBytes;
    }
  }
  int r;
  do {
    r = recvmmsg(q.fd, msgs.data(), kBatch, MSG_DONTWAIT, nullptr);
  } while (r < 0 && errno == EINTR);
  ++t.counters.receive_calls;
  if (r < 0) return errno == EWOULDBLOCK || errno == EAGAIN ? 0 : -1;
  uint64_t real_now = 0, mono_now = 0;
  if (q.control) ReadClocks(&real_now, &mono_now);
  for (int i = 0; i < r; ++i) {
    Slot& s = (*q.in)[static_cast<size_t>(i)];
    mmsghdr& m = msgs[static_cast<size_t>(i)];
    s.length = m.msg_len;
    s.truncated = (m.msg_hdr.msg_flags & MSG_TRUNC) != 0;
    s.arrival_ns = q.control ? ArrivalOf(m.msg_hdr, real_now, mono_now) : 0;
  }
  q.in_head = 0;
  q.in_count = static_cast<size_t>(r);
  return r;
}

// Hands ENet the next read-ahead datagram of q (which has one).
int Deliver(ThreadState& t, SocketQueues& q, ENetAddress* address, ENetBuffer* buffers,
            size_t buffer_count) {
  const Slot& s = (*q.in)[q.in_head++];
  ++t.counters.datagrams_received;
  if (s.truncated) return -1;  // as libenet: the datagram did not fit its buffer
  if (q.arrival_ns && s.length >= 2) {
    // ENet's header starts with the receiving peer's id (big-endian), flags and session above it.
    const uint16_t peer = static_cast<uint16_t>((s.bytes[0] << 8 | s.bytes[1]) & ENET_PROTOCOL_MAXIMUM_PEER_ID);
    if (peer < ENET_PROTOCOL_MAXIMUM_PEER_ID) (*q.arrival_ns)[peer] = s.arrival_ns;  // 0xFFF: a connect, no peer yet
  }
  size_t room = 0;
  for (size_t i = 0; i < buffer_count; ++i) room += buffers[i].dataLength;
  if (s.length > room) return -1;
  size_t copied = 0;
  for (size_t i = 0; i < buffer_count && copied < s.length; ++i) {
    const size_t n = std::min(buffers[i].dataLength, s.length - copied);
    std::memcpy(buffers[i].data, s.bytes.data() + copied, n);
    copied += n;
  }
  if (address != nullptr) {
    address->host = s.addr.sin_addr.s_addr;
    address->port = ntohs(s.addr.sin_port);
  }
  return static_cast<int>(s.length);
}

}  // namespace

SocketBatchScope::SocketBatchScope() { ++State().depth; }

SocketBatchScope::~SocketBatchScope() {
  ThreadState& t = State();
  if (--t.depth > 0) return;
  for (auto& q : t.sockets) SendQueued(t, *q);
}

bool SocketBatchingActive() {
  return dlsym(RTLD_DEFAULT, "enet_socket_send") == reinterpret_cast<void*>(&enet_socket_send) &&
         dlsym(RTLD_DEFAULT, "enet_socket_receive") == reinterpret_cast<void*>(&enet_socket_receive);
}

SocketBatchCounters ThisThreadSocketBatchCounters() { return State().counters; }

core::Status StampArrivals(ENetSocket socket) {
  const int on = 1;
  if (setsockopt(socket, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof on) != 0) {
    return core::Status::IoError(std::string("SO_TIMESTAMPNS: ") + std::strerror(errno));
  }
  SocketQueues& q = State().Get(socket);
  if (!q.control) q.control = std::make_unique<std::array<std::array<uint8_t, kControlBytes>, kBatch>>();
  if (!q.arrival_ns) q.arrival_ns = std::make_unique<ArrivalTable>(ArrivalTable{});
  return core::Status::OK();
}

uint64_t LastArrivalNs(ENetSocket socket, uint16_t peer_id) {
  const SocketQueues* q = State().Find(socket);
  if (q == nullptr || !q->arrival_ns || peer_id >= q->arrival_ns->size()) return 0;
  return (*q->arrival_ns)[peer_id];
}

}  // namespace proto

// ---- The interposed functions (ENet's names and signatures, see enet/enet.h) ------------------

extern "C" int enet_socket_send(ENetSocket socket, const ENetAddress* address,
                                const ENetBuffer* buffers, size_t buffer_count) {
  using namespace proto;
  ThreadState& t = State();
  size_t length = 0;
  for (size_t i = 0; i < buffer_count; ++i) length += buffers[i].dataLength;
  SocketQueues* q = t.depth > 0 && address != nullptr && length <= kSlotBytes ? &t.Get(socket)
                                                                             : t.Find(socket);
  if (t.depth == 0 || address == nullptr || length > kSlotBytes) {
    if (q != nullptr) SendQueued(t, *q);  // keep the socket's datagrams in order
    ++t.counters.send_calls;
    ++t.counters.datagrams_sent;
    return EnetSend()(socket, address, buffers, buffer_count);
  }
  if (!q->out) q->out = std::make_unique<std::array<Slot, kBatch>>();
  Slot& s = (*q->out)[q->out_count++];
  size_t at = 0;
  for (size_t i = 0; i < buffer_count; ++i) {
    std::memcpy(s.bytes.data() + at, buffers[i].data, buffers[i].dataLength);
    at += buffers[i].dataLength;
  }
  s.length = length;
  s.addr = {};
  s.addr.sin_family = AF_INET;
  s.addr.sin_addr.s_addr = address->host;
  s.addr.sin_port = htons(address->port);
  if (q->out_count == kBatch) SendQueued(t, *q);
  return static_cast<int>(length);
}

extern "C" int enet_socket_receive(ENetSocket socket, ENetAddress* address, ENetBuffer* buffers,
                                   size_t buffer_count) {
  using namespace proto;
  ThreadState& t = State();
  SocketQueues* q = t.Find(socket);
  if (q != nullptr && q->in_head < q->in_count) return Deliver(t, *q, address, buffers, buffer_count);
  if (t.depth == 0 && (q == nullptr || !q->arrival_ns)) {  // stamped sockets: always read ahead
    ++t.counters.receive_calls;
    const int r = EnetReceive()(socket, address, buffers, buffer_count);
    if (r > 0) ++t.counters.datagrams_received;
    return r;
  }
  if (q == nullptr) q = &t.Get(socket);
  const int r = ReadAhead(t, *q);
  if (r <= 0) return r;
  return Deliver(t, *q, address, buffers, buffer_count);
}

extern "C" void enet_socket_destroy(ENetSocket socket) {
  using namespace proto;
  ThreadState& t = State();
  for (auto it = t.sockets.begin(); it != t.sockets.end(); ++it) {
    if ((*it)->fd == socket) {
      SendQueued(t, **it);
      t.sockets.erase(it);
      break;
    }
  }
  EnetDestroy()(socket);
}
