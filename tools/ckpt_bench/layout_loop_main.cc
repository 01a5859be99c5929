// aftershock-ckpt-layout-loop: what ping-pong's write hook costs per update in each memory layout
// it could use, with nothing else in the loop. Issue 16 asks whether Cao et al.'s cache-aware
// layout (SIGMOD'11: the copies interleaved with the application state, so that the second store
// of an update lands next to the first) helps on this machine. The real checkpointer cannot try
// it: the game's object array is the state, and its layout is the game's. So this loop replays the
// same writes as `aftershock-ckpt-bench` (65,536 objects of 256 B, uniform 8-byte cells, drawn
// before the run) in plain arrays laid out each way:
//   state      - the application's store alone (the baseline tick);
//   separate   - + a store into a copy array of its own and a flag bit per cell in a flag array
//                (what recovery::Checkpointer does);
//   object     - the two copies follow each object: [state][ping][pong] per object, flags apart;
//   line       - the copies follow each 64-byte line of the state: [line][ping][pong];
//   cell       - the copies share the state's own cache line, cell by cell: [state][ping][pong]
//                and 8 unused bytes per 8-byte cell, two cells per 64-byte line (SIGMOD'11's
//                interleaving "into one cache line, so that they will be fetched together"; the
//                state itself is then spread over 4x its size, which its own stores pay);
//   list       - a copy array of its own, and the cell's index appended to a list instead of a
//                flag (no read-modify-write, and the writer merges only the listed cells);
//   redo       - no copy array: each update appends (cell, new value) to the tick's buffer, which
//                the writer applies to its image (the copy as a log; its size grows with the
//                updates of a checkpoint period, which the real checkpointer would have to bound).
// Between ticks, untimed, the "writer" does what the real one does to the caches: it reads back
// every cell written in the previous tick from the copy that stopped being current, and clears
// its flags. Layouts alternate within each round; medians over rounds of the per-tick median.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <cxxopts.hpp>
#include <random>
#include <string>
#include <vector>

namespace {

constexpr uint64_t kObjects = 65536;
constexpr uint64_t kObjectBytes = 256;
constexpr uint64_t kCellsPerObject = kObjectBytes / 8;
constexpr uint64_t kLinesPerObject = kObjectBytes / 64;

enum class Layout { kState, kSeparate, kObject, kLine, kCell, kList, kRedo };
constexpr Layout kLayouts[] = {Layout::kState, Layout::kSeparate, Layout::kObject, Layout::kLine,
                               Layout::kCell, Layout::kList, Layout::kRedo};
constexpr uint64_t kCellGroupBytes = 32;  // kCell: state, ping, pong, unused
const char* Name(Layout l) {
  switch (l) {
    case Layout::kState: return "state";
    case Layout::kSeparate: return "separate";
    case Layout::kObject: return "object";
    case Layout::kLine: return "line";
    case Layout::kCell: return "cell";
    case Layout::kList: return "list";
    case Layout::kRedo: return "redo";
  }
  return "?";
}

struct Update {
  uint32_t object;
  uint32_t cell;
  uint64_t value;
};

// One layout's memory: the state and both copies in one allocation, wherever the layout puts them.
class Arena {
 public:
  explicit Arena(Layout layout)
      : layout_(layout),
        bytes_(layout == Layout::kCell ? kObjects * kCellsPerObject * kCellGroupBytes : kObjects * kObjectBytes * 3, 0),
        flags_{std::vector<uint8_t>(kObjects * kLinesPerObject), std::vector<uint8_t>(kObjects * kLinesPerObject)},
        image_(kObjects * kObjectBytes) {}

  uint8_t* State(uint64_t object, uint64_t cell) {
    switch (layout_) {
      case Layout::kObject: return &bytes_[object * 3 * kObjectBytes + cell * 8];
      case Layout::kLine: return &bytes_[(object * kLinesPerObject + cell / 8) * 192 + cell % 8 * 8];
      case Layout::kCell: return &bytes_[(object * kCellsPerObject + cell) * kCellGroupBytes];
      default: return &bytes_[object * kObjectBytes + cell * 8];
    }
  }
  uint8_t* Copy(int k, uint64_t object, uint64_t cell) {
    switch (layout_) {
      case Layout::kObject: return State(object, cell) + (1 + k) * kObjectBytes;
      case Layout::kLine: return State(object, cell) + (1 + k) * 64;
      case Layout::kCell: return State(object, cell) + (1 + k) * 8;
      default: return &bytes_[(1 + k) * kObjects * kObjectBytes + object * kObjectBytes + cell * 8];
    }
  }

  // The timed part: one tick's writes into the state and copy `ping`.
  void Tick(const Update* u, size_t n, int ping) {
    uint8_t* flags = flags_[ping].data();
    list_.clear();
    if (layout_ == Layout::kRedo) redo_.resize(n);
    for (size_t i = 0; i < n; ++i) {
      const uint64_t o = u[i].object, c = u[i].cell;
      std::memcpy(State(o, c), &u[i].value, 8);
      if (layout_ == Layout::kState) continue;
      if (layout_ == Layout::kRedo) {
        redo_[i] = {static_cast<uint32_t>(o * kCellsPerObject + c), u[i].value};
        continue;
      }
      std::memcpy(Copy(ping, o, c), &u[i].value, 8);
      if (layout_ == Layout::kList) {
        list_.push_back(static_cast<uint32_t>(o * kCellsPerObject + c));
      } else {
        flags[o * kLinesPerObject + c / 8] |= static_cast<uint8_t>(1u << (c % 8));
      }
    }
  }

  // Untimed: the writer's merge of copy `pong` into its image.
  void Merge(int pong) {
    if (layout_ == Layout::kState) return;
    if (layout_ == Layout::kRedo) {
      for (const RedoEntry& e : redo_) std::memcpy(&image_[e.cell * 8ull], &e.value, 8);
      return;
    }
    if (layout_ == Layout::kList) {
      for (uint32_t cell : list_) {
        std::memcpy(&image_[cell * 8ull], Copy(pong, cell / kCellsPerObject, cell % kCellsPerObject), 8);
      }
      return;
    }
    std::vector<uint8_t>& flags = flags_[pong];
    for (uint64_t f = 0; f < flags.size(); ++f) {
      if (flags[f] == 0) continue;
      const uint64_t o = f / kLinesPerObject;
      for (uint64_t b = 0; b < 8; ++b) {
        if ((flags[f] >> b & 1) == 0) continue;
        const uint64_t c = f % kLinesPerObject * 8 + b;
        std::memcpy(&image_[o * kObjectBytes + c * 8], Copy(pong, o, c), 8);
      }
      flags[f] = 0;
    }
  }

  // After the last Merge: the writer's image holds every cell's newest value, as the state does
  // (unwritten cells are zero in both). Checks the layout's address arithmetic.
  bool ImageMatchesState() {
    if (layout_ == Layout::kState) return true;
    for (uint64_t o = 0; o < kObjects; ++o) {
      for (uint64_t c = 0; c < kCellsPerObject; ++c) {
        if (std::memcmp(&image_[o * kObjectBytes + c * 8], State(o, c), 8) != 0) return false;
      }
    }
    return true;
  }

 private:
  Layout layout_;
  std::vector<uint8_t> bytes_;
  std::vector<uint8_t> flags_[2];
  std::vector<uint8_t> image_;
  std::vector<uint32_t> list_;
  struct RedoEntry {
    uint32_t cell;
    uint64_t value;
  };
  std::vector<RedoEntry> redo_;
};

// The median over the ticks of ns per update, for one layout; -1 if the writer's image came out
// different from the state.
double RunLayout(Layout layout, const std::vector<Update>& stream, size_t per_tick) {
  Arena arena(layout);
  const size_t ticks = stream.size() / per_tick;
  std::vector<double> ns(ticks);
  for (size_t t = 0; t < ticks; ++t) {
    const int ping = static_cast<int>(t & 1);
    const auto start = std::chrono::steady_clock::now();
    arena.Tick(&stream[t * per_tick], per_tick, ping);
    const auto end = std::chrono::steady_clock::now();
    ns[t] = std::chrono::duration<double, std::nano>(end - start).count() / static_cast<double>(per_tick);
    arena.Merge(ping);  // the copy just written is the one handed to the writer at the boundary
  }
  if (!arena.ImageMatchesState()) return -1;
  std::nth_element(ns.begin(), ns.begin() + static_cast<long>(ticks / 2), ns.end());
  return ns[ticks / 2];
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  cxxopts::Options options("aftershock-ckpt-layout-loop",
                           "ns per update of ping-pong's write pattern in seven memory layouts "
                           "(state, separate, object, line, cell, list, redo; see the source's header)");
  options.add_options()("updates", "updates per tick", cxxopts::value<int>()->default_value("16000"))(
      "ticks", "ticks per layout and round", cxxopts::value<int>()->default_value("500"))(
      "rounds", "rounds, layouts alternated in each", cxxopts::value<int>()->default_value("3"))(
      "seed", "random seed", cxxopts::value<uint64_t>()->default_value("1"))("h,help", "print this help");
  int updates = 0, ticks = 0, rounds = 0;
  uint64_t seed = 0;
  try {
    const cxxopts::ParseResult r = options.parse(argc, argv);
    if (r.count("help")) {
      std::printf("%s\n", options.help().c_str());
      return 0;
    }
    updates = r["updates"].as<int>();
    ticks = r["ticks"].as<int>();
    rounds = r["rounds"].as<int>();
    seed = r["seed"].as<uint64_t>();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "aftershock-ckpt-layout-loop: %s\n", e.what());
    return 2;
  }
  if (updates < 1 || updates > 10'000'000 || ticks < 1 || ticks > 100'000 || rounds < 1 || rounds > 100) {
    std::fprintf(stderr, "aftershock-ckpt-layout-loop: --updates 1..10000000, --ticks 1..100000, --rounds 1..100\n");
    return 2;
  }
  std::mt19937_64 rng(seed);
  std::vector<Update> stream(static_cast<size_t>(updates) * static_cast<size_t>(ticks));
  for (Update& u : stream) {
    u.object = static_cast<uint32_t>(rng() % kObjects);
    u.cell = static_cast<uint32_t>(rng() % kCellsPerObject);
    u.value = rng();
  }
  std::vector<std::vector<double>> results(std::size(kLayouts));
  for (int round = 0; round < rounds; ++round) {
    for (size_t k = 0; k < std::size(kLayouts); ++k) {
      // Alternate the order: odd rounds run the layouts backwards.
      const size_t i = round % 2 == 0 ? k : std::size(kLayouts) - 1 - k;
      const double ns = RunLayout(kLayouts[i], stream, static_cast<size_t>(updates));
      if (ns < 0) {
        std::fprintf(stderr, "aftershock-ckpt-layout-loop: layout %s: the merged copy differs from the state\n",
                     Name(kLayouts[i]));
        return 1;
      }
      results[i].push_back(ns);
    }
  }
  std::printf("%d objects of %d B, %d uniform 8-byte updates per tick, %d ticks, %d rounds\n",
              static_cast<int>(kObjects), static_cast<int>(kObjectBytes), updates, ticks, rounds);
  std::printf("%-9s %12s %12s %12s %14s\n", "layout", "ns/update", "min", "max", "added vs state");
  const double state = Median(results[0]);
  for (size_t i = 0; i < std::size(kLayouts); ++i) {
    const double m = Median(results[i]);
    std::printf("%-9s %12.2f %12.2f %12.2f %14.2f\n", Name(kLayouts[i]), m,
                *std::min_element(results[i].begin(), results[i].end()),
                *std::max_element(results[i].begin(), results[i].end()), m - state);
  }
  return 0;
}
