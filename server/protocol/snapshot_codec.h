// Delta-compressed Snapshot packets (QuakeWorld style). The server keeps one SnapshotEncoder per
// client and the client one SnapshotDecoder; each holds up to the last kSnapshotRing snapshots
// so a snapshot can be sent as a delta against the newest one the client acknowledged (the
// encoder forgets those older than that one). Kill events ride along (docs/protocol.md, 6.4).
//
// Wire layout and delta rules: docs/protocol.md, "Snapshot".
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <span>
#include <vector>

#include "server/core/status.h"
#include "server/protocol/snapshot.h"

namespace proto {

struct EncodedSnapshot {
  std::vector<uint8_t> bytes;  // one Snapshot packet, at most kMaxSnapshotBytes
  uint32_t baseline_id = 0;    // the snapshot it is a delta against; 0 = full snapshot
  size_t entities_fit = 0;     // how many of the offered entities (a prefix) it carries
};

namespace detail {
// SnapshotEncoder's internal scratch: which offered entities go into the packet, and how. One
// per thread, shared by every encoder on it, and kept between calls only for its buffers'
// capacity: each Encode refills it, so steady-state encoding does not allocate, and a server
// encoding for a thousand clients a frame finds it in cache (a scratch per encoder was cold at
// every call).
struct SnapshotPlan {
  struct Entry {
    const EntityState* e;
    uint16_t mask;
  };
  std::vector<Entry> entries;     // sorted by id; entities taken and not unchanged
  std::vector<EntityState> sent;  // sorted by id; the state the client will decode
  // Taken entities as id << 48 | offer position << 16 | mask: those the baseline holds by their
  // baseline position (in id order already, as the baseline is; kNotTaken: removed), the others
  // (new to the client: a few per frame) apart, sorted, then merged with them.
  static constexpr uint64_t kNotTaken = UINT64_MAX;  // above any key: ids are below 2^15
  std::vector<uint64_t> base_key;
  std::vector<uint64_t> fresh;
  size_t taken = 0;
  size_t bytes = 0;               // packet size without the removal list
  size_t base_left = 0;           // baseline entities to remove (2 bytes each)
};
}  // namespace detail

// Server side, one per client. Not thread-safe: owned by the thread that sends to that client.
class SnapshotEncoder {
 public:
  // Encodes `frame` for the client. frame.entities is the offer in priority order (nearest
  // first), any length, unique ids: the encoder takes the longest prefix that fits in
  // kMaxSnapshotBytes and kMaxSnapshotEntities and reports it in out->entities_fit; entities
  // past it are absent for the client this frame. client_ack_id is the client's
  // CommandPacket.ack_snapshot_id: if that snapshot is still held, the result is a delta
  // against it, else a full snapshot. frame.snapshot_id must exceed every id encoded before.
  // Held snapshots older than that baseline are forgotten (their buffers serve the next
  // snapshots encoded on this thread), so a later, older client_ack_id gets a full snapshot.
  // Kill events: the queued events that the acknowledged snapshot carried are done and leave
  // the queue; the oldest kMaxSnapshotEvents still queued ride in this snapshot (again, if an
  // earlier one carried them but was not acknowledged). frame.events must be empty.
  // InvalidArgument (nothing recorded) if the frame breaks a rule of Validate or of ids.
  core::Status Encode(const Snapshot& frame, uint32_t client_ack_id, EncodedSnapshot* out);

  // Queues a kill event for the next snapshots, numbered after the last one queued.
  // InvalidArgument if it breaks Validate. With kMaxQueuedEvents already waiting (a client that
  // acknowledges nothing), the oldest is dropped and counted in events_dropped().
  core::Status QueueEvent(const KillEvent& event);
  size_t events_queued() const { return events_.size(); }
  uint64_t events_dropped() const { return events_dropped_; }

  // Forgets every held snapshot and queued event (e.g. the client reconnected).
  void Reset();

  // Asks the CPU to start loading what Encode(..., client_ack_id, ...) will read first (the
  // baseline, last touched a frame or two ago): a server encoding for many clients calls it one
  // client ahead. No effect on results.
  void PrefetchBaseline(uint32_t client_ack_id) const;

 private:
  struct Held {
    uint32_t id = 0;
    std::vector<EntityState> entities;  // sorted by id: what the client will decode
    uint32_t events_upto = 0;  // every event numbered below it was queued before or carried
  };
  const Held* Find(uint32_t id) const;

  std::array<Held, kSnapshotRing> ring_;
  uint32_t last_id_ = 0;
  uint32_t forget_from_ = 1;  // every held snapshot below it is forgotten
  std::deque<KillEvent> events_;   // queued, oldest first
  uint32_t events_first_seq_ = 1;  // the number of events_.front()
  uint64_t events_dropped_ = 0;
};

// Client side. Not thread-safe: owned by the thread that reads the connection.
class SnapshotDecoder {
 public:
  // Decodes one Snapshot packet into *out (entities sorted by id) and holds it as a future
  // baseline. out->events holds only the kill events not decoded before (a snapshot carries
  // them until one that held them is acknowledged), so each event comes out once. Errors: Corruption / InvalidArgument for a malformed packet or a snapshot not
  // newer than the last decoded one; NotFound when the named baseline is not held, after which
  // ack_id() is 0 so the server answers with a full snapshot. After an error *out is unchanged.
  // Held snapshots older than the decoded one's baseline are forgotten: the server forgot them
  // before it encoded it, and an older snapshot is refused from then on. Their buffers serve
  // the next snapshots decoded on this thread, so a client decoding for thousands of bots holds
  // about two snapshots per connection instead of kSnapshotRing.
  core::Status Decode(std::span<const uint8_t> packet, Snapshot* out);

  // The id to put in CommandPacket.ack_snapshot_id: newest decoded snapshot, or 0.
  uint32_t ack_id() const { return ack_id_; }

  void Reset();

 private:
  struct Held {
    uint32_t id = 0;
    std::vector<EntityState> entities;
  };

  std::array<Held, kSnapshotRing> ring_;
  uint32_t last_id_ = 0;
  uint32_t ack_id_ = 0;
  uint32_t forget_from_ = 1;  // every held snapshot below it is forgotten
  uint32_t next_event_seq_ = 1;  // events numbered below it were decoded already
};

}  // namespace proto
