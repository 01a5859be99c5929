// Checkpointer: the framework of Vaz Salles et al. (Copy-To-Memory at the boundary, Handle-Update
// in the hook, asynchronous writes to the double backup) with three instantiations:
//   naive    - boundary: memcpy the whole state to snapshot_; writer: full image from snapshot_.
//   cou      - boundary: take backup b's dirty bits as the write set and mark those objects
//              kPending; hook: the first write to a kPending object saves its old value to
//              shadow_; writer: per object, either latches it (kPending -> kCopying) and copies the
//              live value, or takes the saved one. Never a mix: the latch is per object.
//   pingpong - hook: set the object's bit for this tick; boundary: copy this tick's written objects
//              into the ping copy; at a checkpoint start swap ping/pong (no lock, no bulk copy);
//              writer: merge pong into its private consistent image_, then write the objects
//              backup b has not seen.
#include "recovery/checkpointer.h"

#include <algorithm>
#include <bit>
#include <cstring>

#include "server/core/check.h"
#include "server/core/steady_clock.h"

namespace recovery {

namespace bf = backup_format;
using Clock = std::chrono::steady_clock;

namespace {

constexpr uint64_t kStagingBytes = 1u << 20;

}  // namespace

core::Status ParseAlgorithm(std::string_view name, Algorithm* out) {
  if (name == "none") *out = Algorithm::kNone;
  else if (name == "naive") *out = Algorithm::kNaive;
  else if (name == "cou") *out = Algorithm::kCou;
  else if (name == "pingpong") *out = Algorithm::kPingPong;
  else return core::Status::InvalidArgument("checkpoint algorithm must be none, naive, cou or pingpong, not '" +
                                            std::string(name) + "'");
  return core::Status::OK();
}

const char* AlgorithmName(Algorithm a) {
  switch (a) {
    case Algorithm::kNone: return "none";
    case Algorithm::kNaive: return "naive";
    case Algorithm::kCou: return "cou";
    case Algorithm::kPingPong: return "pingpong";
  }
  return "?";
}

Checkpointer::Checkpointer(const CheckpointOptions& options, uint8_t* base)
    : options_(options), algorithm_(options.algorithm), base_(base), n_(options.object_count),
      size_(options.object_size), words_((options.object_count + 63) / 64),
      backup_writer_(options.env, options.dir, options.object_count, options.object_size) {}

core::Status Checkpointer::Open(const CheckpointOptions& options, uint8_t* base, uint64_t tick,
                                std::unique_ptr<Checkpointer>* out) {
  if (options.object_count == 0 || options.object_count > UINT32_MAX || options.object_size == 0) {
    return core::Status::InvalidArgument("checkpointer: need 1..2^32-1 objects of non-zero size");
  }
  if (base == nullptr) return core::Status::InvalidArgument("checkpointer: no state memory");
  std::unique_ptr<Checkpointer> c(new Checkpointer(options, base));
  (void)tick;  // the state is consistent as of tick; the first boundary after it checkpoints
  if (c->algorithm_ == Algorithm::kNone) {
    *out = std::move(c);
    return core::Status::OK();
  }
  // Which backups are valid now? The first checkpoint must not overwrite the only valid one.
  uint64_t seq[2] = {0, 0};
  c->mu_.Lock();  // no writer thread yet: for the analysis
  for (int b = 0; b < 2; ++b) {
    bf::Header h;
    core::Status s = bf::LoadBackup(options.env, JoinPath(options.dir, bf::BackupFileName(b)),
                                    options.object_count, options.object_size, nullptr, &h);
    if (s.code() == core::Status::Code::kInvalidArgument) {  // other geometry: refuse
      c->mu_.Unlock();
      return s;
    }
    if (s.ok()) {
      c->committed_valid_[b] = true;
      c->committed_tick_[b] = h.tick;
      seq[b] = h.sequence;
    }
  }
  if (c->committed_valid_[0] && c->committed_valid_[1]) c->next_backup_ = seq[0] <= seq[1] ? 0 : 1;
  else c->next_backup_ = c->committed_valid_[0] ? 1 : 0;
  c->mu_.Unlock();
  c->sequence_ = std::max(seq[0], seq[1]);
  const size_t words = c->words_;
  const size_t bytes = static_cast<size_t>(c->n_) * c->size_;
  switch (c->algorithm_) {
    case Algorithm::kNone: break;
    case Algorithm::kNaive: c->snapshot_.resize(bytes); break;
    case Algorithm::kCou:
      for (auto& d : c->dirty_) {
        d.reset(new std::atomic<uint64_t>[words]);
        for (size_t w = 0; w < words; ++w) d[w].store(~uint64_t{0}, std::memory_order_relaxed);
      }
      c->state_.reset(new std::atomic<uint8_t>[c->n_]);
      for (uint64_t i = 0; i < c->n_; ++i) c->state_[i].store(kIdle, std::memory_order_relaxed);
      c->shadow_.resize(bytes);
      c->staging_.resize(std::max<uint64_t>(kStagingBytes / c->size_, 1) * c->size_);
      break;
    case Algorithm::kPingPong:
      c->tick_dirty_.reset(new std::atomic<uint64_t>[words]);
      for (size_t w = 0; w < words; ++w) c->tick_dirty_[w].store(0, std::memory_order_relaxed);
      for (int k = 0; k < 2; ++k) {
        c->copies_[k].resize(bytes);
        c->copy_bits_[k].assign(words, 0);
        c->need_[k].assign(words, ~uint64_t{0});
      }
      c->image_.assign(base, base + bytes);
      break;
  }
  c->writer_ = std::thread([p = c.get()] { p->WriterMain(); });
  *out = std::move(c);
  return core::Status::OK();
}

Checkpointer::~Checkpointer() { (void)Close(); }

void Checkpointer::OnUpdateCou(uint32_t object) {
  MarkBit(dirty_[0].get(), object);
  MarkBit(dirty_[1].get(), object);
  std::atomic<uint8_t>& st = state_[object];
  if (st.load(std::memory_order_acquire) == kIdle) return;
  uint8_t expected = kPending;
  if (st.compare_exchange_strong(expected, kSaving, std::memory_order_acq_rel)) {
    std::memcpy(&shadow_[uint64_t{object} * size_], base_ + uint64_t{object} * size_, size_);
    st.store(kSaved, std::memory_order_release);
    saved_on_update_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  // The writer is copying the live value right now: the write must wait until it is done.
  while (st.load(std::memory_order_acquire) == kCopying) std::this_thread::yield();
}

void Checkpointer::ReadObjectForWriter(uint64_t i, char* dst) {
  std::atomic<uint8_t>& st = state_[i];
  uint8_t expected = kPending;
  if (st.compare_exchange_strong(expected, kCopying, std::memory_order_acq_rel)) {
    std::memcpy(dst, base_ + i * size_, size_);  // no write to i can start while we hold it
    st.store(kIdle, std::memory_order_release);
    return;
  }
  while (expected == kSaving) {
    std::this_thread::yield();
    expected = st.load(std::memory_order_acquire);
  }
  AS_CHECK(expected == kSaved, "cou object in the write set neither pending nor saved");
  std::memcpy(dst, &shadow_[i * size_], size_);
  st.store(kIdle, std::memory_order_release);
}

void Checkpointer::CopyTickDirtyToPing() {
  std::vector<uint64_t>& bits = copy_bits_[ping_];
  uint8_t* copy = copies_[ping_].data();
  for (size_t w = 0; w < words_; ++w) {
    uint64_t word = tick_dirty_[w].exchange(0, std::memory_order_relaxed);
    bits[w] |= word;
    while (word != 0) {
      const uint64_t i = w * 64 + static_cast<uint64_t>(std::countr_zero(word));
      word &= word - 1;
      std::memcpy(copy + i * size_, base_ + i * size_, size_);
    }
  }
}

Checkpointer::Job Checkpointer::MakeJob(uint64_t tick) {
  Job job{tick, next_backup_, !full_done_[next_backup_], ++sequence_, -1, {}, Clock::now()};
  if (algorithm_ == Algorithm::kNaive) {
    std::memcpy(snapshot_.data(), base_, snapshot_.size());
    job.full = true;  // Naive-Snapshot writes every object
  } else if (algorithm_ == Algorithm::kCou) {
    job.objects.resize(words_);
    std::atomic<uint64_t>* dirty = dirty_[job.backup].get();
    for (size_t w = 0; w < words_; ++w) {
      uint64_t word = dirty[w].exchange(0, std::memory_order_relaxed);
      if (job.full) word = ~uint64_t{0};
      if (w == words_ - 1 && n_ % 64 != 0) word &= (uint64_t{1} << (n_ % 64)) - 1;
      job.objects[w] = word;
      for (uint64_t bitsleft = word; bitsleft != 0; bitsleft &= bitsleft - 1) {
        state_[w * 64 + static_cast<uint64_t>(std::countr_zero(bitsleft))].store(
            kPending, std::memory_order_relaxed);
      }
    }
  } else if (algorithm_ == Algorithm::kPingPong) {
    job.pong = ping_;
    ping_ ^= 1;  // the pointer swap: new writes land in the other copy
  }
  full_done_[job.backup] = true;
  next_backup_ = 1 - job.backup;
  return job;
}

core::Status Checkpointer::TickBoundary(uint64_t tick) {
  if (algorithm_ == Algorithm::kNone) return core::Status::OK();
  const Clock::time_point t0 = Clock::now();
  if (algorithm_ == Algorithm::kPingPong) CopyTickDirtyToPing();
  bool start;
  {
    core::MutexLock lock(&mu_);
    start = error_.ok() && !busy_ &&
            (options_.interval_ms <= 0 || last_start_ == Clock::time_point{} ||
             t0 - last_start_ >= std::chrono::milliseconds(options_.interval_ms));
  }
  if (start) {
    last_start_ = t0;
    auto job = std::make_unique<Job>(MakeJob(tick));
    core::MutexLock lock(&mu_);
    job_ = std::move(job);
    busy_ = true;
    cv_.SignalAll();
  }
  const double pause_ms = core::MsSince(t0);
  core::MutexLock lock(&mu_);
  ++stats_.boundaries;
  stats_.pause_total_ms += pause_ms;
  stats_.pause_max_ms = std::max(stats_.pause_max_ms, pause_ms);
  return error_;
}

void Checkpointer::WriterMain() {
  for (;;) {
    std::unique_ptr<Job> job;
    {
      core::MutexLock lock(&mu_);
      while (!stop_ && job_ == nullptr) cv_.Wait(&mu_);
      if (job_ == nullptr) return;
      job = std::move(job_);
    }
    core::Status s = RunJob(job.get());
    core::MutexLock lock(&mu_);
    if (!s.ok() && error_.ok()) error_ = s;
    busy_ = false;
    cv_.SignalAll();
  }
}

core::Status Checkpointer::RunJob(Job* job) {
  const int b = job->backup;
  std::vector<uint64_t> all;
  const std::vector<uint64_t>* set = &job->objects;
  if (algorithm_ == Algorithm::kPingPong) {
    // Merge: image_ becomes the state as of job->tick; both backups now need these objects.
    std::vector<uint64_t>& bits = copy_bits_[job->pong];
    const uint8_t* copy = copies_[job->pong].data();
    for (size_t w = 0; w < words_; ++w) {
      for (uint64_t word = bits[w]; word != 0; word &= word - 1) {
        const uint64_t i = w * 64 + static_cast<uint64_t>(std::countr_zero(word));
        std::memcpy(&image_[i * size_], copy + i * size_, size_);
      }
      need_[0][w] |= bits[w];
      need_[1][w] |= bits[w];
      bits[w] = 0;
    }
    set = &need_[b];
  }
  if (job->full || algorithm_ == Algorithm::kNaive) {
    all.assign(words_, ~uint64_t{0});
    if (n_ % 64 != 0) all.back() = (uint64_t{1} << (n_ % 64)) - 1;
    if (algorithm_ != Algorithm::kCou) set = &all;
  }
  core::Status s = backup_writer_.Begin(b, job->full);
  s = WriteSet(job, *set, s);
  if (s.ok()) s = backup_writer_.Commit(job->tick, job->sequence);
  if (!s.ok()) {
    backup_writer_.Abort();
    core::MutexLock lock(&mu_);
    committed_valid_[b] = false;
    const std::string what = "checkpoint of tick " + std::to_string(job->tick) + " into " +
                             bf::BackupFileName(b) + ": " + s.message();
    return s.code() == core::Status::Code::kNoSpace ? core::Status::NoSpace(what)
                                                    : core::Status::IoError(what);
  }
  if (algorithm_ == Algorithm::kPingPong) std::fill(need_[b].begin(), need_[b].end(), 0);
  uint64_t oldest;
  {
    core::MutexLock lock(&mu_);
    committed_valid_[b] = true;
    committed_tick_[b] = job->tick;
    oldest = committed_valid_[1 - b] ? std::min(committed_tick_[0], committed_tick_[1]) : 0;
    const double ms = core::MsSince(job->start);
    ++stats_.checkpoints;
    stats_.checkpoint_total_ms += ms;
    stats_.checkpoint_max_ms = std::max(stats_.checkpoint_max_ms, ms);
    stats_.bytes_written = backup_writer_.bytes_written();
    stats_.last_tick = job->tick;
  }
  if (options_.on_commit) return options_.on_commit(job->tick, oldest);
  return core::Status::OK();
}

core::Status Checkpointer::WriteSet(Job* job, const std::vector<uint64_t>& set, core::Status s) {
  (void)job;
  const bool cou = algorithm_ == Algorithm::kCou;
  const uint8_t* source = algorithm_ == Algorithm::kNaive ? snapshot_.data() : image_.data();
  const uint64_t chunk = cou ? staging_.size() / size_ : std::max<uint64_t>(kStagingBytes / size_, 1);
  uint64_t written = 0;
  uint64_t i = 0;
  while (i < n_) {
    if ((set[i / 64] >> (i % 64) & 1) == 0) {
      ++i;
      continue;
    }
    uint64_t end = i;  // run of consecutive objects [i, end), capped at one chunk
    while (end < n_ && end - i < chunk && (set[end / 64] >> (end % 64) & 1)) ++end;
    const char* src = reinterpret_cast<const char*>(source + i * size_);
    if (cou) {
      // Every object of the set goes through the latch, even after an error, so none is left
      // pending for the hooks.
      for (uint64_t k = i; k < end; ++k) ReadObjectForWriter(k, &staging_[(k - i) * size_]);
      src = staging_.data();
    }
    if (s.ok()) s = backup_writer_.WriteObjects(i, src, end - i);
    written += end - i;
    i = end;
  }
  core::MutexLock lock(&mu_);
  stats_.objects_written += written;
  return s;
}

core::Status Checkpointer::WaitIdle() {
  core::MutexLock lock(&mu_);
  while (busy_) cv_.Wait(&mu_);
  return error_;
}

core::Status Checkpointer::Close() {
  if (closed_) return status();
  closed_ = true;
  {
    core::MutexLock lock(&mu_);
    while (busy_) cv_.Wait(&mu_);
    stop_ = true;
    cv_.SignalAll();
  }
  if (writer_.joinable()) writer_.join();
  return status();
}

core::Status Checkpointer::status() const {
  core::MutexLock lock(&mu_);
  return error_;
}

CheckpointStats Checkpointer::stats() const {
  core::MutexLock lock(&mu_);
  CheckpointStats s = stats_;
  s.saved_on_update = saved_on_update_.load(std::memory_order_relaxed);
  return s;
}

}  // namespace recovery
