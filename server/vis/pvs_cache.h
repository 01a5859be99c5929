// The PVS cache: a built set is kept on disk, keyed by the map file's content and the build
// parameters, so a restart or a recovery loads it instead of building it again. The format is
// in pvs_format.h. Safe to call from one thread at a time per cache directory.
#pragma once

#include <string>

#include "maps/map.h"
#include "server/collision/collision_world.h"
#include "server/core/status.h"
#include "server/vis/pvs.h"
#include "server/vis/pvs_build.h"

namespace vis {

// What LoadOrBuildPvs did.
struct PvsCacheReport {
  bool loaded = false;       // true: read from `path`; false: built now
  std::string path;          // the cache file ("" when caching is off)
  std::string rejected;      // why an existing file was not used ("" if none was found or used)
  std::string save_error;    // why the built set could not be saved ("" if saved or caching off)
  PvsBuildStats stats;       // of the build (a loaded file carries its build's stats)
  double load_s = 0;         // wall time of the whole call
};

// The key a cache file is named after: the map file's bytes and every parameter that changes
// the bits (not `threads`).
uint64_t CacheKey(const std::string& map_bytes, const PvsParams& params);

// Serialises / parses one set. ParsePvs returns Corruption naming the failed check, and
// InvalidArgument if the file belongs to another key.
std::string SerializePvs(const Pvs& pvs, uint64_t key, const PvsBuildStats& stats);
core::Status ParsePvs(const std::string& bytes, uint64_t key, Pvs* out, PvsBuildStats* stats);

// Loads the set for `map` from `cache_dir` if a valid file for it is there, else builds it and
// writes it (atomically) for next time. An unreadable or damaged file is reported in
// report->rejected and replaced; a failed save is reported in report->save_error and is not an
// error (the set is still built). cache_dir "" turns the cache off. Errors: the map file cannot
// be read, or BuildPvs failed. `progress` is passed to BuildPvs: it is called only if the set is
// built.
core::Status LoadOrBuildPvs(const maps::Map& map, const collision::CollisionWorld& collision,
                            const PvsParams& params, const std::string& cache_dir, Pvs* out,
                            PvsCacheReport* report, const PvsProgressReporter& progress = {});

}  // namespace vis
