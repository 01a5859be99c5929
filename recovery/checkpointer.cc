// Checkpointer: the framework of Vaz Salles et al. (Copy-To-Memory at the boundary, Handle-Update
// in the hook, asynchronous writes to the double backup) with three instantiations:
//   naive    - boundary: memcpy the whole state to snapshot_; writer: full image from snapshot_.
//   cou      - boundary: the write set = objects changed in the last two periods (what backup b
//              has not seen), small gaps filled; all of it pending. Hook: the first write to a
//              pending object saves its old value to shadow_. Writer: claims 64 objects at a
//              time (one atomic exchange), copies the claimed live values, takes the saved ones
//              from shadow_, publishes its progress; a write to a claimed object waits for it.
//   pingpong - hook (after the write): copy the written cells into the ping copy and flag them;
//              boundary: at a checkpoint start swap ping/pong, nothing else (no lock, no copy);
//              writer: merge pong's flagged cells into its private consistent image_, clear the
//              flags, then write the objects backup b has not seen.
#include "recovery/checkpointer.h"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <optional>

#include "server/core/check.h"
#include "server/core/steady_clock.h"
#include "server/core/thread_name.h"

namespace recovery {

namespace bf = backup_format;
using Clock = std::chrono::steady_clock;

namespace {

constexpr uint64_t kStagingBytes = 1u << 20;
// How often an idle writer looks for a job. TickBoundary hands a job over with one atomic store
// and wakes no one: a wake-up is a system call, and on a busy machine the tick thread was
// descheduled inside it for milliseconds (docs/recovery-measurements.md, "Boundary pauses"). A
// job therefore waits up to this long before the writer starts it.
constexpr auto kJobPollPeriod = std::chrono::milliseconds(1);
// Clear objects between two runs of the write set that are written anyway when the gap is at most
// this long: one write call costs more than copying and checksumming a few objects.
constexpr uint64_t kMaxGapObjects = 8;

// First index >= i whose bit equals `value`, or n.
uint64_t NextWithBit(const std::vector<uint64_t>& set, uint64_t n, uint64_t i, bool value) {
  while (i < n) {
    uint64_t word = set[i / 64];
    if (!value) word = ~word;
    word &= ~uint64_t{0} << (i % 64);
    if (word != 0) return std::min(n, (i & ~uint64_t{63}) + static_cast<uint64_t>(std::countr_zero(word)));
    i = (i & ~uint64_t{63}) + 64;
  }
  return n;
}

// Sets bits [from, to) of `set`.
void SetBits(std::vector<uint64_t>* set, uint64_t from, uint64_t to) {
  for (uint64_t i = from; i < to;) {
    const uint64_t in_word = std::min<uint64_t>(64 - i % 64, to - i);
    const uint64_t mask = in_word == 64 ? ~uint64_t{0} : ((uint64_t{1} << in_word) - 1) << (i % 64);
    (*set)[i / 64] |= mask;
    i += in_word;
  }
}

// Adds every gap of at most kMaxGapObjects between two runs of `set` to the set. One pass over
// the runs with bit scans (it runs at the cou boundary: tens of microseconds at 16k runs).
void FillSmallGaps(std::vector<uint64_t>* set, uint64_t n) {
  uint64_t run_end = UINT64_MAX;  // end of the previous run (UINT64_MAX: none yet)
  const size_t words = (n + 63) / 64;
  for (size_t w = 0; w < words; ++w) {
    uint64_t x = (*set)[w];
    while (x != 0) {
      const uint64_t tz = static_cast<uint64_t>(std::countr_zero(x));
      const uint64_t start = w * 64 + tz;
      if (run_end != UINT64_MAX && start > run_end && start - run_end <= kMaxGapObjects) {
        SetBits(set, run_end, start);
      }
      const uint64_t above = ~x & (~uint64_t{0} << tz);  // clear bits from the run's start up
      if (above == 0) {
        run_end = w * 64 + 64;
        break;
      }
      const uint64_t e = static_cast<uint64_t>(std::countr_zero(above));
      run_end = w * 64 + e;
      x &= ~uint64_t{0} << e;
    }
  }
}

// Eight 0/1 bytes to eight bits (byte k -> bit k): the multiplier gathers byte k's low bit into
// bit 56 + k, and no two partial products meet.
uint64_t PackBytes(const uint8_t* bytes) {
  uint64_t x;
  std::memcpy(&x, bytes, 8);
  return (x * 0x0102040810204080ull) >> 56;
}

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
      c->changed_.assign(words * 64, 0);  // whole words, so the boundary packs 64 at a time
      c->changed_before_.assign(words, 0);
      c->in_set_.assign(words, 0);
      c->pending_.reset(new std::atomic<uint64_t>[words]);
      c->saved_.reset(new std::atomic<uint64_t>[words]);
      for (size_t w = 0; w < words; ++w) {
        c->pending_[w].store(0, std::memory_order_relaxed);
        c->saved_[w].store(0, std::memory_order_relaxed);
      }
      c->shadow_.resize(bytes);
      c->staging_.resize(std::max<uint64_t>(kStagingBytes / c->size_, 64) * c->size_);
      break;
    case Algorithm::kPingPong:
      c->flag_bytes_per_object_ = (c->size_ + 8 * kCellBytes - 1) / (8 * kCellBytes);
      for (int k = 0; k < 2; ++k) {
        c->copies_[k].resize(bytes);
        c->cell_written_[k].assign(c->n_ * c->flag_bytes_per_object_, 0);
        c->need_[k].assign(words, ~uint64_t{0});
      }
      c->image_.assign(base, base + bytes);
      c->ping_copy_ = c->copies_[0].data();
      c->ping_flags_ = c->cell_written_[0].data();
      break;
  }
  c->writer_ = std::thread([p = c.get()] {
    core::NameThisThread("as-checkpoint");
    p->WriterMain();
  });
  *out = std::move(c);
  return core::Status::OK();
}

Checkpointer::~Checkpointer() { (void)Close(); }

void Checkpointer::ProtectOldValue(uint32_t object) {
  const size_t w = object / 64;
  const uint64_t bit = uint64_t{1} << (object % 64);
  if (pending_[w].load(std::memory_order_relaxed) & bit) {
    if (pending_[w].fetch_and(~bit, std::memory_order_acq_rel) & bit) {
      // Ours: the writer will take the old value from shadow_ once saved_ says it is there.
      std::memcpy(&shadow_[uint64_t{object} * size_], base_ + uint64_t{object} * size_, size_);
      saved_[w].fetch_or(bit, std::memory_order_release);
      return;
    }
  }
  if ((in_set_[w] & bit) == 0) return;                                  // not in the checkpoint
  if (saved_[w].load(std::memory_order_acquire) & bit) return;          // saved by an earlier write
  // The writer claimed it: wait until it has copied the claimed objects of this word.
  while (copied_upto_.load(std::memory_order_acquire) <= object) std::this_thread::yield();
}

void Checkpointer::StartCouSet(bool full) {
  // Backup b last received the state two checkpoint starts ago: it needs what changed in this
  // period and the one before.
  for (size_t w = 0; w < words_; ++w) {
    uint64_t now = 0;
    for (int k = 0; k < 8; ++k) now |= PackBytes(&changed_[w * 64 + k * 8]) << (k * 8);
    in_set_[w] = full ? ~uint64_t{0} : now | changed_before_[w];
    changed_before_[w] = now;
  }
  std::memset(changed_.data(), 0, changed_.size());
  if (n_ % 64 != 0) in_set_.back() &= (uint64_t{1} << (n_ % 64)) - 1;
  FillSmallGaps(&in_set_, n_);
  for (size_t w = 0; w < words_; ++w) {
    pending_[w].store(in_set_[w], std::memory_order_relaxed);
    saved_[w].store(0, std::memory_order_relaxed);
  }
  // The frame barrier before the next worker write publishes these stores to the hooks.
  copied_upto_.store(0, std::memory_order_release);
}

void Checkpointer::MergePongIntoImage(int pong) {
  // image_ becomes the state as of the job's tick; both backups now need the merged objects.
  // The flag bytes are scanned eight at a time: most are zero at low update rates.
  uint8_t* flags = cell_written_[pong].data();
  const uint8_t* copy = copies_[pong].data();
  const uint64_t count = cell_written_[pong].size();
  for (uint64_t at = 0; at < count; at += 8) {
    uint64_t word = 0;
    const uint64_t len = std::min<uint64_t>(8, count - at);
    std::memcpy(&word, flags + at, len);
    if (word == 0) continue;
    for (uint64_t k = at; k < at + len; ++k) {
      if (flags[k] == 0) continue;
      const uint64_t i = k / flag_bytes_per_object_;
      const uint32_t first_cell = static_cast<uint32_t>(k % flag_bytes_per_object_) * 8;
      for (uint32_t bits = flags[k]; bits != 0; bits &= bits - 1) {
        const uint32_t begin = (first_cell + static_cast<uint32_t>(std::countr_zero(bits))) * kCellBytes;
        const uint64_t offset = i * size_ + begin;
        std::memcpy(&image_[offset], copy + offset, std::min(kCellBytes, size_ - begin));
      }
      flags[k] = 0;
      need_[0][i / 64] |= uint64_t{1} << (i % 64);
      need_[1][i / 64] |= uint64_t{1} << (i % 64);
    }
  }
}

Checkpointer::Job Checkpointer::MakeJob(uint64_t tick, Clock::time_point start) {
  Job job{tick, next_backup_, !full_done_[next_backup_], ++sequence_, -1, start};
  if (algorithm_ == Algorithm::kNaive) {
    std::memcpy(snapshot_.data(), base_, snapshot_.size());
    job.full = true;  // Naive-Snapshot writes every object
  } else if (algorithm_ == Algorithm::kCou) {
    StartCouSet(job.full);
  } else if (algorithm_ == Algorithm::kPingPong) {
    job.pong = ping_;
    ping_ ^= 1;  // the pointer swap: new writes land in the other copy
    ping_copy_ = copies_[ping_].data();
    ping_flags_ = cell_written_[ping_].data();
  }
  full_done_[job.backup] = true;
  next_backup_ = 1 - job.backup;
  return job;
}

core::Status Checkpointer::TickBoundary(uint64_t tick) {
  if (algorithm_ == Algorithm::kNone) return core::Status::OK();
  // No lock, no allocation, no system call (the writer finds the job by itself, see WriterMain): a
  // writer descheduled while holding mu_ must not stall the boundary. busy_ false (acquire) also
  // publishes everything the writer did, e.g. the cleared pong flags.
  const Clock::time_point t0 = Clock::now();
  const bool start = !failed_.load(std::memory_order_acquire) && !busy_.load(std::memory_order_acquire) &&
                     (options_.interval_ms <= 0 || last_start_ == Clock::time_point{} ||
                      t0 - last_start_ >= std::chrono::milliseconds(options_.interval_ms));
  if (start) {
    last_start_ = t0;
    job_ = MakeJob(tick, t0);
    busy_.store(true, std::memory_order_release);  // job_ and the swapped copies go to the writer
  }
  const double pause_ms = core::MsSince(t0);
  // Single writer (this thread): load + store, no read-modify-write needed.
  boundaries_.store(boundaries_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  pause_total_ms_.store(pause_total_ms_.load(std::memory_order_relaxed) + pause_ms, std::memory_order_relaxed);
  if (pause_ms > pause_max_ms_.load(std::memory_order_relaxed)) pause_max_ms_.store(pause_ms, std::memory_order_relaxed);
  if (!failed_.load(std::memory_order_acquire)) return core::Status::OK();
  return status();
}

void Checkpointer::WriterMain() {
#ifdef __linux__
  // A batch thread never preempts the thread that woke it: TickBoundary's notify would otherwise
  // hand the core to the writer in the middle of the boundary whenever the other cores are busy.
  sched_param batch{};
  (void)pthread_setschedparam(pthread_self(), SCHED_BATCH, &batch);
#endif
  // Idle, the writer looks for a job every kJobPollPeriod (with interval_ms, not before the next
  // start is due: never before the first); Close wakes it through cv_.
  std::optional<Clock::time_point> last_start;
  for (;;) {
    {
      core::MutexLock lock(&mu_);
      while (!stop_ && !busy_.load(std::memory_order_acquire)) {
        Clock::time_point wake = Clock::now() + kJobPollPeriod;
        if (options_.interval_ms > 0 && last_start) {
          wake = std::max(wake, *last_start + std::chrono::milliseconds(options_.interval_ms));
        }
        (void)cv_.WaitUntil(&mu_, wake);
      }
      if (!busy_.load(std::memory_order_acquire)) return;  // stopped; Close waited for the last job
    }
    core::Status s = RunJob(&job_);
    last_start = job_.start;
    core::MutexLock lock(&mu_);
    if (!s.ok() && error_.ok()) {
      error_ = s;
      failed_.store(true, std::memory_order_release);
    }
    busy_.store(false, std::memory_order_release);
    cv_.SignalAll();
  }
}

core::Status Checkpointer::RunJob(Job* job) {
  const int b = job->backup;
  core::Status s = backup_writer_.Begin(b, job->full);
  if (algorithm_ == Algorithm::kCou) {
    s = WriteCouSet(s);
  } else {
    std::vector<uint64_t> all;
    const std::vector<uint64_t>* set = &all;
    if (algorithm_ == Algorithm::kPingPong) {
      MergePongIntoImage(job->pong);
      FillSmallGaps(&need_[b], n_);  // image_ is complete: any object may be written
      set = &need_[b];
    }
    if (job->full || algorithm_ == Algorithm::kNaive) {
      all.assign(words_, ~uint64_t{0});
      if (n_ % 64 != 0) all.back() = (uint64_t{1} << (n_ % 64)) - 1;
      set = &all;
    }
    s = WriteFromImage(algorithm_ == Algorithm::kNaive ? snapshot_.data() : image_.data(), *set, s);
  }
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

core::Status Checkpointer::WriteFromImage(const uint8_t* image, const std::vector<uint64_t>& set,
                                          core::Status s) {
  const uint64_t chunk = std::max<uint64_t>(kStagingBytes / size_, 1);
  uint64_t written = 0;
  for (uint64_t i = NextWithBit(set, n_, 0, true); i < n_ && s.ok(); i = NextWithBit(set, n_, i, true)) {
    const uint64_t end = std::min(NextWithBit(set, n_, i, false), i + chunk);
    s = backup_writer_.WriteObjects(i, reinterpret_cast<const char*>(image + i * size_), end - i);
    written += end - i;
    i = end;
  }
  core::MutexLock lock(&mu_);
  stats_.objects_written += written;
  return s;
}

core::Status Checkpointer::WriteCouSet(core::Status s) {
  // Word by word in id order: claim the word's pending objects in one exchange, stage the claimed
  // live values and the saved old values, then publish progress so waiting writes go on. Every
  // word goes through the claim, even after an error, so no write waits forever. Staged runs go to
  // disk between words only, never while a claimed object's write may be waiting.
  const uint64_t per_word_bytes = uint64_t{64} * size_;
  std::vector<StagedRun> runs;
  uint64_t staged_bytes = 0, written = 0, saved = 0;
  for (size_t w = 0; w < words_; ++w) {
    const uint64_t set = in_set_[w];
    if (set == 0) continue;
    if (staged_bytes + per_word_bytes > staging_.size()) {
      s = FlushStaged(&runs, s);
      staged_bytes = 0;
    }
    const uint64_t claimed = pending_[w].exchange(0, std::memory_order_acq_rel);
    for (uint64_t bits = set; bits != 0; bits &= bits - 1) {
      const uint64_t i = w * 64 + static_cast<uint64_t>(std::countr_zero(bits));
      const uint64_t bit = uint64_t{1} << (i % 64);
      const uint8_t* src = base_ + i * size_;
      if ((claimed & bit) == 0) {  // a hook owns it: wait until its copy is complete
        while ((saved_[w].load(std::memory_order_acquire) & bit) == 0) std::this_thread::yield();
        src = &shadow_[i * size_];
        ++saved;
      }
      std::memcpy(&staging_[staged_bytes], src, size_);
      if (!runs.empty() && runs.back().first + runs.back().count == i) ++runs.back().count;
      else runs.push_back({i, 1, staged_bytes});
      staged_bytes += size_;
      ++written;
    }
    copied_upto_.store((w + 1) * 64, std::memory_order_release);
  }
  copied_upto_.store(UINT64_MAX, std::memory_order_release);
  s = FlushStaged(&runs, s);
  core::MutexLock lock(&mu_);
  stats_.objects_written += written;
  stats_.saved_on_update += saved;
  return s;
}

core::Status Checkpointer::FlushStaged(std::vector<StagedRun>* runs, core::Status s) {
  for (const StagedRun& r : *runs) {
    if (s.ok()) s = backup_writer_.WriteObjects(r.first, &staging_[r.offset], r.count);
  }
  runs->clear();
  return s;
}

core::Status Checkpointer::WaitIdle() {
  core::MutexLock lock(&mu_);
  while (busy_.load(std::memory_order_relaxed)) cv_.Wait(&mu_);
  return error_;
}

core::Status Checkpointer::Close() {
  if (closed_) return status();
  closed_ = true;
  {
    core::MutexLock lock(&mu_);
    while (busy_.load(std::memory_order_relaxed)) cv_.Wait(&mu_);
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
  s.boundaries = boundaries_.load(std::memory_order_relaxed);
  s.pause_total_ms = pause_total_ms_.load(std::memory_order_relaxed);
  s.pause_max_ms = pause_max_ms_.load(std::memory_order_relaxed);
  return s;
}

}  // namespace recovery
