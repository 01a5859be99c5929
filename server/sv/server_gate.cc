// The frame's synchronisation: the fixed-frame barriers and the master's tick pacing, and the
// request-frame gate (the paper's wait/signal scheme). Each call also switches the thread's
// PhaseClock to the wait it is in, so the frame loops (server.cc) hold no instrumentation.
#include <chrono>
#include <thread>

#include "server/core/steady_clock.h"
#include "server/sv/server.h"

namespace sv {

namespace {

constexpr uint64_t kRequestMaxTicNs = 100'000'000;  // request mode: a frame at least every 100 ms
constexpr int kRequestPollMs = 1;

}  // namespace

// ---- Fixed frames ------------------------------------------------------------------------------

Server::TickPacer::TickPacer(int tick_hz)
    : period(std::chrono::nanoseconds(1'000'000'000LL / tick_hz)),
      next_tick(std::chrono::steady_clock::now()) {}

void Server::WaitForTick(TickPacer* pacer, PhaseClock* clock) {
  clock->Switch(Phase::kIdle);
  pacer->next_tick += pacer->period;
  const auto now = std::chrono::steady_clock::now();
  if (pacer->next_tick < now - pacer->period) pacer->next_tick = now;  // fell behind: no burst
  std::this_thread::sleep_until(pacer->next_tick);
  frame_start_ns_ = core::SteadyNs();
}

void Server::AwaitWorldPhase(bool master, PhaseClock* clock) {
  if (master) {
    clock->Switch(Phase::kInterWait);
    barrier_->arrive_and_wait();  // A: world phase done
  } else {
    clock->Switch(Phase::kIdle);
    barrier_->arrive_and_wait();  // A
    clock->SwitchSplit(frame_start_ns_, Phase::kInterWait, Phase::kInterWait);
  }
}

void Server::AwaitRoutedCommands(PhaseClock* clock) {
  clock->Switch(Phase::kIntraWait);
  barrier_->arrive_and_wait();  // R: every port read, every command with its thread
}

void Server::AwaitRequests(PhaseClock* clock) {
  clock->Switch(Phase::kIntraWait);
  barrier_->arrive_and_wait();  // B: every request executed
}

bool Server::AwaitTickRecord(bool master, PhaseClock* clock) {
  if (durability_ == nullptr) return true;
  if (master) {
    clock->Switch(Phase::kLogSync);
    AppendTickRecord();
    clock->Switch(Phase::kIntraWait);
  }
  barrier_->arrive_and_wait();  // B': the frame's record is appended (its sync under way)
  return !durability_failed_.load(std::memory_order_acquire);
}

bool Server::AwaitReplies(int index, PhaseClock* clock) {
  clock->Switch(Phase::kInterWait);
  AddRelaxed(stats_.thread(index).frames, 1);
  barrier_->arrive_and_wait();  // C: every reply sent
  if (durability_failed_.load(std::memory_order_acquire)) return false;
  if (index == 0) {
    stats_.RecordFrame(core::SteadyNs() - frame_start_ns_);
    AddRelaxed(stats_.frames, 1);
  }
  return true;
}

// ---- Request frames ----------------------------------------------------------------------------

bool Server::WaitForRequests(int index, PhaseClock* clock) {
  clock->Switch(Phase::kIdle);
  const bool want = workers_[index]->Poll(kRequestPollMs);
  if (want || index != 0) return want;
  // Thread 0 is the master of last resort: pending joins/leaves, or QuakeWorld's sv_maxtic.
  return !join_requests_.Empty() || !shared_.notices.Empty() ||
         core::SteadyNs() > last_frame_end_ns_.load(std::memory_order_relaxed) + kRequestMaxTicNs;
}

Server::JoinOutcome Server::JoinFrame(PhaseClock* clock) {
  clock->Switch(Phase::kInterWait);
  core::MutexLock lock(&gate_mu_);
  for (;;) {
    if (state_ == FrameState::kIdle) {
      if (stop_requested()) return JoinOutcome::kStop;
      state_ = FrameState::kWorld;
      ++gate_frame_;
      participants_ = 1;
      arrived_ = done_ = 0;
      gate_frame_start_ns_ = core::SteadyNs();
      return JoinOutcome::kMaster;
    }
    if (state_ == FrameState::kWorld) {
      ++participants_;
      const uint64_t frame = gate_frame_;
      while (gate_frame_ == frame && state_ == FrameState::kWorld) gate_cv_.Wait(&gate_mu_);
      return JoinOutcome::kParticipant;
    }
    // Too late for this frame: wait for its end (the master's frame-end signal).
    const uint64_t frame = gate_frame_;
    while (gate_frame_ == frame && state_ != FrameState::kIdle) gate_cv_.Wait(&gate_mu_);
  }
}

void Server::OpenRequests() {
  core::MutexLock lock(&gate_mu_);
  state_ = FrameState::kRequests;
  gate_cv_.SignalAll();
}

bool Server::IntraBarrier(PhaseClock* clock) {
  clock->Switch(Phase::kIntraWait);
  gate_mu_.Lock();
  if (++arrived_ == participants_) {
    // The last thread out of the request phase logs the frame. Nobody can join the frame now
    // (state_ is kRequests), and the others wait for kReplies.
    if (durability_ != nullptr) {
      gate_mu_.Unlock();
      clock->Switch(Phase::kLogSync);
      AppendTickRecord();
      clock->Switch(Phase::kIntraWait);
      gate_mu_.Lock();
    }
    state_ = FrameState::kReplies;
    gate_cv_.SignalAll();
  } else {
    const uint64_t frame = gate_frame_;
    while (gate_frame_ == frame && state_ != FrameState::kReplies) gate_cv_.Wait(&gate_mu_);
  }
  gate_mu_.Unlock();
  return !durability_failed_.load(std::memory_order_acquire);
}

void Server::EndFrame(int index) {
  AddRelaxed(stats_.thread(index).frames, 1);
  core::MutexLock lock(&gate_mu_);
  if (++done_ == participants_) {
    const uint64_t now = core::SteadyNs();
    stats_.RecordFrame(now - gate_frame_start_ns_);
    AddRelaxed(stats_.frames, 1);
    last_frame_end_ns_.store(now, std::memory_order_relaxed);
    state_ = FrameState::kIdle;
    gate_cv_.SignalAll();
  }
}

}  // namespace sv
