// The PVS cache file, shared by its writer and reader (pvs_cache.cc). One file per map content
// and build parameters: <cache dir>/<key as 16 hex digits>.pvs. All integers little-endian, as
// written by the x86-64 and arm64 machines we run on.
//
//   header   (kHeaderBytes)
//     magic        8 bytes  "ASPVS\r\n\x1a"
//     version      u32      kVersion
//     reserved     u32      0
//     key          u64      CacheKey(map bytes, params): what the file was built from
//     origin       3 x f32  PvsGrid::origin
//     cell_units   f32
//     nx, ny, nz   3 x i32
//     reach_cells  i32
//     range_units  f32
//     word_count   u64      number of row words
//     build stats  cells, open, closed i32; pairs, rays u64; build_s, visible_fraction f64
//   row offsets  cell_count x u32  (Pvs::kNoRow for a cell without a row)
//   row words    word_count x u64
//   trailer      u64      core::Hash64 of every byte before it, seed kTrailerSeed
//
// A file whose size, magic, version, key, grid, offsets or trailer disagree is damaged: the
// reader says which check failed, and the cache rebuilds and replaces it.
#pragma once

#include <cstddef>
#include <cstdint>

namespace vis::format {

inline constexpr char kMagic[8] = {'A', 'S', 'P', 'V', 'S', '\r', '\n', '\x1a'};
inline constexpr uint32_t kVersion = 1;
inline constexpr size_t kHeaderBytes = 8 + 4 + 4 + 8 + 12 + 4 + 12 + 4 + 4 + 8 + 12 + 16 + 16;
inline constexpr uint64_t kTrailerSeed = 0x5056535452ULL;
inline constexpr int kMaxCells = 1 << 24;  // a reader refuses larger grids before allocating
// A cache file is at most this long: a longer PVS is not saved, and a longer file is not read (it
// cannot be one of ours), so a huge file in the cache costs a rebuild, not the server's memory.
inline constexpr uint64_t kMaxFileBytes = 1ull << 30;

}  // namespace vis::format
