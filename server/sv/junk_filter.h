// JunkFilter: the cheap-drop path for datagrams that are not traffic of a client, installed on
// the lobby's and every worker's ENet host as ENetHost::intercept, so junk is dropped before
// ENet allocates anything for it and long before game code. It also bounds the peers CONNECTs
// that no handshake follows can make ENet hold half-open, keeps them from locking real clients
// out, and limits the connectionless replies (lobby only) one source can draw. The rules and
// numbers: docs/protocol.md, 7.4.
//
// Ownership and threading: one filter per ENetHost, constructed after the host and destroyed
// before it, used only by the host's thread. It reaches the hook through a thread-local pointer
// that Drain() sets for the duration of the drain, so datagrams read outside Drain() (a
// shutdown's plain enet_host_service loop) pass to ENet unfiltered. Counters go to a shared
// JunkCounters (any thread).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include <enet/enet.h>

#include "server/protocol/enet_drain.h"
#include "server/protocol/source_limiter.h"
#include "server/sv/server_stats.h"

namespace sv {

struct JunkLimits {
  uint32_t half_open_min = 16;          // a host's cap is max(this, 3/4 of its peer slots)
  uint64_t half_open_timeout_ms = 2000; // a half-open peer older than this is reset
  double connectionless_burst = 8;      // replies per source (address:port) at once...
  double connectionless_per_s = 4;      // ...and refilled per second
};

class JunkFilter {
 public:
  // Answers one connectionless datagram (the lobby); false if it was malformed (no reply).
  using ConnectionlessHandler = std::function<bool(ENetHost*, std::span<const uint8_t>)>;

  // Installs the hook on `host`. Without a handler, connectionless datagrams are junk (the
  // worker ports answer none). `counters` must outlive the filter.
  JunkFilter(ENetHost* host, JunkCounters* counters, ConnectionlessHandler on_connectionless,
             JunkLimits limits = {});
  JunkFilter(const JunkFilter&) = delete;
  JunkFilter& operator=(const JunkFilter&) = delete;

  // proto::DrainHost with this filter on the hook. While any peer is half-open it first resets
  // those past the timeout and recounts them; otherwise the recount waits for the drain's first
  // CONNECT (at most one sweep per drain either way), so the cap sees the peer table as it is
  // and a drain with no handshake under way does not walk the peer table.
  proto::DrainResult Drain(const std::function<void(ENetEvent&)>& on_event, uint32_t wait_ms = 0);

  // The hook's decision for the datagram ENet just read (host->receivedData): 1 consumed (junk
  // dropped, or a connectionless request answered), 0 let ENet parse it.
  int Screen();

  // Refused CONNECTs are remembered per source in sets of kRefusedWays entries, the set chosen
  // by a seeded hash of the source: a source keeps its memory while fewer than kRefusedWays
  // other sources of its set are refused after it. RefusedSetOf names the set of `from` (tests
  // choose sources that share one).
  static constexpr uint32_t kRefusedWays = 4;
  size_t RefusedSetOf(const ENetAddress& from) const;

  // Half-open peers as of the last sweep plus those admitted since.
  uint32_t half_open() const { return half_open_; }
  uint32_t half_open_cap() const { return half_open_cap_; }

 private:
  // The CONNECTs last refused from one source (a bot process joins many players through one
  // ENet host, so one source has several handshakes under way).
  struct RefusedConnects {
    static constexpr size_t kIds = 32;
    uint64_t source = 0;  // address:port; 0: empty
    uint64_t ms = 0;      // the last refusal
    std::array<uint32_t, kIds> connect_ids{};
    uint32_t next = 0;    // ring position
  };

  int AdmitConnect(uint32_t connect_id);
  // The entry of refused CONNECTs from `from` (a fresh one if it has none within the memory time).
  RefusedConnects& RefusedEntry(const ENetAddress& from, uint64_t now_ms);
  void SweepHalfOpen(uint64_t now_ms);
  bool EvictOldestHalfOpen();

  ENetHost* host_;
  JunkCounters* counters_;
  ConnectionlessHandler on_connectionless_;
  JunkLimits limits_;
  uint32_t half_open_cap_;
  uint64_t seed_;
  proto::SourceLimiter connectionless_budget_;
  std::vector<uint64_t> half_open_since_ms_;  // per peer slot; 0: not half-open at the last sweep
  uint32_t half_open_ = 0;   // as of the last sweep, plus admissions since
  uint32_t free_slots_ = 0; // as of the last sweep, minus admissions since
  bool counts_fresh_ = false;  // swept in this drain: half_open_ and free_slots_ are current
  std::vector<RefusedConnects> refused_connects_;  // sets of entries, hashed by source
};

}  // namespace sv
