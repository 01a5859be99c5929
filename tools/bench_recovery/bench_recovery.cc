// aftershock-bench-recovery: recovers a server's data directory again and again, read-only
// (Durability::RecoverReadOnly: the same code as the server's start-up, nothing written), at each
// --replay-threads count in turn (runs alternate between the counts), and prints each run's
// replay time and CPU time, the medians, the speed-up over the first count and the speed against
// real time.
// Every run must end in the same state hash; otherwise it exits 1.
// Before each run it times a hand-off between two cores (CrossCoreRoundTripNs) and prints it
// beside the run: on a virtual machine whose two cores are sometimes far apart, the parallel
// figures of the runs taken then are not comparable with the others (docs/recovery.md). Before each
// run it also times plain arithmetic (ArithmeticProbe): one thread's speed, which on a shared
// virtual machine can move by half within minutes, and what N threads gain over one: on a machine
// whose vCPUs share a physical core, or a power budget, with other guests, that is less than N,
// and code bound by arithmetic cannot gain more than that on N threads. And it times memory
// (MemoryChase): one thread's wait for a load from a random place in 16 MiB, and what N threads
// gain over one at such loads. Neither accounts for a serial replay's swings from run to run
// (docs/recovery.md, "Measuring: aftershock-bench-recovery"): they say what the host's cores and
// memory were doing around the run. --probes off skips all three, for runs under valgrind, which
// counts instructions where time is too noisy to compare.
// After each run at N > 1 threads it measures the host's ceiling for this log (--ceiling on, the
// default; ConcurrentSerialReplays): N serial replays at once, one per thread, each into its own
// World. N cores then do N times a serial replay's work in the slowest one's time, so
// N x (the round's serial replay_ms) / (the slowest one's replay_ms) is the most that any N-thread
// replay of this log could gain over one thread on this host at that moment: no dependencies and
// no hand-offs, only the cores, caches and memory the replays share. The speed-up belongs beside it.
//   aftershock-bench-recovery --data-dir D --map maps/dm_arena.map --replay-threads 1,2 --runs 3
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <latch>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>

#include <cxxopts.hpp>

#include "maps/map_loader.h"
#include "server/collision/collision_world.h"
#include "server/durability/durability.h"
#include "server/durability/parallel_replay.h"
#include "server/durability/world_identity.h"

namespace {

// ArithmeticProbe's result.
struct ArithmeticSpeed {
  double step_ns = 0;  // one thread alone: ns per step of ArithmeticChain
  double scaling = 0;  // N threads' work per unit of time over one thread's; 1 for N = 1
};

// MemoryChase::Measure's result.
struct MemorySpeed {
  double load_ns = 0;  // one thread alone: ns per dependent load of a random line (MemoryChase)
  double scaling = 0;  // N threads' loads per unit of time over one thread's; 1 for N = 1
};

struct Run {
  int threads = 0;
  durability::WorldRecoveryReport report;
  double cpu_ms = 0;  // user + system CPU time of the whole process during the recovery
  // The probes just before the run; every field 0 with --probes off.
  double handoff_ns = 0;       // CrossCoreRoundTripNs()
  ArithmeticSpeed arithmetic;  // ArithmeticProbe(threads)
  MemorySpeed memory;          // MemoryChase::Measure(threads)
  // With --ceiling on, threads > 1 and at most one thread per allowed CPU: the ceiling that
  // `threads` serial replays run at once just after this run (ConcurrentSerialReplays) give
  // against the same round's serial run (0: none measured).
  double ceiling = 0;
};

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// The CPUs this process may run on, ascending (empty if the mask cannot be read).
std::vector<int> AllowedCpus() {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &allowed)) cpus.push_back(c);
  }
  return cpus;
}

// The time, in ns, for a value to go from one core to another and back: two threads pinned to the
// first two CPUs this process may run on hand an atomic counter back and forth, in 100 batches of
// 500 round trips; the median batch's mean, so that a preemption of either thread (a busy
// machine) does not read as slow cores. It is what a replay thread pays to see a line another
// core wrote. 0 if fewer than two CPUs are allowed or pinning fails. (On a host with SMT the first
// two CPUs may be siblings of one core; this machine has none.) The replay threads are created
// later by the recovery, from the main thread, whose CPU mask this does not change.
double CrossCoreRoundTripNs() {
  const std::vector<int> cpus = AllowedCpus();
  if (cpus.size() < 2) return 0;
  constexpr uint32_t kBatches = 100, kPerBatch = 500, kRounds = kBatches * kPerBatch;
  alignas(64) std::atomic<uint32_t> ball{0};
  std::atomic<int> pinned{0};
  auto pin = [&](int cpu) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    const bool ok = pthread_setaffinity_np(pthread_self(), sizeof one, &one) == 0;
    pinned.fetch_add(ok ? 1 : 100);
    while (pinned.load() < 2) {
    }
    return pinned.load() == 2;
  };
  std::vector<double> batch_ns;
  batch_ns.reserve(kBatches);
  std::thread back([&] {
    if (!pin(cpus[1])) return;
    for (uint32_t i = 0; i < kRounds; ++i) {
      while (ball.load(std::memory_order_acquire) != 2 * i + 1) {
      }
      ball.store(2 * i + 2, std::memory_order_release);
    }
  });
  std::thread forth([&] {
    if (!pin(cpus[0])) return;
    for (uint32_t b = 0; b < kBatches; ++b) {
      const auto t0 = std::chrono::steady_clock::now();
      for (uint32_t i = b * kPerBatch; i < (b + 1) * kPerBatch; ++i) {
        ball.store(2 * i + 1, std::memory_order_release);
        while (ball.load(std::memory_order_acquire) != 2 * i + 2) {
        }
      }
      batch_ns.push_back(std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() /
                         kPerBatch);
    }
  });
  forth.join();
  back.join();
  return batch_ns.empty() ? 0 : Median(batch_ns);
}

// Seconds from starting `n` threads together, thread t running work(t), until all are done. The
// threads are started and parked first, so their creation is not timed.
template <typename Work>
double TimeTogether(int n, const Work& work) {
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> pool;
  pool.reserve(static_cast<size_t>(n));
  for (int t = 0; t < n; ++t) {
    pool.emplace_back([&, t] {
      ready.fetch_add(1);
      while (!go.load(std::memory_order_acquire)) {
      }
      work(t);
    });
  }
  while (ready.load() < n) std::this_thread::yield();
  const auto t0 = std::chrono::steady_clock::now();
  go.store(true, std::memory_order_release);
  for (std::thread& th : pool) th.join();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Five trials of one thread alone running work(0), and for threads > 1 of `threads` threads
// together, thread t running work(t), as much work each: *one_s is the median time alone, and
// *scaling the median of threads x alone / together (1 for one thread, 0 if no trial was timed).
template <typename Work>
void ProbeScaling(int threads, const Work& work, double* one_s, double* scaling) {
  std::vector<double> ones, scalings;
  for (int trial = 0; trial < 5; ++trial) {
    const double one = TimeTogether(1, work);
    ones.push_back(one);
    if (threads > 1) {
      const double all = TimeTogether(threads, work);
      if (all > 0) scalings.push_back(threads * one / all);
    }
  }
  *one_s = Median(ones);
  *scaling = threads == 1 ? 1 : scalings.empty() ? 0 : Median(scalings);
}

// A chain of dependent multiply, add and xor-shift steps: arithmetic only, no memory traffic, so
// one thread's speed depends only on how much of a core it gets.
uint64_t ArithmeticChain(uint64_t x, uint32_t steps) {
  for (uint32_t i = 0; i < steps; ++i) {
    x = x * 6364136223846793005u + 1442695040888963407u;
    x ^= x >> 29;
  }
  return x;
}

// One thread's speed on plain arithmetic (ArithmeticChain, about 10-15 ms), and for threads > 1
// how many times one thread's work `threads` threads do in the same time: threads x (one
// thread's time alone) / (the time until all of them, started together, are done). Medians of 5
// trials. On `threads` idle independent cores the scaling is `threads`. On this machine (2
// vCPUs, 2026-11-29) one step took 2.07 ns in one phase and 3.1-3.3 ns in another minutes
// earlier, when two threads also ran 1.27-1.37x slower each than one alone (a scaling of about
// 1.5). Code bound by arithmetic gains no more on `threads` threads than the scaling of its
// moment. A replay's serial speed does not follow step_ns alone (serial replays moved by 15-19%
// while step_ns held at 2.06-2.15).
ArithmeticSpeed ArithmeticProbe(int threads) {
  constexpr uint32_t kSteps = 5'000'000;
  std::atomic<uint64_t> sink{0};
  double one_s = 0;
  ArithmeticSpeed speed;
  ProbeScaling(
      threads,
      [&](int t) {
        sink.fetch_add(ArithmeticChain(static_cast<uint64_t>(t) + 1, kSteps), std::memory_order_relaxed);
      },
      &one_s, &speed.scaling);
  speed.step_ns = one_s * 1e9 / kSteps;
  return speed;
}

// One cycle through the 64-byte lines of a 16 MiB buffer in random order (Sattolo's shuffle, a
// fixed seed): each line's first word holds the next line's index, so a walk is a chain of
// dependent loads, each from a line not touched for a lap of 262,144 loads. 16 MiB is well past a
// core's L2 cache (docs/recovery.md). A replay's threads read one shared world, and so do the
// probe's, each on its own stretch of the cycle.
class MemoryChase {
 public:
  static constexpr uint32_t kLines = (16u << 20) / 64;

  MemoryChase() : lines_(kLines), order_(kLines) {
    for (uint32_t i = 0; i < kLines; ++i) order_[i] = i;
    std::mt19937_64 rng(0x5eed);
    for (uint32_t i = kLines - 1; i > 0; --i) {  // Sattolo: a single cycle
      std::swap(order_[i], order_[static_cast<uint32_t>(rng() % i)]);
    }
    // order_ is now a permutation with one cycle; walk it from line 0 to list the lines in cycle
    // order, which is what the threads' starting points need.
    for (uint32_t i = 0; i < kLines; ++i) lines_[i].next = order_[i];
    uint32_t at = 0;
    for (uint32_t k = 0; k < kLines; ++k) {
      order_[k] = at;
      at = lines_[at].next;
    }
  }

  // One thread's speed at loads from memory (about 10-20 ms of them per trial), and for threads
  // > 1 how many times one thread's loads `threads` threads do in the same time, as for
  // ArithmeticProbe. Every walk, alone or together, takes the next min(50,000, kLines / threads)
  // lines of the cycle after the last walk's, so no two threads walk the same lines and a line
  // comes round again only after a lap of the whole buffer.
  MemorySpeed Measure(int threads) {
    const uint32_t loads = std::min<uint32_t>(50'000, kLines / static_cast<uint32_t>(threads));
    std::atomic<uint64_t> sink{0};
    double one_s = 0;
    MemorySpeed speed;
    ProbeScaling(
        threads,
        [&](int) {
          const uint64_t from = next_walk_.fetch_add(loads, std::memory_order_relaxed);
          uint32_t at = order_[from % kLines];
          for (uint32_t i = 0; i < loads; ++i) at = lines_[at].next;
          sink.fetch_add(at, std::memory_order_relaxed);
        },
        &one_s, &speed.scaling);
    speed.load_ns = one_s * 1e9 / loads;
    return speed;
  }

 private:
  struct alignas(64) Line {
    uint32_t next = 0;
  };
  std::vector<Line> lines_;
  std::vector<uint32_t> order_;  // the lines in cycle order, from line 0
  std::atomic<uint64_t> next_walk_{0};  // where in order_ (mod kLines) the next walk starts
};

double ProcessCpuMs() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return (u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e3 + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e3;
}

bool ParseThreadList(const std::string& text, std::vector<int>* out) {
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    char* end = nullptr;
    const long v = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || v < 1 || v > durability::kMaxReplayThreads) return false;
    out->push_back(static_cast<int>(v));
  }
  return !out->empty();
}

// A World for the directory: the map's, with the layout and seed world.id records (the record
// store's size follows from the object count once the map's pickups are known).
core::Status MakeWorld(const maps::Map& map, const collision::CollisionWorld& cw,
                       const durability::WorldIdentity& id, int depth,
                       std::unique_ptr<game::World>* out) {
  game::WorldConfig config;
  config.max_players = static_cast<int>(id.max_players);
  config.tick_ms = static_cast<int>(id.tick_ms);
  config.seed = id.seed;
  config.areanode_depth = depth;
  config.max_records = 1;
  std::unique_ptr<game::World> probe;
  core::Status s = game::World::Create(map, cw, config, &probe);
  if (!s.ok()) return s;
  config.max_records = static_cast<int>(id.object_count) - probe->first_record();
  return game::World::Create(map, cw, config, out);  // Create checks the range
}

// `n` serial replays of the directory at once (the ceiling in the file's comment): each thread
// recovers into its own World, made before the start, with replay_threads 1; the threads start
// together. Each replay's replay_ms goes to *replay_ms. Any state other than `expected_hash` is an
// error, as for the timed runs.
core::Status ConcurrentSerialReplays(const maps::Map& map, const collision::CollisionWorld& cw,
                                     const durability::WorldIdentity& id, int depth,
                                     const durability::DurabilityOptions& serial, int n,
                                     uint64_t expected_hash, std::vector<double>* replay_ms) {
  std::vector<std::unique_ptr<game::World>> worlds(n);
  for (auto& w : worlds) {
    if (core::Status s = MakeWorld(map, cw, id, depth, &w); !s.ok()) return s;
  }
  std::vector<durability::WorldRecoveryReport> reports(n);
  std::vector<core::Status> status(n);
  std::latch start(n);
  std::vector<std::thread> threads;
  for (int i = 0; i < n; ++i) {
    threads.emplace_back([&, i] {
      start.arrive_and_wait();
      status[i] = durability::Durability::RecoverReadOnly(serial, worlds[i].get(), &reports[i]);
    });
  }
  for (std::thread& t : threads) t.join();
  replay_ms->clear();
  for (int i = 0; i < n; ++i) {
    if (!status[i].ok()) return status[i];
    if (reports[i].state_hash != expected_hash) {
      char buf[160];
      std::snprintf(buf, sizeof buf, "a serial replay run beside %d others recovered state %016" PRIx64
                    ", the first run %016" PRIx64, n - 1, reports[i].state_hash, expected_hash);
      return core::Status::Corruption(buf);
    }
    replay_ms->push_back(reports[i].replay_ms);
  }
  return core::Status::OK();
}

int Main(int argc, char** argv) {
  cxxopts::Options options("aftershock-bench-recovery",
                           "Times read-only recovery of a data directory at several replay thread counts");
  // clang-format off
  options.add_options()
    ("data-dir", "A server's data directory (left unchanged)", cxxopts::value<std::string>())
    ("map", "The map the directory was written for", cxxopts::value<std::string>()->default_value("maps/dm_arena.map"))
    ("replay-threads", "Comma list of replay thread counts (1..64); the first is the baseline",
     cxxopts::value<std::string>()->default_value("1,2"))
    ("runs", "Runs per thread count (alternating)", cxxopts::value<int>()->default_value("3"))
    ("adaptive", "on: each tick replays the way measured faster (the server's choice); off: every "
                 "tick with enough commands on the pool", cxxopts::value<std::string>()->default_value("on"))
    ("probes", "on: time the host's hand-off, arithmetic and memory before each run; off: skip them "
               "(their columns print 0), e.g. under valgrind, whose serialised threads make their spin "
               "loops crawl", cxxopts::value<std::string>()->default_value("on"))
    ("ceiling", "on: after each run at N > 1 threads (N at most the CPUs allowed), time N serial replays "
                "at once, the most N threads could gain on this host then (column ceiling); off: skip it",
     cxxopts::value<std::string>()->default_value("on"))
    ("areanode-depth", "Areanode tree depth of the replay's leaves (1..12); the live lock order is followed only at the depth the log was written with or deeper (else the walk)", cxxopts::value<int>()->default_value("4"))
    ("h,help", "Print this help");
  // clang-format on
  std::string dir, map_path;
  std::vector<int> thread_counts;
  int runs = 0, depth = 0;
  bool adaptive = true, probes = true, ceiling = true;
  try {
    const cxxopts::ParseResult r = options.parse(argc, argv);
    if (r.count("help")) {
      std::printf("%s\n", options.help().c_str());
      return 0;
    }
    if (!r.count("data-dir")) throw cxxopts::exceptions::exception("--data-dir is required");
    dir = r["data-dir"].as<std::string>();
    map_path = r["map"].as<std::string>();
    if (!ParseThreadList(r["replay-threads"].as<std::string>(), &thread_counts)) {
      throw cxxopts::exceptions::exception("--replay-threads must be a comma list of 1..64");
    }
    runs = r["runs"].as<int>();
    if (runs < 1 || runs > 100) throw cxxopts::exceptions::exception("--runs must be 1..100");
    depth = r["areanode-depth"].as<int>();
    const std::string a = r["adaptive"].as<std::string>();
    if (a != "on" && a != "off") throw cxxopts::exceptions::exception("--adaptive must be on or off");
    adaptive = a == "on";
    const std::string p = r["probes"].as<std::string>();
    if (p != "on" && p != "off") throw cxxopts::exceptions::exception("--probes must be on or off");
    probes = p == "on";
    const std::string c = r["ceiling"].as<std::string>();
    if (c != "on" && c != "off") throw cxxopts::exceptions::exception("--ceiling must be on or off");
    ceiling = c == "on";
  } catch (const cxxopts::exceptions::exception& e) {
    std::fprintf(stderr, "error: %s\n\n%s\n", e.what(), options.help().c_str());
    return 2;
  }

  recovery::Env* env = recovery::Env::Posix();
  durability::WorldIdentity id;
  core::Status s = durability::ReadIdentity(env, dir, &id);
  maps::Map map;
  if (s.ok()) s = maps::LoadMap(map_path, &map);
  if (!s.ok()) {
    std::fprintf(stderr, "error: %s\n", s.ToString().c_str());
    return 1;
  }
  const auto cw = collision::CollisionWorld::Build(map);
  std::unique_ptr<MemoryChase> memory_chase;  // built only when probing: 16 MiB, about 0.1 s
  if (probes) memory_chase = std::make_unique<MemoryChase>();

  // At most one replay per CPU (1 if the mask cannot be read).
  const int cpus = std::max<int>(1, static_cast<int>(AllowedCpus().size()));
  std::vector<Run> done;
  for (int k = 0; k < runs; ++k) {
    const size_t round_begin = done.size();
    for (int threads : thread_counts) {
      std::unique_ptr<game::World> world;
      s = MakeWorld(map, *cw, id, depth, &world);
      durability::DurabilityOptions o;
      o.env = env;
      o.data_dir = dir;
      o.replay_threads = threads;
      o.adaptive_replay = adaptive;
      Run run;
      run.threads = threads;
      if (probes) {
        run.handoff_ns = CrossCoreRoundTripNs();
        run.arithmetic = ArithmeticProbe(threads);
        run.memory = memory_chase->Measure(threads);
      }
      const double cpu0 = ProcessCpuMs();
      if (s.ok()) s = durability::Durability::RecoverReadOnly(o, world.get(), &run.report);
      run.cpu_ms = ProcessCpuMs() - cpu0;
      if (!s.ok()) {
        std::fprintf(stderr, "error: recovery with %d threads: %s\n", threads, s.ToString().c_str());
        return 1;
      }
      const durability::WorldRecoveryReport& r = run.report;
      std::printf("run %d threads %d: ticks %" PRIu64 " commands %" PRIu64
                  " restore_ms %.1f replay_ms %.1f speed_x_realtime %.0f state_hash %016" PRIx64
                  " cpu_ms %.0f handoff_ns %.0f arith_step_ns %.2f arith_scaling %.2f mem_load_ns %.1f"
                  " mem_scaling %.2f\n",
                  k + 1, threads, r.ticks_replayed, r.commands_replayed, r.restore_ms, r.replay_ms,
                  r.speed_x_realtime, r.state_hash, run.cpu_ms, run.handoff_ns, run.arithmetic.step_ns,
                  run.arithmetic.scaling, run.memory.load_ns, run.memory.scaling);
      if (r.replay_parallel_ticks > 0) {
        std::printf("  parallel ticks %" PRIu64 ", critical path %" PRIu64
                    " commands (available parallelism %.2f), dispatch stalls %" PRIu64 "\n",
                    r.replay_parallel_ticks, r.replay_critical_path,
                    static_cast<double>(r.replay_pool_commands) / static_cast<double>(r.replay_critical_path),
                    r.replay_dispatch_stalls);
      }
      if (r.replay_lock_order_ticks > 0) {
        std::printf("  by the live lock order: %" PRIu64 " ticks as streams, %" PRIu64
                    " commands waited on another stream, %" PRIu64 " waits found unmet, %" PRIu64
                    " blockers run by the waiting thread\n",
                    r.replay_lock_order_ticks, r.replay_cross_waits, r.replay_unmet_waits,
                    r.replay_blocker_runs);
      }
      if (r.replay_coarse_tree_ticks > 0) {
        std::printf("  %" PRIu64 " ticks by the walk: their lock order is over leaves finer than"
                    " --areanode-depth %d\n",
                    r.replay_coarse_tree_ticks, depth);
      }
      std::fflush(stdout);
      if (!done.empty() && r.state_hash != done.front().report.state_hash) {
        std::fprintf(stderr, "error: %d threads recovered state %016" PRIx64 ", the first run %016" PRIx64 "\n",
                     threads, r.state_hash, done.front().report.state_hash);
        return 1;
      }
      // The ceiling, against this round's serial run when it came first (else the next round's
      // serial run is not yet known: none for this run).
      const Run* serial_run = nullptr;
      for (size_t i = round_begin; i < done.size(); ++i) {
        if (done[i].threads == 1) serial_run = &done[i];
      }
      if (ceiling && threads > 1 && threads <= cpus && serial_run != nullptr) {
        o.replay_threads = 1;
        std::vector<double> concurrent_ms;
        s = ConcurrentSerialReplays(map, *cw, id, depth, o, threads, r.state_hash, &concurrent_ms);
        if (!s.ok()) {
          std::fprintf(stderr, "error: %d serial replays at once: %s\n", threads, s.ToString().c_str());
          return 1;
        }
        const double slowest = *std::max_element(concurrent_ms.begin(), concurrent_ms.end());
        if (slowest > 0) run.ceiling = threads * serial_run->report.replay_ms / slowest;
        std::printf("  ceiling: %d serial replays at once took", threads);
        for (double ms : concurrent_ms) std::printf(" %.1f", ms);
        std::printf(" ms; %d x the round's serial %.1f ms / the slowest: ceiling_x %.2f\n", threads,
                    serial_run->report.replay_ms, run.ceiling);
        std::fflush(stdout);
      }
      done.push_back(std::move(run));
    }
  }
  const durability::WorldRecoveryReport& first = done.front().report;
  std::printf("\n%s: %" PRIu64 " ticks (%.1f s of game at %u ms), %" PRIu64
              " commands, %d runs each, medians; every run recovered state %016" PRIx64 "\n",
              dir.c_str(), first.ticks_replayed, first.ticks_replayed * id.tick_ms / 1000.0,
              id.tick_ms, first.commands_replayed, runs, first.state_hash);
  std::printf("%-8s %12s %12s %10s %10s %16s %12s %12s %14s %14s %12s %12s\n", "threads", "replay_ms",
              "total_ms", "speedup", "ceiling", "speed_x_realtime", "cpu_ms", "handoff_ns", "arith_step_ns",
              "arith_scaling", "mem_load_ns", "mem_scaling");
  double base = -1;  // the first thread count's median replay_ms
  for (int threads : thread_counts) {
    // The median over this thread count's runs of one figure of a run.
    const auto median = [&](double (*figure)(const Run&)) {
      std::vector<double> v;
      for (const Run& run : done) {
        if (run.threads == threads) v.push_back(figure(run));
      }
      return Median(std::move(v));
    };
    const double m = median([](const Run& r) { return r.report.replay_ms; });
    if (base < 0) base = m;
    // Nothing replayed (the checkpoint was the last tick): no speed-up to give.
    char speedup[32] = "-";
    if (base > 0 && m > 0) std::snprintf(speedup, sizeof(speedup), "%.2fx", base / m);
    // The median ceiling over the runs that measured one.
    std::vector<double> ceilings;
    for (const Run& run : done) {
      if (run.threads == threads && run.ceiling > 0) ceilings.push_back(run.ceiling);
    }
    char ceiling_text[32] = "-";
    if (!ceilings.empty()) std::snprintf(ceiling_text, sizeof(ceiling_text), "%.2fx", Median(ceilings));
    std::printf("%-8d %12.1f %12.1f %10s %10s %16.0f %12.0f %12.0f %14.2f %13.2fx %12.1f %11.2fx\n",
                threads, m, median([](const Run& r) { return r.report.total_ms; }), speedup, ceiling_text,
                median([](const Run& r) { return r.report.speed_x_realtime; }),
                median([](const Run& r) { return r.cpu_ms; }),
                median([](const Run& r) { return r.handoff_ns; }),
                median([](const Run& r) { return r.arithmetic.step_ns; }),
                median([](const Run& r) { return r.arithmetic.scaling; }),
                median([](const Run& r) { return r.memory.load_ns; }),
                median([](const Run& r) { return r.memory.scaling; }));
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return Main(argc, argv); }
