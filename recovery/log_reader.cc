// Log reader. A damaged spot in the newest segment is a torn tail only if no valid record follows
// it anywhere in the file (a byte-by-byte search): a crash can only lose the end of the log, so a
// valid record after damage means the damage is in the middle, i.e. real corruption.
#include "recovery/log_reader.h"

#include <algorithm>
#include <cstring>
#include <map>

#include "recovery/byte_buffer.h"
#include "recovery/coding.h"
#include "recovery/crc32c.h"
#include "recovery/log_format.h"

namespace recovery {

namespace lf = log_format;

namespace {

// True if a record of payload length `len` is allowed and fits in the `left` bytes from its
// start to the end of the file (header included; left >= kRecordHeaderSize).
bool RecordFits(uint32_t len, uint64_t left) {
  return len <= lf::kMaxPayload && left - lf::kRecordHeaderSize >= len;
}

// Whether a valid record follows a damaged spot at `pos`, where the last valid tick before it is
// `last_tick` and the first tick the spot can hold is last_tick + 1 (`anchored`: known from a
// record or the segment header; a segment whose header is damaged has no anchor). The writer
// appends consecutive ticks, each record at least kRecordHeaderSize bytes, so a record of the
// writer's at q holds a tick no later than last_tick + 1 + (q - pos) / kRecordHeaderSize: the
// ticks between were in the bytes between. Only a header that passes these cheap checks is
// checksummed. The checksums are bounded too (8 times the bytes searched, and 64 MiB more): a
// file crafted to pass the checks everywhere answers "maybe" once the budget is spent, and maybe
// counts as yes, the safe answer (Corruption, nothing cut). Before both bounds, 24 MiB of 0x01
// bytes, each offset a header of a 16 MiB record, kept the server's start-up checksumming for
// minutes.
enum class Follows { kNo, kYes };

Follows AnyValidRecordAfter(std::string_view data, size_t pos, uint64_t last_tick, bool anchored) {
  const uint64_t searched = data.size() - pos;
  uint64_t budget = 8 * searched + (64u << 20);
  for (size_t q = pos + 1; q + lf::kRecordHeaderSize <= data.size(); ++q) {
    const char* p = data.data() + q;
    const uint32_t len = DecodeFixed32(p + 4);
    const uint64_t tick = DecodeFixed64(p + 8);
    if (!RecordFits(len, data.size() - q) || tick <= last_tick) continue;
    if (anchored && tick - last_tick - 1 > (q - pos) / lf::kRecordHeaderSize) continue;
    const uint64_t bytes = 12 + uint64_t{len};
    if (bytes > budget) return Follows::kYes;  // not known: say yes
    budget -= bytes;
    if (crc32c::Unmask(DecodeFixed32(p)) == crc32c::Value(p + 4, bytes)) return Follows::kYes;
  }
  return Follows::kNo;
}

// True if the 32-byte segment header at h has the magic and its checksum matches.
bool SegmentHeaderVerifies(const char* h) {
  return DecodeFixed32(h) == lf::kSegmentMagic &&
         crc32c::Unmask(DecodeFixed32(h + 28)) == crc32c::Value(h, 28);
}

std::string Hint(const std::string& dir) {
  return "; the log is damaged: use aftershock-inspect " + dir + " to examine it";
}

}  // namespace

namespace {

// Whether ParseSegmentAfter checksums each record: kTrusted only for bytes it has already parsed
// with kVerify, whole and unchanged since (ScanLog's pass 2, after pass 1 cut any damage off).
enum class RecordChecksums { kVerify, kTrusted };

// ParseSegment, for bytes whose records up to tick prior_last_tick were passed over (0: none):
// the records left must come after it, as in the whole segment.
core::Status ParseSegmentAfter(std::string_view data, const std::string& file, uint64_t number,
                               uint64_t prior_last_tick, RecordChecksums checksums, SegmentInfo* info,
                               const std::function<core::Status(uint64_t, std::string_view)>& fn) {
  *info = SegmentInfo{};
  info->last_tick = prior_last_tick;
  info->file = file;
  info->number = number;
  info->size_bytes = data.size();
  auto damage = [&](size_t pos, std::string what) {
    info->damaged = true;
    info->damage_offset = pos;
    info->damage = std::move(what);
    // The anchor: the last record parsed or passed over, else the header's first tick.
    const bool anchored = info->last_tick > 0 || (info->header_ok && info->header_first_tick > 0);
    const uint64_t last = info->last_tick > 0 ? info->last_tick : info->header_first_tick - 1;
    info->tail_only = AnyValidRecordAfter(data, pos, anchored ? last : 0, anchored) == Follows::kNo;
  };
  if (data.empty()) return core::Status::OK();  // created, then crashed (or truncated) before its header
  if (data.size() < lf::kSegmentHeaderSize) {
    damage(0, "incomplete segment header");
    return core::Status::OK();
  }
  const char* h = data.data();
  if (!SegmentHeaderVerifies(h)) {
    damage(0, "bad segment header (magic or checksum)");
    return core::Status::OK();
  }
  if (DecodeFixed32(h + 4) != lf::kVersion) {
    damage(0, "unsupported log version " + std::to_string(DecodeFixed32(h + 4)));
    info->tail_only = false;
    return core::Status::OK();
  }
  if (DecodeFixed64(h + 8) != number) {
    damage(0, "segment header names segment " + std::to_string(DecodeFixed64(h + 8)));
    info->tail_only = false;
    return core::Status::OK();
  }
  info->header_ok = true;
  info->header_first_tick = DecodeFixed64(h + 16);
  size_t pos = lf::kSegmentHeaderSize;
  while (pos < data.size()) {
    if (data.size() - pos < lf::kRecordHeaderSize) {
      damage(pos, "incomplete record header");
      break;
    }
    const char* p = data.data() + pos;
    uint32_t len = DecodeFixed32(p + 4);
    uint64_t tick = DecodeFixed64(p + 8);
    if (!RecordFits(len, data.size() - pos)) {
      damage(pos, "record length " + std::to_string(len) + " runs past the end of the file");
      break;
    }
    if (checksums == RecordChecksums::kVerify &&
        crc32c::Unmask(DecodeFixed32(p)) != crc32c::Value(p + 4, 12 + size_t(len))) {
      damage(pos, "record checksum mismatch");
      break;
    }
    if (tick <= info->last_tick || tick < info->header_first_tick) {
      damage(pos, "record tick " + std::to_string(tick) + " out of order");
      info->tail_only = false;  // checksum-valid: not a torn write
      break;
    }
    if (info->records == 0) info->first_tick = tick;
    info->last_tick = tick;
    ++info->records;
    if (fn) {
      if (core::Status s = fn(tick, std::string_view(p + lf::kRecordHeaderSize, len)); !s.ok()) return s;
    }
    pos += lf::kRecordHeaderSize + len;
  }
  return core::Status::OK();
}

}  // namespace

core::Status ParseSegment(std::string_view data, const std::string& file, uint64_t number,
                          SegmentInfo* info,
                          const std::function<core::Status(uint64_t, std::string_view)>& fn) {
  return ParseSegmentAfter(data, file, number, 0, RecordChecksums::kVerify, info, fn);
}

namespace {

// Reads the bytes of the segment `f` (`file_size` bytes long) from `offset` up to
// lf::kMaxSegmentFileBytes into *out (fewer if the file is shorter by then). A ByteBuffer, not a
// string: a segment is up to 64 MiB, and a string's zero fill and page faults cost recovery more
// than reading the whole log from the page cache does (byte_buffer.h).
core::Status ReadSegmentBytes(File* f, uint64_t offset, uint64_t file_size, ByteBuffer* out) {
  const uint64_t end = std::min<uint64_t>(file_size, lf::kMaxSegmentFileBytes);
  const size_t n = offset >= end ? 0 : static_cast<size_t>(end - offset);
  if (core::Status s = out->Allocate(n, "read " + f->path()); !s.ok()) return s;
  if (n == 0) return core::Status::OK();
  size_t got = 0;
  core::Status s = f->ReadInto(offset, n, out->data(), &got);
  out->Truncate(got);
  return s;
}

// A segment file longer than the writer ever writes one is damaged at lf::kMaxSegmentFileBytes,
// unless a parse of the bytes before it (`local_end` of them in the parse's coordinates) found
// damage sooner: the bytes past it were not read. It is a tail, the writer's or not: nothing
// past it can be a record the writer acknowledged.
void NoteOversize(uint64_t file_size, uint64_t local_end, SegmentInfo* info) {
  if (file_size <= lf::kMaxSegmentFileBytes) return;
  info->size_bytes = file_size;
  if (info->damaged) return;
  info->damaged = true;
  info->damage_offset = local_end;
  info->damage = "the file is " + std::to_string(file_size) + " bytes, longer than a segment is ever written (" +
                 std::to_string(lf::kMaxSegmentFileBytes) + " at most)";
  info->tail_only = true;
}

struct LoadedSegment {
  SegmentInfo info;
  // The segment's header, then its bytes from offset 32 + skipped to the end (or to
  // lf::kMaxSegmentFileBytes): the records at or before after_tick that ReadSegmentAfter passed
  // over are not in it.
  ByteBuffer data;
  uint64_t skipped = 0;
  uint64_t file_size = 0;
  std::string path;
  bool reread = false;  // its bytes were dropped after the check (max_kept_bytes): read again
  uint64_t walked_first_tick = 0, walked_last_tick = 0;  // of the records passed over; 0: none
};

// Reads the segment at `path` into seg->data without the records a recovery from `after_tick`
// does not need: it walks the record headers (length and tick, 16 bytes each, one read per
// record) from the segment's header while their ticks are at or before after_tick, and reads
// the rest whole, up to lf::kMaxSegmentFileBytes. The walk checks only what it must to find the
// next header (the length fits the file, the ticks rise); it stops at the first header that
// fails, so that ParseSegment reports that spot from the bytes, as before. So a record at or
// before after_tick is no longer checksummed: recovery does not replay it (LevelDB and
// PostgreSQL likewise read no log from before their checkpoint). With after_tick 0, or a segment
// header that does not verify, the whole file is read.
core::Status ReadSegmentAfter(Env* env, const std::string& path, uint64_t after_tick,
                              LoadedSegment* seg) {
  seg->skipped = seg->walked_first_tick = seg->walked_last_tick = 0;
  std::unique_ptr<File> f;
  if (core::Status s = env->Open(path, OpenMode::kRead, &f); !s.ok()) return s;
  uint64_t& size = seg->file_size;
  if (core::Status s = f->Size(&size); !s.ok()) return s;
  if (after_tick == 0) return ReadSegmentBytes(f.get(), 0, size, &seg->data);
  std::string header;
  if (core::Status s = f->Read(0, lf::kSegmentHeaderSize, &header); !s.ok()) return s;
  if (header.size() < lf::kSegmentHeaderSize || !SegmentHeaderVerifies(header.data())) {
    return ReadSegmentBytes(f.get(), 0, size, &seg->data);  // ParseSegment says what is wrong
  }
  const uint64_t header_first_tick = DecodeFixed64(header.data() + 16);
  const uint64_t end = std::min<uint64_t>(size, lf::kMaxSegmentFileBytes);
  uint64_t pos = lf::kSegmentHeaderSize, last = 0;
  std::string rec;
  while (end - pos >= lf::kRecordHeaderSize) {
    if (core::Status s = f->Read(pos, lf::kRecordHeaderSize, &rec); !s.ok()) return s;
    if (rec.size() < lf::kRecordHeaderSize) break;
    const uint32_t len = DecodeFixed32(rec.data() + 4);
    const uint64_t tick = DecodeFixed64(rec.data() + 8);
    if (tick > after_tick || !RecordFits(len, end - pos) || tick <= last || tick < header_first_tick) {
      break;
    }
    if (last == 0) seg->walked_first_tick = tick;
    last = tick;
    pos += lf::kRecordHeaderSize + len;
  }
  seg->walked_last_tick = last;
  seg->skipped = pos - lf::kSegmentHeaderSize;
  // One read of the rest and the 32 bytes before it (the last skipped record's tail, or the
  // header itself), which the header then overwrites: no second copy of the rest.
  const uint64_t from = pos - lf::kSegmentHeaderSize;
  if (core::Status s = ReadSegmentBytes(f.get(), from, size, &seg->data); !s.ok()) return s;
  if (seg->data.size() < lf::kSegmentHeaderSize) {  // the file shrank since: the header alone
    if (core::Status s = seg->data.Allocate(lf::kSegmentHeaderSize, "read " + path); !s.ok()) {
      return s;
    }
  }
  std::memcpy(seg->data.data(), header.data(), lf::kSegmentHeaderSize);
  return core::Status::OK();
}

}  // namespace

core::Status CheckSegmentFile(Env* env, const std::string& dir, const std::string& name, uint64_t number,
                              SegmentInfo* info) {
  *info = SegmentInfo{};
  info->file = name;
  info->number = number;
  LoadedSegment seg;
  if (core::Status s = ReadSegmentAfter(env, JoinPath(dir, name), 0, &seg); !s.ok()) return s;
  (void)ParseSegment(seg.data.view(), name, number, info, nullptr);
  NoteOversize(seg.file_size, seg.data.size(), info);
  return core::Status::OK();
}

namespace {

// Pass 1: read, check and (if allowed) repair every segment. Lists the segments that hold ticks
// > after_tick for pass 2, with their bytes while they fit max_kept_bytes (else `reread`). Each
// segment is read into *spare's memory, which is left holding the bytes of the last one read; if
// that is the one segment due, it keeps them after all: pass 2 need not read it again.
core::Status ValidateAll(Env* env, const std::string& dir, const LogScanOptions& options,
                         std::vector<LoadedSegment>* loaded, LogScanReport* report,
                         ByteBuffer* spare) {
  bool spare_holds_last = false;  // *spare holds loaded->back()'s bytes
  uint64_t kept = 0;  // bytes of `loaded` kept for pass 2
  std::vector<std::string> names;
  if (core::Status s = env->ListDir(dir, &names); !s.ok()) return s;
  std::map<uint64_t, std::string> by_number;
  for (const std::string& n : names) {
    uint64_t number;
    if (lf::ParseSegmentFileName(n, &number)) by_number[number] = n;
  }
  uint64_t prev_last = 0;
  std::string prev_file;
  uint64_t expect = options.after_tick + 1;  // ticks after the checkpoint must be consecutive
  for (auto it = by_number.begin(); it != by_number.end(); ++it) {
    const bool newest = std::next(it) == by_number.end();
    const std::string path = JoinPath(dir, it->second);
    LoadedSegment seg;
    seg.data = std::move(*spare);
    spare_holds_last = false;
    if (core::Status s = ReadSegmentAfter(env, path, options.after_tick, &seg); !s.ok()) return s;
    core::Status gap = ParseSegmentAfter(seg.data.view(), it->second, it->first,
                                         seg.walked_last_tick, RecordChecksums::kVerify, &seg.info,
                                         [&](uint64_t tick, std::string_view) -> core::Status {
      if (tick <= options.after_tick) return core::Status::OK();
      if (tick != expect) {
        return core::Status::Corruption(it->second + ": the log has no record of tick " +
                                        std::to_string(expect) + " (the next one is tick " +
                                        std::to_string(tick) + ")" + Hint(dir));
      }
      ++expect;
      return core::Status::OK();
    });
    if (!gap.ok()) return gap;
    SegmentInfo& info = seg.info;
    NoteOversize(seg.file_size, seg.data.size(), &info);
    if (info.damaged) {
      // Offsets in seg.data past its header are file offsets less the records passed over.
      const uint64_t local = info.damage_offset;
      if (local >= lf::kSegmentHeaderSize) info.damage_offset += seg.skipped;
      if (!newest || !info.tail_only) {
        return core::Status::Corruption(it->second + " offset " + std::to_string(info.damage_offset) +
                                        ": " + info.damage + Hint(dir));
      }
      report->truncated = true;
      report->truncated_file = it->second;
      report->truncated_offset = info.damage_offset;
      report->truncated_bytes = seg.file_size - info.damage_offset;
      if (options.repair_tail) {
        std::unique_ptr<File> f;
        if (core::Status s = env->Open(path, OpenMode::kReadWrite, &f); !s.ok()) return s;
        if (core::Status s = f->Truncate(info.damage_offset); !s.ok()) return s;
        if (core::Status s = f->Sync(); !s.ok()) return s;
      }
      seg.data.Truncate(local);  // gives back the memory past it (up to 1 GiB of an oversize file)
    }
    // The segment's first record may be one the walk passed over (info.last_tick is then at
    // least its last).
    const bool any_record = info.records > 0 || seg.walked_first_tick > 0;
    const uint64_t first_tick = seg.walked_first_tick > 0 ? seg.walked_first_tick : info.first_tick;
    if (any_record) {
      if (first_tick <= prev_last) {
        return core::Status::Corruption(it->second + ": first tick " + std::to_string(first_tick) +
                                        " is not after the last tick " + std::to_string(prev_last) +
                                        " of " + prev_file + Hint(dir));
      }
      prev_last = info.last_tick;
      prev_file = it->second;
      report->last_tick = info.last_tick;
    }
    if (info.records == 0 || info.last_tick <= options.after_tick) {  // not due
      *spare = std::move(seg.data);
      continue;
    }
    if (kept + seg.data.size() <= options.max_kept_bytes) {
      kept += seg.data.size();
    } else {
      *spare = std::move(seg.data);  // the bytes stay until the next read overwrites them
      spare_holds_last = true;
      seg.reread = true;
    }
    seg.path = path;
    loaded->push_back(std::move(seg));
  }
  if (loaded->size() == 1 && spare_holds_last) {
    (*loaded)[0].data = std::move(*spare);
    (*loaded)[0].reread = false;
  }
  return core::Status::OK();
}

// After delivering a segment: its memory becomes the spare if that is the larger, so the scan
// holds at most one buffer it does not need.
void Recycle(ByteBuffer* used, ByteBuffer* spare) {
  if (used->capacity() > spare->capacity()) *spare = std::move(*used);
  used->Release();
}

}  // namespace

core::Status ScanLog(Env* env, const std::string& dir, const LogScanOptions& options,
                     const RecordFn& fn, LogScanReport* report) {
  *report = LogScanReport{};
  std::vector<LoadedSegment> loaded;
  ByteBuffer spare;
  if (core::Status s = ValidateAll(env, dir, options, &loaded, report, &spare); !s.ok()) return s;
  // Pass 2: deliver ticks after_tick+1, after_tick+2, ... (pass 1 proved there is no gap, and
  // checksummed these very bytes, so they are not checksummed again). A segment whose bytes were
  // not kept is read and checksummed again, and must hold what pass 1 found: the same records,
  // up to the same damage.
  for (LoadedSegment& seg : loaded) {
    const RecordChecksums checksums = seg.reread ? RecordChecksums::kVerify : RecordChecksums::kTrusted;
    if (seg.reread) {
      LoadedSegment again;
      again.data = std::move(spare);
      if (core::Status s = ReadSegmentAfter(env, seg.path, options.after_tick, &again); !s.ok()) return s;
      seg.data = std::move(again.data);
      seg.walked_last_tick = again.walked_last_tick;
    }
    SegmentInfo scratch;
    core::Status s = ParseSegmentAfter(seg.data.view(), seg.info.file, seg.info.number,
                                       seg.walked_last_tick, checksums, &scratch,
                                       [&](uint64_t tick, std::string_view payload) -> core::Status {
      if (tick <= options.after_tick || tick > seg.info.last_tick) return core::Status::OK();
      return fn ? fn(tick, payload) : core::Status::OK();
    });
    if (!s.ok()) return s;
    if (scratch.last_tick < seg.info.last_tick) {
      return core::Status::Corruption(seg.info.file + ": changed while recovery read it (records up to tick " +
                                      std::to_string(seg.info.last_tick) + " when checked, " +
                                      std::to_string(scratch.last_tick) + " when read again)" + Hint(dir));
    }
    Recycle(&seg.data, &spare);  // delivered: its bytes are not needed again
  }
  return core::Status::OK();
}

}  // namespace recovery
