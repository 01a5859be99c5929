// JunkFilter: shape checks, the half-open caps with their sweep and eviction, and the
// connectionless reply budget.
//
// Why the half-open rules look as they do. A CONNECT makes ENet take a peer slot and resend a
// reliable VERIFY_CONNECT until the peer times out (5 s and more), whoever sent it. Junk CONNECTs
// at thousands a second fill the table and lock every new player out (measured: with a 20k/s
// flood none of 16 bots could join). So a host admits CONNECTs only while fewer than 3/4 of its
// slots are half-open and a slot is free, and resets a half-open peer after the timeout. That
// alone would let a flood keep the half-open share full, so the last CONNECTs refused are
// remembered per source, and when the same CONNECT comes again from there (ENet clients resend
// it after 0.5 s, 1.5 s, 3.5 s; a flood of fresh connect ids never repeats one) it evicts the
// oldest half-open peer and takes its place. A real client therefore gets in after about one
// resend. There is no cap per source address, and the share is large: a bot process joins
// hundreds of players through one ENet host at once; a cap of 16 per source made 136 of 200 such
// joins fail, and a share of 1/2 made 88 of them wait for a resend (measured, 200 bots at once
// against --max-players 256).
#include "server/sv/junk_filter.h"

#include <arpa/inet.h>

#include <algorithm>
#include <random>

#include "server/core/steady_clock.h"
#include "server/protocol/datagram_shape.h"
#include "server/protocol/enet_socket_batch.h"

namespace sv {

namespace {

constexpr uint32_t kBudgetSlots = 4096;    // connectionless reply buckets
constexpr uint32_t kRefusedSlots = 1024;   // sources with refused CONNECTs (power of two)
constexpr uint64_t kRefusedMemoryMs = 5000;

thread_local JunkFilter* t_active = nullptr;

int ENET_CALLBACK InterceptHook(ENetHost* /*host*/, ENetEvent* /*event*/) {
  return t_active != nullptr ? t_active->Screen() : 0;
}

uint64_t RandomSeed() {
  std::random_device rd;
  return (static_cast<uint64_t>(rd()) << 32) ^ rd();
}

bool SameAddress(const ENetAddress& a, const ENetAddress& b) { return a.host == b.host && a.port == b.port; }

}  // namespace

JunkFilter::JunkFilter(ENetHost* host, JunkCounters* counters, ConnectionlessHandler on_connectionless,
                       JunkLimits limits)
    : host_(host),
      counters_(counters),
      on_connectionless_(std::move(on_connectionless)),
      limits_(limits),
      half_open_cap_(std::max<uint32_t>(limits.half_open_min, static_cast<uint32_t>(host->peerCount * 3 / 4))),
      seed_(RandomSeed()),
      connectionless_budget_(limits.connectionless_burst, limits.connectionless_per_s, kBudgetSlots, seed_),
      half_open_since_ms_(host->peerCount, 0),
      refused_connects_(kRefusedSlots) {
  host_->intercept = InterceptHook;
}

proto::DrainResult JunkFilter::Drain(const std::function<void(ENetEvent&)>& on_event, uint32_t wait_ms) {
  // Only handshakes need the sweep: with none under way, nothing can time out, and the slot
  // counts are refreshed by AdmitConnect when a CONNECT comes. Walking a few thousand peers per
  // drain touched a cache line per peer slot on every frame of every worker.
  counts_fresh_ = false;
  if (half_open_ > 0) SweepHalfOpen(core::SteadyMs());
  JunkFilter* const outer = t_active;
  t_active = this;
  proto::DrainResult r;
  {
    proto::SocketBatchScope batch;  // recvmmsg, and the acknowledgements sent meanwhile in one go
    r = proto::DrainHost(host_, on_event, wait_ms);
  }
  t_active = outer;
  if (r.read_errors > 0) counters_->unreadable.fetch_add(r.read_errors, std::memory_order_relaxed);
  return r;
}

int JunkFilter::Screen() {
  const std::span<const uint8_t> data(host_->receivedData, host_->receivedDataLength);
  const proto::DatagramShape shape = proto::ClassifyDatagram(data, host_->mtu);
  const ENetAddress& from = host_->receivedAddress;
  switch (shape.kind) {
    case proto::DatagramKind::kConnectionless:
      if (!on_connectionless_) {
        counters_->connectionless_bad.fetch_add(1, std::memory_order_relaxed);
      } else if (!connectionless_budget_.Allow(from.host, from.port, core::SteadyMs())) {
        counters_->connectionless_limited.fetch_add(1, std::memory_order_relaxed);
      } else if (!on_connectionless_(host_, data)) {
        counters_->connectionless_bad.fetch_add(1, std::memory_order_relaxed);
      }
      return 1;
    case proto::DatagramKind::kShort:
      counters_->short_datagrams.fetch_add(1, std::memory_order_relaxed);
      return 1;
    case proto::DatagramKind::kOversize:
      counters_->oversize.fetch_add(1, std::memory_order_relaxed);
      return 1;
    case proto::DatagramKind::kBadHeader:
      counters_->bad_header.fetch_add(1, std::memory_order_relaxed);
      return 1;
    case proto::DatagramKind::kBadConnect:
      counters_->bad_connect.fetch_add(1, std::memory_order_relaxed);
      return 1;
    case proto::DatagramKind::kConnect:
      return AdmitConnect(shape.connect_id);
    case proto::DatagramKind::kPeer:
      break;
  }
  // As ENet would judge it, but counted: a slot that is free, or held by another address.
  if (shape.peer_id >= host_->peerCount) {
    counters_->unknown_peer.fetch_add(1, std::memory_order_relaxed);
    return 1;
  }
  const ENetPeer& peer = host_->peers[shape.peer_id];
  if (peer.state == ENET_PEER_STATE_DISCONNECTED || peer.state == ENET_PEER_STATE_ZOMBIE ||
      !SameAddress(peer.address, from)) {
    counters_->unknown_peer.fetch_add(1, std::memory_order_relaxed);
    return 1;
  }
  return 0;
}

int JunkFilter::AdmitConnect(uint32_t connect_id) {
  const ENetAddress& from = host_->receivedAddress;
  const uint64_t now_ms = core::SteadyMs();
  if (!counts_fresh_) SweepHalfOpen(now_ms);  // disconnects since the last sweep freed slots
  RefusedConnects& refused = RefusedEntry(from, now_ms);
  const auto ids_end = refused.connect_ids.begin() + std::min<size_t>(refused.next, RefusedConnects::kIds);
  const bool resent = std::find(refused.connect_ids.begin(), ids_end, connect_id) != ids_end;
  const bool room = half_open_ < half_open_cap_ && free_slots_ > 0;
  bool admit = room;
  if (!room && resent) {  // a real ENet client: make room for it
    admit = EvictOldestHalfOpen();
    if (admit) counters_->half_open_evicted.fetch_add(1, std::memory_order_relaxed);
  }
  if (!admit) {
    refused.ms = now_ms;
    refused.connect_ids[refused.next++ % RefusedConnects::kIds] = connect_id;
    counters_->connect_capped.fetch_add(1, std::memory_order_relaxed);
    return 1;
  }
  ++half_open_;  // may count a resend ENet then ignores: the next sweep recounts
  if (room) --free_slots_;  // else it takes the slot the eviction freed
  return 0;
}

size_t JunkFilter::RefusedSetOf(const ENetAddress& from) const {
  return proto::HashSource(from.host, from.port, seed_) & (kRefusedSlots / kRefusedWays - 1);
}

JunkFilter::RefusedConnects& JunkFilter::RefusedEntry(const ENetAddress& from, uint64_t now_ms) {
  // With one entry per hash, a junk source that shared a real client's hash overwrote the
  // client's refused ids at every junk CONNECT, and its resends were never recognized.
  const uint64_t source = (static_cast<uint64_t>(from.host) << 16) | from.port;
  const size_t set = RefusedSetOf(from) * kRefusedWays;
  RefusedConnects* victim = &refused_connects_[set];
  for (size_t w = set; w < set + kRefusedWays; ++w) {
    RefusedConnects& e = refused_connects_[w];
    if (e.source == source && now_ms < e.ms + kRefusedMemoryMs) return e;
    if (e.ms < victim->ms) victim = &e;  // the least recently refused (an empty entry: ms 0)
  }
  *victim = RefusedConnects{source};  // ms 0 until a refusal: a free entry again if none comes
  return *victim;
}

void JunkFilter::SweepHalfOpen(uint64_t now_ms) {
  counts_fresh_ = true;
  half_open_ = 0;
  free_slots_ = 0;
  for (size_t i = 0; i < host_->peerCount; ++i) {
    ENetPeer& peer = host_->peers[i];
    if (peer.state != ENET_PEER_STATE_ACKNOWLEDGING_CONNECT) {
      half_open_since_ms_[i] = 0;
      if (peer.state == ENET_PEER_STATE_DISCONNECTED) ++free_slots_;
      continue;
    }
    if (half_open_since_ms_[i] == 0) {
      half_open_since_ms_[i] = now_ms;
    } else if (now_ms > half_open_since_ms_[i] + limits_.half_open_timeout_ms) {
      enet_peer_reset(&peer);  // our code never saw it: no CONNECT event came
      half_open_since_ms_[i] = 0;
      counters_->half_open_expired.fetch_add(1, std::memory_order_relaxed);
      ++free_slots_;
      continue;
    }
    ++half_open_;
  }
  counters_->NoteHalfOpen(half_open_);
}

bool JunkFilter::EvictOldestHalfOpen() {
  size_t oldest = host_->peerCount;
  uint64_t oldest_since = UINT64_MAX;
  for (size_t i = 0; i < host_->peerCount; ++i) {
    if (host_->peers[i].state != ENET_PEER_STATE_ACKNOWLEDGING_CONNECT) continue;
    // Admitted since the last sweep (since 0): the newest.
    const uint64_t since = half_open_since_ms_[i] == 0 ? UINT64_MAX : half_open_since_ms_[i];
    if (oldest == host_->peerCount || since < oldest_since) {
      oldest = i;
      oldest_since = since;
    }
  }
  if (oldest == host_->peerCount) return false;
  enet_peer_reset(&host_->peers[oldest]);
  half_open_since_ms_[oldest] = 0;
  if (half_open_ > 0) --half_open_;
  return true;
}

}  // namespace sv
