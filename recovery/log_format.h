// On-disk format of the logical log, shared by the writer, the reader and aftershock-inspect.
// Prose and byte tables: docs/recovery.md ("Log segments").
//
// A segment file `log-NNNNNN.aslog` = segment header, then records back to back.
//   segment header (32 bytes): magic u32 | version u32 | segment number u64 | first tick u64 |
//                              reserved u32 (0) | masked CRC-32C of the 28 bytes before u32
//   record (16-byte header + payload): masked CRC-32C u32 of (length|tick|payload) |
//                              payload length u32 | tick u64 | payload
// All integers little-endian.
#pragma once

#include <cstdint>
#include <string>

namespace recovery::log_format {

inline constexpr uint32_t kSegmentMagic = 0x474c5341;  // "ASLG" read as little-endian bytes
inline constexpr uint32_t kVersion = 1;
inline constexpr size_t kSegmentHeaderSize = 32;
inline constexpr size_t kRecordHeaderSize = 16;
// A payload larger than this is refused by the writer and treated as damage by the reader.
inline constexpr uint32_t kMaxPayload = 64u << 20;
// The largest LogOptions::segment_bytes a LogWriter accepts.
inline constexpr uint64_t kMaxSegmentBytes = 1ull << 30;
// No segment file the writer writes is longer: it rotates before a record would take a segment
// past segment_bytes, unless the segment holds no record yet, and a record is at most its header
// and kMaxPayload. A reader reads no further than this: the bytes past it were never written by
// the writer, so the segment is damaged there (a torn tail, if it is the newest segment), and a
// huge or sparse file in a segment's place costs at most this much memory.
inline constexpr uint64_t kMaxSegmentFileBytes =
    kMaxSegmentBytes + kSegmentHeaderSize + kRecordHeaderSize + kMaxPayload;

// "log-000042.aslog"
std::string SegmentFileName(uint64_t number);
// True (and *number set) if name is a segment file name.
bool ParseSegmentFileName(const std::string& name, uint64_t* number);

}  // namespace recovery::log_format
