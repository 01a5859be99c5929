// FaultEnv: an in-memory Env for crash and I/O-error tests (SQLite's crash-test idea). It keeps,
// per file, the durable bytes plus the list of writes not yet synced, and, per directory, the
// durable names plus the creates/renames/unlinks not yet made durable by SyncDir. Crash() keeps
// only what a power cut would: durable state plus, by mode, none, some (reordered, possibly torn)
// or garbled unsynced writes; open handles then fail. Calls can be made to fail with EIO/ENOSPC.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "recovery/env.h"
#include "server/core/mutex.h"
#include "server/core/thread_annotations.h"

namespace recovery {

class FaultEnv final : public Env {
 public:
  // What happens to unsynced writes (and unsynced directory changes) at a simulated crash.
  enum class CrashMode {
    kDropUnsynced,  // every unsynced write and directory change is lost
    kKeepPrefix,    // the first k unsynced writes of each file survive, the k-th possibly torn
    kReorder,       // a random subset of unsynced writes survives, each possibly torn
    kGarble,        // unsynced writes reach the disk but random bytes in them are garbage
  };
  // Operation classes for InjectFault (bit mask).
  enum Op : uint32_t {
    kOpOpen = 1, kOpRead = 2, kOpWrite = 4, kOpSync = 8, kOpRename = 16, kOpUnlink = 32,
    kOpSyncDir = 64, kOpTruncate = 128, kOpList = 256,
  };

  explicit FaultEnv(uint64_t seed = 1);
  ~FaultEnv() override;

  core::Status Open(const std::string& path, OpenMode mode, std::unique_ptr<File>* file) override;
  core::Status Rename(const std::string& from, const std::string& to) override;
  core::Status Unlink(const std::string& path) override;
  core::Status ListDir(const std::string& dir, std::vector<std::string>* names) override;
  core::Status SyncDir(const std::string& dir) override;
  core::Status CreateDir(const std::string& dir) override;
  bool FileExists(const std::string& path) override;

  // Simulated power cut. Afterwards every handle opened before fails with IoError, and the file
  // system holds what survived; the Env can be used again (to run recovery).
  void Crash(CrashMode mode);

  // The next calls of the classes in op_mask on paths containing path_part fail with `error`:
  // `skip` matching calls succeed first, then `count` fail (count < 0: all from then on).
  // A failing write applies nothing.
  void InjectFault(uint32_t op_mask, core::Status error, int skip = 0, int count = 1,
                   std::string path_part = "");
  // Total live bytes over all files may not exceed limit: a write that would grow past it fails
  // with NoSpace and applies nothing. 0 = no limit.
  void SetSpaceLimit(uint64_t limit_bytes);
  void ClearFaults();

  // Test helpers: direct access to a file's current (live) contents, bypassing faults.
  bool GetFile(const std::string& path, std::string* contents);
  void PutFile(const std::string& path, const std::string& contents);  // durable at once
  int injected_failures() const;

 private:
  struct Inode;
  class FaultFile;
  struct Fault {
    uint32_t op_mask;
    core::Status error;
    int skip;
    int count;
    std::string path_part;
  };

  core::Status MaybeFail(uint32_t op, const std::string& path) REQUIRES(mu_);
  uint64_t LiveBytes() const REQUIRES(mu_);
  void CrashInode(Inode* inode, CrashMode mode) REQUIRES(mu_);

  // Also guards every Inode's contents (reached only through the maps below or a FaultFile).
  mutable core::Mutex mu_;
  std::mt19937_64 rng_ GUARDED_BY(mu_);
  uint64_t generation_ GUARDED_BY(mu_) = 0;  // bumped by Crash(): handles from older generations are dead
  std::map<std::string, std::shared_ptr<Inode>> live_names_ GUARDED_BY(mu_);
  std::map<std::string, std::shared_ptr<Inode>> durable_names_ GUARDED_BY(mu_);
  std::vector<Fault> faults_ GUARDED_BY(mu_);
  uint64_t space_limit_ GUARDED_BY(mu_) = 0;
  int injected_failures_ GUARDED_BY(mu_) = 0;
};

}  // namespace recovery
