// PVS cache: serialisation (pvs_format.h), validation and the load-or-build policy.
#include "server/vis/pvs_cache.h"

#include <bit>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>

#include "maps/map_loader.h"
#include "server/core/atomic_file.h"
#include "server/core/file_kind.h"
#include "server/core/hash.h"
#include "server/vis/pvs_build.h"
#include "server/vis/pvs_format.h"

namespace vis {

static_assert(std::endian::native == std::endian::little, "the PVS file is little-endian");

namespace {

template <typename T>
void Put(std::string* out, T v) {
  char buf[sizeof(T)];
  std::memcpy(buf, &v, sizeof(T));
  out->append(buf, sizeof(T));
}

// Reads fixed-size values from a byte string; the caller checked the size first.
class Reader {
 public:
  explicit Reader(const std::string& bytes) : p_(bytes.data()) {}
  template <typename T>
  T Get() {
    T v;
    std::memcpy(&v, p_, sizeof(T));
    p_ += sizeof(T);
    return v;
  }
  const char* pos() const { return p_; }

 private:
  const char* p_;
};

// The file's grid must be the one BuildPvs chooses for this map and these parameters, bit for
// bit: its key says what it was built from, but a file whose trailer was recomputed after an edit
// passes every other check, and a cell size of 1e-30 then made cell lookups read far outside the
// rows (the server crashed when the first player joined).
core::Status CheckGrid(const PvsGrid& got, const PvsGrid& want) {
  const bool same = std::memcmp(&got.origin, &want.origin, sizeof got.origin) == 0 &&
                    std::bit_cast<uint32_t>(got.cell_units) == std::bit_cast<uint32_t>(want.cell_units) &&
                    got.nx == want.nx && got.ny == want.ny && got.nz == want.nz &&
                    got.reach_cells == want.reach_cells &&
                    std::bit_cast<uint32_t>(got.range_units) == std::bit_cast<uint32_t>(want.range_units);
  if (same) return core::Status::OK();
  return core::Status::Corruption("pvs file: its grid is not the one built for this map (" + std::to_string(got.nx) +
                                  "x" + std::to_string(got.ny) + "x" + std::to_string(got.nz) + " cells of " +
                                  std::to_string(got.cell_units) + " units, expected " + std::to_string(want.nx) + "x" +
                                  std::to_string(want.ny) + "x" + std::to_string(want.nz) + " of " +
                                  std::to_string(want.cell_units) + ")");
}

std::string Hex(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace

uint64_t CacheKey(const std::string& map_bytes, const PvsParams& p) {
  uint64_t h = core::Hash64(map_bytes.data(), map_bytes.size(), format::kVersion);
  h = core::Hash64(&p.range_units, sizeof p.range_units, h);
  h = core::Hash64(&p.min_cell_units, sizeof p.min_cell_units, h);
  h = core::Hash64(&p.work_budget, sizeof p.work_budget, h);
  h = core::Hash64(&p.rays_per_pair, sizeof p.rays_per_pair, h);
  return core::Hash64(&p.seed, sizeof p.seed, h);
}

std::string SerializePvs(const Pvs& pvs, uint64_t key, const PvsBuildStats& st) {
  const PvsGrid& g = pvs.grid();
  std::string out(format::kMagic, sizeof format::kMagic);
  Put<uint32_t>(&out, format::kVersion);
  Put<uint32_t>(&out, 0);
  Put<uint64_t>(&out, key);
  for (float f : {g.origin.x, g.origin.y, g.origin.z, g.cell_units}) Put<float>(&out, f);
  for (int i : {g.nx, g.ny, g.nz, g.reach_cells}) Put<int32_t>(&out, i);
  Put<float>(&out, g.range_units);
  Put<uint64_t>(&out, pvs.words().size());
  for (int i : {st.cells, st.open_cells, st.closed_cells}) Put<int32_t>(&out, i);
  Put<uint64_t>(&out, st.pairs_traced);
  Put<uint64_t>(&out, st.rays);
  Put<double>(&out, st.build_s);
  Put<double>(&out, st.visible_fraction);
  out.append(reinterpret_cast<const char*>(pvs.row_offsets().data()), pvs.row_offsets().size() * 4);
  out.append(reinterpret_cast<const char*>(pvs.words().data()), pvs.words().size() * 8);
  Put<uint64_t>(&out, core::Hash64(out.data(), out.size(), format::kTrailerSeed));
  return out;
}

core::Status ParsePvs(const std::string& bytes, uint64_t key, Pvs* out, PvsBuildStats* stats) {
  auto bad = [](const std::string& why) { return core::Status::Corruption("pvs file: " + why); };
  if (bytes.size() < format::kHeaderBytes + 8) return bad("shorter than its header");
  if (std::memcmp(bytes.data(), format::kMagic, sizeof format::kMagic) != 0) return bad("bad magic");
  Reader r(bytes);
  r.Get<uint64_t>();  // magic
  if (const uint32_t v = r.Get<uint32_t>(); v != format::kVersion) {
    return bad("version " + std::to_string(v) + ", expected " + std::to_string(format::kVersion));
  }
  r.Get<uint32_t>();
  if (r.Get<uint64_t>() != key) {
    return core::Status::InvalidArgument("pvs file: built for another map or other parameters");
  }
  PvsGrid g;
  g.origin = {r.Get<float>(), r.Get<float>(), r.Get<float>()};
  g.cell_units = r.Get<float>();
  g.nx = r.Get<int32_t>();
  g.ny = r.Get<int32_t>();
  g.nz = r.Get<int32_t>();
  g.reach_cells = r.Get<int32_t>();
  g.range_units = r.Get<float>();
  const uint64_t word_count = r.Get<uint64_t>();
  if (!(g.cell_units > 0) || !std::isfinite(g.cell_units) || g.nx < 1 || g.ny < 1 || g.nz < 1 ||
      g.reach_cells < 0 ||
      static_cast<int64_t>(g.nx) * g.ny * g.nz > format::kMaxCells) {
    return bad("impossible grid");
  }
  const size_t cells = static_cast<size_t>(g.cell_count());
  if (word_count > bytes.size() / 8 ||
      bytes.size() != format::kHeaderBytes + cells * 4 + word_count * 8 + 8) {
    return bad("size " + std::to_string(bytes.size()) + " does not match its grid (truncated?)");
  }
  const size_t body = bytes.size() - 8;
  uint64_t trailer;
  std::memcpy(&trailer, bytes.data() + body, 8);
  if (trailer != core::Hash64(bytes.data(), body, format::kTrailerSeed)) {
    return bad("checksum mismatch");
  }
  PvsBuildStats st;
  st.cells = r.Get<int32_t>();
  st.open_cells = r.Get<int32_t>();
  st.closed_cells = r.Get<int32_t>();
  st.pairs_traced = r.Get<uint64_t>();
  st.rays = r.Get<uint64_t>();
  st.build_s = r.Get<double>();
  st.visible_fraction = r.Get<double>();
  std::vector<uint32_t> offsets(cells);
  std::memcpy(offsets.data(), bytes.data() + format::kHeaderBytes, cells * 4);
  std::vector<uint64_t> words(word_count);
  std::memcpy(words.data(), bytes.data() + format::kHeaderBytes + cells * 4, word_count * 8);
  for (size_t c = 0; c < cells; ++c) {
    if (offsets[c] == Pvs::kNoRow) continue;
    const uint64_t need = (static_cast<uint64_t>(g.RowBoxOf(g.Coord(static_cast<int>(c))).bits()) + 63) / 64;
    if (offsets[c] + need > word_count) return bad("row of cell " + std::to_string(c) + " outside the file");
  }
  *out = Pvs(g, std::move(offsets), std::move(words));
  if (stats != nullptr) *stats = st;
  return core::Status::OK();
}

core::Status LoadOrBuildPvs(const maps::Map& map, const collision::CollisionWorld& collision,
                            const PvsParams& params, const std::string& cache_dir, Pvs* out,
                            PvsCacheReport* report, const PvsProgressReporter& progress) {
  const auto t0 = std::chrono::steady_clock::now();
  *report = PvsCacheReport{};
  std::string map_bytes;
  core::Status s = core::ReadRegularFile(map.path, maps::kMaxMapFileBytes, &map_bytes, "map file");
  if (!s.ok()) return core::Status::IoError("pvs cache: cannot read the map: " + s.message());
  const uint64_t key = CacheKey(map_bytes, params);
  if (!cache_dir.empty()) {
    report->path = (std::filesystem::path(cache_dir) / (Hex(key) + ".pvs")).string();
    std::string bytes;
    s = core::ReadRegularFile(report->path, format::kMaxFileBytes, &bytes, "PVS cache file");
    if (s.code() != core::Status::Code::kNotFound) {
      if (s.ok()) s = ParsePvs(bytes, key, out, &report->stats);
      if (s.ok()) s = CheckGrid(out->grid(), ChooseGrid(map.bounds, params));
      if (s.ok()) {
        report->loaded = true;
        report->load_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        return s;
      }
      report->rejected = report->path + ": " + s.ToString();
    }
  }
  s = BuildPvs(map, collision, params, out, &report->stats, progress);
  if (!s.ok()) return s;
  if (!cache_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(cache_dir, ec);
    const std::string bytes = SerializePvs(*out, key, report->stats);
    if (ec) {
      s = core::Status::IoError("create " + cache_dir + ": " + ec.message());
    } else if (bytes.size() > format::kMaxFileBytes) {
      s = core::Status::InvalidArgument("not saved: " + std::to_string(bytes.size()) + " bytes, more than " +
                                        std::to_string(format::kMaxFileBytes) + " a cache file may hold");
    } else {
      s = core::WriteFileAtomically(report->path, bytes);
    }
    if (!s.ok()) report->save_error = s.ToString();
  }
  report->load_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return core::Status::OK();
}

}  // namespace vis
