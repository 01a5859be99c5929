// aftershock-ckpt-bench: the synthetic workload of Vaz Salles et al. (VLDB'09, Table 4) and Cao et
// al. (SIGMOD'11, sec. 5.3), scaled to this machine, run against the real checkpointers on the
// real file system. Each tick writes `updates` 8-byte cells of Zipf-chosen objects, each write
// bracketed by the checkpointer's hooks. Every tick's update stream is drawn BEFORE the run, so
// the timed tick holds the application's writes, the hooks and the tick boundary, nothing else.
// Per algorithm and cell we report the baseline tick (no checkpointer) and the overhead against
// it as medians over --runs alternated runs with their range, the same for the tick thread's CPU
// time (which preemption on a shared machine does not inflate), the boundary pause (the worst one
// inside TickBoundary beside the most CPU time the tick thread spent in one boundary, which tells
// work from descheduling; and the call's median, 99th percentile and worst as the tick thread
// sees it, for the baseline too, whose boundary returns at once), the time to write a
// checkpoint, and a check that recovery (restore + replay) reproduces the state.
//
// The row `2nd-store` (--floor on, the default) is no algorithm: the baseline tick with each cell
// also stored into a second array the size of the state, and nothing else (no flags, no writer, no
// checkpoint). Wait-Free Ping-Pong is defined by that second store (Cao et al.: "each update is
// applied both to the application state and to a copy"), so its added time is the least any
// ping-pong with a copy apart from the state adds on this machine at that moment, and ping-pong's
// added time minus it is what the rest of the algorithm costs (docs/recovery-measurements.md).
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <cxxopts.hpp>
#include <filesystem>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "recovery/checkpointer.h"
#include "recovery/coding.h"
#include "recovery/log_writer.h"
#include "recovery/recover.h"

namespace {

using Clock = std::chrono::steady_clock;
using recovery::Algorithm;

constexpr uint32_t kCellBytes = 8;

double MsBetween(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

// CPU time of the calling thread, ms.
double ThreadCpuMs() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) * 1e3 + double(ts.tv_nsec) / 1e6;
}

struct Config {
  uint32_t objects = 65536;
  uint32_t object_size = 256;
  uint64_t ticks = 500;
  double hz = 100;
  std::vector<int> updates{1000, 16000, 64000};
  std::vector<double> skews{0, 0.8};
  std::vector<Algorithm> algorithms{Algorithm::kNaive, Algorithm::kCou, Algorithm::kPingPong};
  int runs = 3;
  int interval_ms = 0;
  std::string dir;
  std::string label;  // CSV column "build": tells binaries apart when their tables are merged
  bool csv = false;
  bool keep = false;
  bool floor = true;  // also run the 2nd-store row
};

// Zipf over [0, n) with exponent s (0 = uniform); ranks are scattered over the ids by a fixed
// permutation so the hot objects are not neighbours.
class Zipf {
 public:
  Zipf(uint32_t n, double s) : cdf_(n), ids_(n) {
    double sum = 0;
    for (uint32_t k = 0; k < n; ++k) cdf_[k] = sum += 1.0 / std::pow(double(k + 1), s);
    for (double& c : cdf_) c /= sum;
    for (uint32_t k = 0; k < n; ++k) ids_[k] = k;
    std::shuffle(ids_.begin(), ids_.end(), std::mt19937(12345));
  }
  uint32_t Sample(std::mt19937_64& rng) const {
    double u = std::uniform_real_distribution<double>(0, 1)(rng);
    size_t k = std::lower_bound(cdf_.begin(), cdf_.end(), u) - cdf_.begin();
    return ids_[std::min(k, ids_.size() - 1)];
  }

 private:
  std::vector<double> cdf_;
  std::vector<uint32_t> ids_;
};

// Every tick's updates, drawn once per cell: tick t writes cells[first(t) .. first(t+1)), each
// cell index = object * cells_per_object + cell. Live runs and replay read the same table.
struct UpdateStream {
  uint32_t cells_per_object = 0;
  int updates = 0;
  std::vector<uint32_t> cells;  // ticks * updates entries

  const uint32_t* tick(uint64_t t) const { return cells.data() + (t - 1) * uint64_t(updates); }
};

UpdateStream DrawUpdates(const Config& cfg, int updates, double skew) {
  const Zipf zipf(cfg.objects, skew);
  UpdateStream s;
  s.cells_per_object = cfg.object_size / kCellBytes;
  s.updates = updates;
  s.cells.resize(cfg.ticks * uint64_t(updates));
  std::mt19937_64 rng(0x9E3779B97F4A7C15ull ^ uint64_t(updates));
  for (uint32_t& c : s.cells) {
    const uint32_t id = zipf.Sample(rng);
    c = id * s.cells_per_object + static_cast<uint32_t>(rng() % s.cells_per_object);
  }
  return s;
}

// The game tick: each cell write goes through the checkpointer's write path (Checkpointer::Write:
// the hooks and the write itself). ckpt == nullptr: the baseline, a plain store; with `second`
// (the 2nd-store row, ckpt == nullptr) the same bytes also go to the same place in `second`.
void RunTickUpdates(const Config& cfg, const UpdateStream& stream, uint64_t tick, uint8_t* state,
                    recovery::Checkpointer* ckpt, uint8_t* second = nullptr) {
  const uint32_t* cells = stream.tick(tick);
  for (int u = 0; u < stream.updates; ++u) {
    const uint32_t id = cells[u] / stream.cells_per_object;
    const uint32_t offset = (cells[u] % stream.cells_per_object) * kCellBytes;
    const uint64_t value = tick ^ (uint64_t(u) << 20);
    const uint64_t at = uint64_t{id} * cfg.object_size + offset;
    if (ckpt != nullptr) {
      ckpt->Write(id, offset, &value, kCellBytes);
    } else {
      std::memcpy(state + at, &value, kCellBytes);
      if (second != nullptr) std::memcpy(second + at, &value, kCellBytes);
    }
  }
}

// One series of runs: an algorithm, or the 2nd-store row (algorithm none plus the second store).
struct Variant {
  Algorithm algorithm;
  bool second_store;
  const char* name() const { return second_store ? "2nd-store" : recovery::AlgorithmName(algorithm); }
};

struct RunResult {
  // The most CPU time the tick thread spent inside one TickBoundary call: a bound for the slowest
  // call (wall time far above it is time the thread was not running).
  double max_boundary_cpu_ms = 0;
  // The TickBoundary call as the tick thread sees it, every algorithm including none (whose
  // boundary returns at once: the floor of this measurement on this machine): median, 99th
  // percentile and worst over the run's ticks.
  double boundary_p50_ms = 0, boundary_p99_ms = 0, boundary_max_ms = 0;
  double tick_ms = 0, tick_cpu_ms = 0, max_tick_ms = 0, mean_pause_ms = 0, max_pause_ms = 0, ckpt_ms = 0, mb_written = 0;
  uint64_t checkpoints = 0, replayed = 0;
  double recovery_ms = 0;
  bool verified = false;
};

// Recovery as after a crash at the last tick: restore the newest backup, replay the log.
core::Status VerifyRecovery(const Config& cfg, const UpdateStream& stream, const std::string& dir,
                            const std::vector<uint8_t>& state, RunResult* out) {
  std::vector<uint8_t> recovered(state.size(), 0);
  recovery::RecoverOptions ro;
  ro.dir = dir;
  ro.object_count = cfg.objects;
  ro.object_size = cfg.object_size;
  recovery::RecoveryReport report;
  const Clock::time_point r0 = Clock::now();
  core::Status s = recovery::Recover(ro, recovered.data(), [&](uint64_t tick, std::string_view) {
    RunTickUpdates(cfg, stream, tick, recovered.data(), nullptr);
    return core::Status::OK();
  }, &report);
  out->recovery_ms = MsBetween(r0, Clock::now());
  if (!s.ok()) return s;
  out->replayed = report.records_replayed;
  out->verified = recovered == state;
  return core::Status::OK();
}

core::Status RunOnce(const Config& cfg, Variant variant, const UpdateStream& stream,
                     const std::string& dir, RunResult* out) {
  const Algorithm algo = variant.algorithm;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::vector<uint8_t> state(uint64_t{cfg.objects} * cfg.object_size, 0);
  recovery::LogOptions lo;
  lo.dir = dir;
  lo.sync_mode = recovery::SyncMode::kAsync;
  std::unique_ptr<recovery::LogWriter> log;
  if (core::Status s = recovery::LogWriter::Open(lo, &log); !s.ok()) return s;
  recovery::CheckpointOptions co;
  co.dir = dir;
  co.algorithm = algo;
  co.object_count = cfg.objects;
  co.object_size = cfg.object_size;
  co.interval_ms = cfg.interval_ms;
  co.on_commit = [l = log.get()](uint64_t, uint64_t oldest) { return l->RemoveObsoleteSegments(oldest); };
  std::unique_ptr<recovery::Checkpointer> ckpt;
  if (core::Status s = recovery::Checkpointer::Open(co, state.data(), 0, &ckpt); !s.ok()) return s;
  recovery::Checkpointer* hook = algo == Algorithm::kNone ? nullptr : ckpt.get();
  // Touched before the run, as the state is (zero-filled), so no tick pays its page faults.
  std::vector<uint8_t> second(variant.second_store ? state.size() : 0, 0);
  const auto period = cfg.hz > 0 ? std::chrono::duration<double>(1.0 / cfg.hz) : std::chrono::duration<double>(0);
  Clock::time_point next = Clock::now();
  double total_ms = 0, total_cpu_ms = 0;
  std::vector<double> boundary_ms;
  boundary_ms.reserve(cfg.ticks);
  for (uint64_t t = 1; t <= cfg.ticks; ++t) {
    if (cfg.hz > 0) {
      std::this_thread::sleep_until(next);
      next += std::chrono::duration_cast<Clock::duration>(period);
    }
    const double cpu0 = ThreadCpuMs();
    const Clock::time_point t0 = Clock::now();
    RunTickUpdates(cfg, stream, t, state.data(), hook, variant.second_store ? second.data() : nullptr);
    const double cpu1 = ThreadCpuMs();
    const Clock::time_point b0 = Clock::now();
    core::Status s = ckpt->TickBoundary(t);
    const Clock::time_point b1 = Clock::now();
    const double ms = MsBetween(t0, b1);
    boundary_ms.push_back(MsBetween(b0, b1));
    const double cpu2 = ThreadCpuMs();
    total_cpu_ms += cpu2 - cpu0;
    out->max_boundary_cpu_ms = std::max(out->max_boundary_cpu_ms, cpu2 - cpu1);
    if (!s.ok()) return s;
    total_ms += ms;
    out->max_tick_ms = std::max(out->max_tick_ms, ms);
    char payload[8];
    recovery::EncodeFixed64(payload, t);
    if (s = log->Append(t, std::string_view(payload, 8)); !s.ok()) return s;
  }
  if (core::Status s = ckpt->Close(); !s.ok()) return s;  // lets the checkpoint in flight finish
  if (core::Status s = log->Close(); !s.ok()) return s;
  const recovery::CheckpointStats st = ckpt->stats();
  std::sort(boundary_ms.begin(), boundary_ms.end());
  out->boundary_p50_ms = boundary_ms[boundary_ms.size() / 2];
  out->boundary_p99_ms = boundary_ms[std::min(boundary_ms.size() - 1, boundary_ms.size() * 99 / 100)];
  out->boundary_max_ms = boundary_ms.back();
  out->tick_ms = total_ms / double(cfg.ticks);
  out->tick_cpu_ms = total_cpu_ms / double(cfg.ticks);
  out->mean_pause_ms = st.mean_pause_ms();
  out->max_pause_ms = st.pause_max_ms;
  out->ckpt_ms = st.mean_checkpoint_ms();
  out->checkpoints = st.checkpoints;
  out->mb_written = double(st.bytes_written) / (1 << 20);
  core::Status s = VerifyRecovery(cfg, stream, dir, state, out);
  if (!cfg.keep) std::filesystem::remove_all(dir);
  return s;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n == 0 ? 0 : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// One variant's runs in one cell, and the baseline runs they are compared with (same index).
struct Series {
  Variant variant;
  std::vector<RunResult> runs;
};

void PrintHeader(const Config& cfg) {
  std::printf(cfg.csv ? "# " : "");
  std::printf("state %u objects x %u bytes (%.1f MiB), %llu ticks at %g Hz, %d alternated runs per cell, dir %s\n",
              cfg.objects, cfg.object_size, double(cfg.objects) * cfg.object_size / (1 << 20),
              static_cast<unsigned long long>(cfg.ticks), cfg.hz, cfg.runs, cfg.dir.c_str());
  if (cfg.csv) {
    std::printf("build,algorithm,updates,skew,runs,base_tick_ms,base_min_ms,base_max_ms,tick_ms,overhead_ms,"
                "overhead_min_ms,overhead_max_ms,base_cpu_ms,cpu_overhead_ms,cpu_overhead_min_ms,cpu_overhead_max_ms,"
                "max_tick_ms,mean_pause_ms,max_pause_ms,max_pause_cpu_ms,checkpoints,ckpt_ms,mb_written,replayed_ticks,"
                "recovery_ms,verified,boundary_p50_ms,boundary_p99_ms,boundary_max_ms\n");
  } else {
    std::printf("ms per tick; medians of the runs, [min..max] over the runs; cpu = the tick thread's CPU time;\n"
                "max_tick and max_pause are the worst of all runs; ckpts per run; ckpt_ms = start to commit\n");
    std::printf("max_pause is inside TickBoundary; bnd_p50/bnd_p99/bnd_max: the call as the tick thread sees it,\n"
                "for every algorithm (none's boundary returns at once: the floor on this machine)\n");
    std::printf("%-9s %7s %4s %8s %17s %8s %19s %8s %8s %8s %9s %9s %8s %8s %8s %5s %8s %8s %6s %s\n", "algorithm",
                "updates", "skew", "base_ms", "[base range]", "overhd", "[overhead range]", "base_cpu", "cpu_over",
                "max_tick", "mean_paus", "max_pause", "bnd_p50", "bnd_p99", "bnd_max", "ckpts", "ckpt_ms", "MB_writ",
                "recov", "ok");
  }
}

// Prints one row per algorithm (the baseline first) for a finished cell.
void PrintCell(const Config& cfg, int updates, double skew, const Series& base, const std::vector<Series>& algos) {
  std::vector<double> base_ms, base_cpu;
  for (const RunResult& r : base.runs) {
    base_ms.push_back(r.tick_ms);
    base_cpu.push_back(r.tick_cpu_ms);
  }
  const double base_med = Median(base_ms);
  const double base_min = *std::min_element(base_ms.begin(), base_ms.end());
  const double base_max = *std::max_element(base_ms.begin(), base_ms.end());
  std::vector<const Series*> all{&base};
  for (const Series& s : algos) all.push_back(&s);
  for (const Series* s : all) {
    std::vector<double> tick, over, cpu_over, pause, ckpt, mb, recov, bnd_p50, bnd_p99;
    double max_tick = 0, max_pause = 0, max_pause_cpu = 0, bnd_max = 0;
    uint64_t ckpts = 0, replayed = 0;
    bool ok = true;
    for (size_t k = 0; k < s->runs.size(); ++k) {
      const RunResult& r = s->runs[k];
      tick.push_back(r.tick_ms);
      over.push_back(r.tick_ms - base.runs[k].tick_ms);
      cpu_over.push_back(r.tick_cpu_ms - base.runs[k].tick_cpu_ms);
      pause.push_back(r.mean_pause_ms);
      ckpt.push_back(r.ckpt_ms);
      mb.push_back(r.mb_written);
      recov.push_back(r.recovery_ms);
      bnd_p50.push_back(r.boundary_p50_ms);
      bnd_p99.push_back(r.boundary_p99_ms);
      bnd_max = std::max(bnd_max, r.boundary_max_ms);
      max_tick = std::max(max_tick, r.max_tick_ms);
      max_pause = std::max(max_pause, r.max_pause_ms);
      max_pause_cpu = std::max(max_pause_cpu, r.max_boundary_cpu_ms);
      ckpts += r.checkpoints;
      replayed = std::max(replayed, r.replayed);
      ok = ok && r.verified;
    }
    const double omin = *std::min_element(over.begin(), over.end());
    const double omax = *std::max_element(over.begin(), over.end());
    const double cmin = *std::min_element(cpu_over.begin(), cpu_over.end());
    const double cmax = *std::max_element(cpu_over.begin(), cpu_over.end());
    const char* name = s->variant.name();
    const unsigned long long ckpts_per_run = ckpts / s->runs.size();
    if (cfg.csv) {
      std::printf("%s,%s,%d,%g,%zu,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.3f,%.4f,%.4f,%.4f,%llu,"
                  "%.2f,%.1f,%llu,%.1f,%s,%.4f,%.4f,%.4f\n",
                  cfg.label.c_str(), name, updates, skew, s->runs.size(), base_med, base_min, base_max, Median(tick),
                  Median(over), omin, omax, Median(base_cpu), Median(cpu_over), cmin, cmax, max_tick, Median(pause),
                  max_pause, max_pause_cpu, ckpts_per_run, Median(ckpt), Median(mb), static_cast<unsigned long long>(replayed),
                  Median(recov), ok ? "yes" : "NO", Median(bnd_p50), Median(bnd_p99), bnd_max);
    } else {
      (void)cmin;
      (void)cmax;
      std::printf("%-9s %7d %4.2f %8.4f [%7.4f..%7.4f] %8.4f [%8.4f..%8.4f] %8.4f %8.4f %8.3f %9.4f %9.4f %8.4f %8.4f "
                  "%8.4f %5llu %8.2f %8.1f %6.1f %s\n",
                  name, updates, skew, base_med, base_min, base_max, Median(over), omin, omax, Median(base_cpu),
                  Median(cpu_over), max_tick, Median(pause), max_pause, Median(bnd_p50), Median(bnd_p99), bnd_max,
                  ckpts_per_run, Median(ckpt), Median(mb), Median(recov), ok ? "yes" : "NO");
    }
  }
  std::fflush(stdout);
}

template <typename T>
std::vector<T> ParseList(const std::string& text) {
  std::vector<T> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    std::stringstream is(item);
    T v;
    if (!(is >> v) || !is.eof()) throw cxxopts::exceptions::exception("bad list item '" + item + "'");
    out.push_back(v);
  }
  if (out.empty()) throw cxxopts::exceptions::exception("empty list");
  return out;
}

Config ParseArgs(int argc, char** argv, bool* exit_now) {
  cxxopts::Options opts("aftershock-ckpt-bench",
                        "Checkpoint algorithms on the VLDB'09 / SIGMOD'11 synthetic Zipf workload: overhead per "
                        "tick against a baseline without checkpoints, boundary pauses, checkpoint time, recovery "
                        "check.\nCells: every --updates x --skews pair; per cell --runs rounds, each running the "
                        "baseline and every algorithm (order alternated between rounds).");
  Config c;
  opts.add_options()
      ("h,help", "show this help")
      ("objects", "objects in the state", cxxopts::value<uint32_t>()->default_value("65536"))
      ("object-size", "bytes per object (multiple of 8)", cxxopts::value<uint32_t>()->default_value("256"))
      ("ticks", "ticks per run", cxxopts::value<uint64_t>()->default_value("500"))
      ("hz", "tick rate; 0 = run ticks back to back", cxxopts::value<double>()->default_value("100"))
      ("updates", "updates (8-byte cell writes) per tick", cxxopts::value<std::string>()->default_value("1000,16000,64000"))
      ("skews", "Zipf skews (0 = uniform)", cxxopts::value<std::string>()->default_value("0,0.8"))
      ("algorithms", "algorithms to run (the baseline none always runs)", cxxopts::value<std::string>()->default_value("naive,cou,pingpong"))
      ("runs", "alternated rounds per cell (medians are reported)", cxxopts::value<int>()->default_value("3"))
      ("interval-ms", "minimum ms between checkpoint starts (0 = back to back)", cxxopts::value<int>()->default_value("0"))
      ("dir", "scratch directory (default: a new one under $TMPDIR or /tmp)", cxxopts::value<std::string>())
      ("label", "value of the CSV 'build' column", cxxopts::value<std::string>()->default_value(""))
      ("csv", "print CSV instead of a table")
      ("keep", "keep the last run's recovery directory (DIR/cell) for aftershock-inspect")
      ("floor", "on: also run the row 2nd-store, the baseline plus one more store per update into a second "
                "array the size of the state (ping-pong's defining store alone: no flags, no writer); off: skip it",
       cxxopts::value<std::string>()->default_value("on"));
  auto r = opts.parse(argc, argv);
  if (r.count("help")) {
    std::printf("%s", opts.help().c_str());
    *exit_now = true;
    return c;
  }
  c.objects = r["objects"].as<uint32_t>();
  c.object_size = r["object-size"].as<uint32_t>();
  c.ticks = r["ticks"].as<uint64_t>();
  c.hz = r["hz"].as<double>();
  c.updates = ParseList<int>(r["updates"].as<std::string>());
  c.skews = ParseList<double>(r["skews"].as<std::string>());
  c.runs = r["runs"].as<int>();
  c.interval_ms = r["interval-ms"].as<int>();
  c.label = r["label"].as<std::string>();
  c.csv = r.count("csv") > 0;
  c.keep = r.count("keep") > 0;
  const std::string floor = r["floor"].as<std::string>();
  if (floor != "on" && floor != "off") throw cxxopts::exceptions::exception("--floor must be on or off");
  c.floor = floor == "on";
  c.algorithms.clear();
  std::stringstream ss(r["algorithms"].as<std::string>());
  for (std::string name; std::getline(ss, name, ',');) {
    Algorithm a;
    if (core::Status s = recovery::ParseAlgorithm(name, &a); !s.ok()) throw cxxopts::exceptions::exception(s.message());
    if (a != Algorithm::kNone) c.algorithms.push_back(a);
  }
  if (c.objects == 0 || c.object_size < kCellBytes || c.object_size % kCellBytes != 0 || c.ticks == 0 ||
      c.hz < 0 || c.runs < 1) {
    throw cxxopts::exceptions::exception(
        "need --objects > 0, --object-size a multiple of 8, --ticks > 0, --hz >= 0, --runs >= 1");
  }
  if (uint64_t{c.objects} * (c.object_size / kCellBytes) > UINT32_MAX) {
    throw cxxopts::exceptions::exception("more than 2^32 cells in the state");
  }
  for (int u : c.updates) if (u < 0) throw cxxopts::exceptions::exception("updates must be >= 0");
  for (double s : c.skews) if (s < 0) throw cxxopts::exceptions::exception("skews must be >= 0");
  if (r.count("dir")) c.dir = r["dir"].as<std::string>();
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  Config cfg;
  try {
    bool exit_now = false;
    cfg = ParseArgs(argc, argv, &exit_now);
    if (exit_now) return 0;
  } catch (const cxxopts::exceptions::exception& e) {
    std::fprintf(stderr, "aftershock-ckpt-bench: %s (see --help)\n", e.what());
    return 2;
  }
  const bool own_dir = cfg.dir.empty();
  if (own_dir) {
    std::string tmpl = (std::filesystem::temp_directory_path() / "aftershock-ckpt-bench-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) {
      std::fprintf(stderr, "aftershock-ckpt-bench: cannot create a scratch directory\n");
      return 2;
    }
    cfg.dir = tmpl;
  }
  PrintHeader(cfg);
  int failures = 0;
  for (int updates : cfg.updates) {
    for (double skew : cfg.skews) {
      const UpdateStream stream = DrawUpdates(cfg, updates, skew);
      Series base{{Algorithm::kNone, false}, {}};
      std::vector<Series> algos;
      if (cfg.floor) algos.push_back({{Algorithm::kNone, true}, {}});
      for (Algorithm a : cfg.algorithms) algos.push_back({{a, false}, {}});
      std::vector<Series*> order{&base};
      for (Series& s : algos) order.push_back(&s);
      bool cell_ok = true;
      for (int run = 0; run < cfg.runs && cell_ok; ++run) {
        // Alternate the order so no algorithm always runs right after the same neighbour.
        if (run > 0) std::reverse(order.begin(), order.end());
        for (Series* s : order) {
          RunResult r;
          core::Status st = RunOnce(cfg, s->variant, stream, cfg.dir + "/cell", &r);
          if (!st.ok()) {
            std::fprintf(stderr, "aftershock-ckpt-bench: %s, %d updates, skew %g: %s\n",
                         s->variant.name(), updates, skew, st.ToString().c_str());
            cell_ok = false;
            break;
          }
          s->runs.push_back(r);
        }
      }
      if (!cell_ok) {
        ++failures;
        continue;
      }
      for (const Series& s : algos) {
        for (const RunResult& r : s.runs) failures += r.verified ? 0 : 1;
      }
      PrintCell(cfg, updates, skew, base, algos);
    }
  }
  if (own_dir && !cfg.keep) std::filesystem::remove_all(cfg.dir);
  return failures == 0 ? 0 : 1;
}
