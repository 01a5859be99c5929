// aftershock-ckpt-bench: the synthetic workload of Vaz Salles et al. (VLDB'09, Table 4), scaled
// to this machine, run against the real checkpointers on the real file system. Each tick updates
// `updates` cells of Zipf-chosen objects (through the hook) at --hz; per algorithm we report the
// average overhead per tick against a run without checkpoints, the worst tick and boundary pause,
// the time to write a checkpoint, and the time to recover (restore + replay of the logged ticks).
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

double MsBetween(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

struct Config {
  uint32_t objects = 65536;
  uint32_t object_size = 256;
  uint64_t ticks = 1000;
  double hz = 30;
  std::vector<int> updates{1000, 4000, 16000, 64000, 256000};
  std::vector<double> skews{0, 0.5, 0.8, 0.99};
  int default_updates = 64000;
  double default_skew = 0.8;
  std::vector<Algorithm> algorithms{Algorithm::kNaive, Algorithm::kCou, Algorithm::kPingPong};
  int interval_ms = 0;
  std::string dir;
  bool csv = false;
  bool keep = false;
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

// The game tick: `updates` cell writes, each announced to the hook first. Deterministic in tick,
// so replay regenerates it from the logged tick number.
void RunTickUpdates(const Config& cfg, const Zipf& zipf, int updates, uint64_t tick, uint8_t* state,
                    recovery::Checkpointer* ckpt) {
  std::mt19937_64 rng(tick * 0x9E3779B97F4A7C15ull);
  const uint32_t cells = cfg.object_size / 8;
  for (int u = 0; u < updates; ++u) {
    const uint32_t id = zipf.Sample(rng);
    const uint32_t cell = static_cast<uint32_t>(rng() % cells);
    if (ckpt != nullptr) ckpt->OnUpdate(id);
    const uint64_t value = tick ^ (uint64_t(u) << 20);
    std::memcpy(state + uint64_t{id} * cfg.object_size + cell * 8, &value, 8);
  }
}

struct CellResult {
  double tick_ms = 0, max_tick_ms = 0, mean_pause_ms = 0, max_pause_ms = 0, ckpt_ms = 0, mb_written = 0;
  uint64_t checkpoints = 0, replayed = 0;
  double restore_ms = 0, recovery_ms = 0;
  bool verified = false;
};

core::Status RunCell(const Config& cfg, Algorithm algo, int updates, const Zipf& zipf,
                     const std::string& dir, CellResult* out) {
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
  const auto period = cfg.hz > 0 ? std::chrono::duration<double>(1.0 / cfg.hz) : std::chrono::duration<double>(0);
  Clock::time_point next = Clock::now();
  double total_ms = 0;
  for (uint64_t t = 1; t <= cfg.ticks; ++t) {
    if (cfg.hz > 0) {
      std::this_thread::sleep_until(next);
      next += std::chrono::duration_cast<Clock::duration>(period);
    }
    const Clock::time_point t0 = Clock::now();
    RunTickUpdates(cfg, zipf, updates, t, state.data(), hook);
    core::Status s = ckpt->TickBoundary(t);
    const double ms = MsBetween(t0, Clock::now());
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
  out->tick_ms = total_ms / double(cfg.ticks);
  out->mean_pause_ms = st.mean_pause_ms();
  out->max_pause_ms = st.pause_max_ms;
  out->ckpt_ms = st.mean_checkpoint_ms();
  out->checkpoints = st.checkpoints;
  out->mb_written = double(st.bytes_written) / (1 << 20);

  // Recovery as after a crash at the last tick: restore the newest backup, replay the log.
  std::vector<uint8_t> recovered(state.size(), 0);
  recovery::RecoverOptions ro;
  ro.dir = dir;
  ro.object_count = cfg.objects;
  ro.object_size = cfg.object_size;
  recovery::RecoveryReport report;
  const Clock::time_point r0 = Clock::now();
  core::Status s = recovery::Recover(ro, recovered.data(), [&](uint64_t tick, std::string_view) {
    RunTickUpdates(cfg, zipf, updates, tick, recovered.data(), nullptr);
    return core::Status::OK();
  }, &report);
  out->recovery_ms = MsBetween(r0, Clock::now());
  if (!s.ok()) return s;
  out->restore_ms = report.restore_ms;
  out->replayed = report.records_replayed;
  out->verified = recovered == state;
  if (!cfg.keep) std::filesystem::remove_all(dir);
  return core::Status::OK();
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
                        "Checkpoint algorithms on the VLDB'09 Table 4 Zipf workload (scaled): overhead per "
                        "tick, pauses, checkpoint time, recovery time.\nCells: the --updates sweep at "
                        "--default-skew, then the --skews sweep at --default-updates.");
  Config c;
  opts.add_options()
      ("h,help", "show this help")
      ("objects", "objects in the state", cxxopts::value<uint32_t>()->default_value("65536"))
      ("object-size", "bytes per object (multiple of 8)", cxxopts::value<uint32_t>()->default_value("256"))
      ("ticks", "ticks per run", cxxopts::value<uint64_t>()->default_value("1000"))
      ("hz", "tick rate; 0 = run ticks back to back", cxxopts::value<double>()->default_value("30"))
      ("updates", "updates per tick to sweep", cxxopts::value<std::string>()->default_value("1000,4000,16000,64000,256000"))
      ("skews", "Zipf skews to sweep", cxxopts::value<std::string>()->default_value("0,0.5,0.8,0.99"))
      ("default-updates", "updates per tick during the skew sweep", cxxopts::value<int>()->default_value("64000"))
      ("default-skew", "skew during the updates sweep", cxxopts::value<double>()->default_value("0.8"))
      ("algorithms", "algorithms to run (none is always the baseline)", cxxopts::value<std::string>()->default_value("naive,cou,pingpong"))
      ("interval-ms", "minimum ms between checkpoint starts (0 = back to back)", cxxopts::value<int>()->default_value("0"))
      ("dir", "scratch directory (default: a new one under /tmp)", cxxopts::value<std::string>())
      ("csv", "print CSV instead of a table")
      ("keep", "keep the last run's recovery directory (DIR/cell) for aftershock-inspect");
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
  c.default_updates = r["default-updates"].as<int>();
  c.default_skew = r["default-skew"].as<double>();
  c.interval_ms = r["interval-ms"].as<int>();
  c.csv = r.count("csv") > 0;
  c.keep = r.count("keep") > 0;
  c.algorithms.clear();
  std::stringstream ss(r["algorithms"].as<std::string>());
  for (std::string name; std::getline(ss, name, ',');) {
    Algorithm a;
    if (core::Status s = recovery::ParseAlgorithm(name, &a); !s.ok()) throw cxxopts::exceptions::exception(s.message());
    if (a != Algorithm::kNone) c.algorithms.push_back(a);
  }
  if (c.objects == 0 || c.object_size < 8 || c.object_size % 8 != 0 || c.ticks == 0 || c.hz < 0) {
    throw cxxopts::exceptions::exception("need --objects > 0, --object-size a multiple of 8, --ticks > 0, --hz >= 0");
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
  if (cfg.dir.empty()) {
    std::string tmpl = (std::filesystem::temp_directory_path() / "aftershock-ckpt-bench-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) {
      std::fprintf(stderr, "aftershock-ckpt-bench: cannot create a scratch directory under /tmp\n");
      return 2;
    }
    cfg.dir = tmpl;
  }
  std::vector<std::pair<int, double>> cells;
  for (int u : cfg.updates) cells.push_back({u, cfg.default_skew});
  for (double s : cfg.skews) cells.push_back({cfg.default_updates, s});
  std::printf(cfg.csv ? "# " : "");
  std::printf("state %u objects x %u bytes (%.1f MiB), %llu ticks at %g Hz, dir %s\n", cfg.objects,
              cfg.object_size, double(cfg.objects) * cfg.object_size / (1 << 20),
              static_cast<unsigned long long>(cfg.ticks), cfg.hz, cfg.dir.c_str());
  if (cfg.csv) {
    std::printf("algorithm,updates,skew,tick_ms,overhead_ms,max_tick_ms,mean_pause_ms,max_pause_ms,checkpoints,"
                "ckpt_ms,mb_written,restore_ms,replayed_ticks,recovery_ms,verified\n");
  } else {
    std::printf("%-9s %8s %5s %9s %11s %9s %10s %9s %6s %9s %9s %9s %7s %10s %s\n", "algorithm", "updates",
                "skew", "tick_ms", "overhead_ms", "max_tick", "mean_pause", "max_pause", "ckpts", "ckpt_ms", "MB_writ",
                "restore", "replay", "recovery", "ok");
  }
  int failures = 0;
  for (auto [updates, skew] : cells) {
    const Zipf zipf(cfg.objects, skew);
    std::vector<Algorithm> runs{Algorithm::kNone};
    runs.insert(runs.end(), cfg.algorithms.begin(), cfg.algorithms.end());
    double base_ms = 0;
    for (Algorithm a : runs) {
      CellResult r;
      core::Status s = RunCell(cfg, a, updates, zipf, cfg.dir + "/cell", &r);
      if (!s.ok()) {
        std::fprintf(stderr, "aftershock-ckpt-bench: %s, %d updates, skew %g: %s\n", recovery::AlgorithmName(a),
                     updates, skew, s.ToString().c_str());
        ++failures;
        continue;
      }
      if (a == Algorithm::kNone) base_ms = r.tick_ms;
      failures += r.verified ? 0 : 1;
      const char* fmt = cfg.csv ? "%s,%d,%g,%.4f,%.4f,%.3f,%.4f,%.3f,%llu,%.1f,%.1f,%.1f,%llu,%.1f,%s\n"
                                : "%-9s %8d %5.2f %9.4f %11.4f %9.3f %10.4f %9.3f %6llu %9.1f %9.1f %9.1f %7llu %10.1f %s\n";
      std::printf(fmt, recovery::AlgorithmName(a), updates, skew, r.tick_ms, r.tick_ms - base_ms, r.max_tick_ms,
                  r.mean_pause_ms, r.max_pause_ms, static_cast<unsigned long long>(r.checkpoints), r.ckpt_ms, r.mb_written,
                  r.restore_ms, static_cast<unsigned long long>(r.replayed), r.recovery_ms,
                  r.verified ? "yes" : "NO");
      std::fflush(stdout);
    }
  }
  if (!cfg.keep) std::filesystem::remove_all(cfg.dir);
  return failures == 0 ? 0 : 1;
}
