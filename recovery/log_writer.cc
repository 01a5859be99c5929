// LogWriter: Append() frames a record and queues it; the log thread, or in sync mode a caller
// of WaitDurable that finds the queue waiting (the leader), takes the whole queue as one batch,
// writes it (rotating segments by size) and syncs once: group commit. Errors are sticky.
#include "recovery/log_writer.h"

#include <chrono>

#include "recovery/coding.h"
#include "recovery/crc32c.h"
#include "recovery/log_format.h"
#include "server/core/check.h"
#include "server/core/steady_clock.h"
#include "server/core/thread_name.h"

namespace recovery {

namespace lf = log_format;

core::Status ParseSyncMode(std::string_view name, SyncMode* out) {
  if (name == "sync") *out = SyncMode::kSync;
  else if (name == "async") *out = SyncMode::kAsync;
  else if (name == "off") *out = SyncMode::kOff;
  else return core::Status::InvalidArgument("durability must be sync, async or off, not '" +
                                            std::string(name) + "'");
  return core::Status::OK();
}

const char* SyncModeName(SyncMode d) {
  switch (d) {
    case SyncMode::kSync: return "sync";
    case SyncMode::kAsync: return "async";
    case SyncMode::kOff: return "off";
  }
  return "?";
}

LogWriter::LogWriter(const LogOptions& options) : options_(options) {}

core::Status LogWriter::Open(const LogOptions& options, std::unique_ptr<LogWriter>* out) {
  if (options.dir.empty()) return core::Status::InvalidArgument("log: no directory given");
  if (options.next_tick == 0) return core::Status::InvalidArgument("log: ticks start at 1");
  if (options.segment_bytes > lf::kMaxSegmentBytes) {
    return core::Status::InvalidArgument("log: segment_bytes " + std::to_string(options.segment_bytes) +
                                         " is more than " + std::to_string(lf::kMaxSegmentBytes));
  }
  std::unique_ptr<LogWriter> log(new LogWriter(options));
  std::vector<std::string> names;
  if (core::Status s = options.env->ListDir(options.dir, &names); !s.ok()) return s;
  uint64_t max_number = 0;
  for (const std::string& name : names) {
    uint64_t number = 0;
    if (!lf::ParseSegmentFileName(name, &number)) continue;
    max_number = std::max(max_number, number);
    Segment seg{0, false};
    std::unique_ptr<File> f;
    std::string header;
    if (options.env->Open(JoinPath(options.dir, name), OpenMode::kRead, &f).ok() &&
        f->Read(0, lf::kSegmentHeaderSize, &header).ok() && header.size() == lf::kSegmentHeaderSize &&
        DecodeFixed32(header.data()) == lf::kSegmentMagic &&
        crc32c::Unmask(DecodeFixed32(header.data() + 28)) == crc32c::Value(header.data(), 28)) {
      seg = {DecodeFixed64(header.data() + 16), true};
    }
    core::MutexLock lock(&log->mu_);  // no other thread yet: for the analysis
    log->segments_[number] = seg;
  }
  {
    core::MutexLock lock(&log->mu_);
    log->last_appended_ = options.next_tick - 1;
    log->durable_tick_ = options.next_tick - 1;
  }
  if (core::Status s = log->OpenSegment(max_number + 1, options.next_tick); !s.ok()) return s;
  log->thread_ = std::thread([l = log.get()] {
    core::NameThisThread("as-log");
    l->ThreadMain();
  });
  *out = std::move(log);
  return core::Status::OK();
}

LogWriter::~LogWriter() { (void)Close(); }

core::Status LogWriter::OpenSegment(uint64_t number, uint64_t first_tick) {
  const std::string path = JoinPath(options_.dir, lf::SegmentFileName(number));
  std::unique_ptr<File> f;
  if (core::Status s = options_.env->Open(path, OpenMode::kCreateTrunc, &f); !s.ok()) return s;
  char header[lf::kSegmentHeaderSize] = {};
  EncodeFixed32(header, lf::kSegmentMagic);
  EncodeFixed32(header + 4, lf::kVersion);
  EncodeFixed64(header + 8, number);
  EncodeFixed64(header + 16, first_tick);
  EncodeFixed32(header + 28, crc32c::Mask(crc32c::Value(header, 28)));
  if (core::Status s = f->Append(std::string_view(header, sizeof(header))); !s.ok()) return s;
  if (options_.sync_mode != SyncMode::kOff) {
    // The file and its directory entry must be durable before records in it are acknowledged.
    if (core::Status s = f->Sync(); !s.ok()) return s;
    if (core::Status s = options_.env->SyncDir(options_.dir); !s.ok()) return s;
  }
  active_ = std::move(f);
  active_size_ = lf::kSegmentHeaderSize;
  core::MutexLock lock(&mu_);
  segments_[number] = {first_tick, true};
  active_number_ = number;
  ++stats_.segments_created;
  return core::Status::OK();
}

core::Status LogWriter::Append(uint64_t tick, std::string_view payload) {
  if (payload.size() > lf::kMaxPayload) {
    return core::Status::InvalidArgument("log: payload of tick " + std::to_string(tick) +
                                         " is larger than the 64 MiB limit");
  }
  std::string rec(lf::kRecordHeaderSize, '\0');
  EncodeFixed32(rec.data() + 4, static_cast<uint32_t>(payload.size()));
  EncodeFixed64(rec.data() + 8, tick);
  rec.append(payload);
  uint32_t crc = crc32c::Value(rec.data() + 4, rec.size() - 4);
  EncodeFixed32(rec.data(), crc32c::Mask(crc));
  core::MutexLock lock(&mu_);
  if (!error_.ok()) return error_;
  if (closing_) return core::Status::Refused("log: append after Close");
  if (tick != last_appended_ + 1) {
    return core::Status::InvalidArgument("log: tick " + std::to_string(tick) + " appended after " +
                                         std::to_string(last_appended_) + " (ticks must be consecutive)");
  }
  last_appended_ = tick;
  queue_.push_back({tick, std::move(rec)});
  work_cv_.Signal();
  return core::Status::OK();
}

uint64_t LogWriter::durable_tick() const {
  core::MutexLock lock(&mu_);
  return durable_tick_;
}

core::Status LogWriter::WaitDurable(uint64_t tick) {
  core::MutexLock lock(&mu_);
  if (tick > last_appended_) {
    return core::Status::InvalidArgument("log: WaitDurable(" + std::to_string(tick) +
                                         ") before that tick was appended");
  }
  for (;;) {
    if (durable_tick_ >= tick) return core::Status::OK();
    if (!error_.ok()) return error_;
    // Leader in sync mode: the tick is queued and nobody is writing, so write and sync it here
    // rather than wait for the log thread to be scheduled (on a busy machine that wait is
    // longer than the fdatasync).
    if (options_.sync_mode == SyncMode::kSync && !writing_ && !queue_.empty()) {
      if (!WriteQueued()) return error_;
      continue;
    }
    durable_cv_.Wait(&mu_);
  }
}

core::Status LogWriter::Flush() {
  core::MutexLock lock(&mu_);
  uint64_t target = last_appended_;
  flush_requested_ = std::max(flush_requested_, target);
  work_cv_.Signal();
  while (!(durable_tick_ >= target || !error_.ok())) durable_cv_.Wait(&mu_);
  return durable_tick_ >= target ? core::Status::OK() : error_;
}

core::Status LogWriter::status() const {
  core::MutexLock lock(&mu_);
  return error_;
}

LogWriter::Stats LogWriter::stats() const {
  core::MutexLock lock(&mu_);
  return stats_;
}

void LogWriter::ThreadMain() {
  for (;;) {
    core::MutexLock lock(&mu_);
    if (options_.sync_mode == SyncMode::kAsync) {
      // Until asked to, or every async_flush_ms: then whatever is queued is written below.
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(options_.async_flush_ms);
      while (!(closing_ || (flush_requested_ > durable_tick_ && !writing_))) {
        if (!work_cv_.WaitUntil(&mu_, deadline)) break;
      }
    } else {
      while (!(closing_ || (!queue_.empty() && !writing_))) work_cv_.Wait(&mu_);
    }
    if (!error_.ok()) return;
    if (closing_) {
      while (writing_) work_cv_.Wait(&mu_);  // a leader may still be writing
      if (queue_.empty() || !error_.ok()) return;
    }
    if (writing_ || queue_.empty()) continue;
    if (!WriteQueued()) return;
  }
}

bool LogWriter::WriteQueued() {
  writing_ = true;
  batch_.clear();
  batch_.swap(queue_);  // queue_ gets the previous batch's (cleared) capacity
  mu_.Unlock();
  const core::Status s = WriteBatch(&batch_, options_.sync_mode != SyncMode::kOff);
  mu_.Lock();
  writing_ = false;
  work_cv_.SignalAll();
  if (!s.ok()) {
    if (error_.ok()) error_ = s;
    durable_cv_.SignalAll();
    return false;
  }
  durable_tick_ = batch_.back().tick;
  ++stats_.batches;
  durable_cv_.SignalAll();
  return true;
}

core::Status LogWriter::WriteBatch(std::vector<Pending>* batch, bool sync) {
  std::string& buf = write_buf_;
  buf.clear();
  uint64_t records = 0, bytes = 0, syncs = 0, sync_ns = 0;
  auto flush = [&]() -> core::Status {
    if (buf.empty()) return core::Status::OK();
    // At the size this thread keeps: Append would ask the file system for it first.
    if (core::Status s = active_->PWrite(active_size_, buf); !s.ok()) return s;
    active_size_ += buf.size();
    buf.clear();
    if (sync) {
      ++syncs;
      const uint64_t start_ns = core::SteadyNs();
      core::Status s = active_->DataSync();
      sync_ns += core::SteadyNs() - start_ns;
      return s;
    }
    return core::Status::OK();
  };
  for (Pending& p : *batch) {
    bool full = active_size_ + buf.size() + p.bytes.size() > options_.segment_bytes;
    if (full && active_size_ + buf.size() > lf::kSegmentHeaderSize) {
      if (core::Status s = flush(); !s.ok()) return s;
      uint64_t number;
      {
        core::MutexLock lock(&mu_);
        number = active_number_ + 1;
      }
      if (core::Status s = OpenSegment(number, p.tick); !s.ok()) return s;
    }
    buf += p.bytes;
    ++records;
    bytes += p.bytes.size();
  }
  core::Status s = flush();
  core::MutexLock lock(&mu_);
  stats_.records += records;
  stats_.bytes += bytes;
  stats_.syncs += syncs;
  stats_.sync_ns += sync_ns;
  return s;
}

core::Status LogWriter::RemoveObsoleteSegments(uint64_t oldest_checkpoint_tick) {
  std::vector<uint64_t> doomed;
  {
    core::MutexLock lock(&mu_);
    for (auto it = segments_.begin(); it != segments_.end(); ++it) {
      auto next = std::next(it);
      if (next == segments_.end() || it->first == active_number_) break;
      // Every record of segment k has a tick below the first tick of segment k+1.
      if (!next->second.known || next->second.first_tick > oldest_checkpoint_tick + 1) break;
      doomed.push_back(it->first);
    }
    for (uint64_t n : doomed) segments_.erase(n);
    stats_.segments_deleted += doomed.size();
  }
  for (uint64_t n : doomed) {
    core::Status s = options_.env->Unlink(JoinPath(options_.dir, lf::SegmentFileName(n)));
    if (!s.ok() && s.code() != core::Status::Code::kNotFound) return s;
  }
  if (!doomed.empty() && options_.sync_mode != SyncMode::kOff) {
    return options_.env->SyncDir(options_.dir);
  }
  return core::Status::OK();
}

core::Status LogWriter::Close() {
  if (closed_) return status();
  closed_ = true;
  {
    core::MutexLock lock(&mu_);
    closing_ = true;
    work_cv_.SignalAll();
  }
  if (thread_.joinable()) thread_.join();
  core::MutexLock lock(&mu_);
  if (error_.ok() && durable_tick_ < last_appended_) {
    error_ = core::Status::IoError("log: closed with unwritten records");
  }
  durable_cv_.SignalAll();
  return error_;
}

}  // namespace recovery
