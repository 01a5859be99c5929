// Env: the file-system operations recovery/ needs, behind an interface (like LevelDB's Env), so
// tests can run the real log and checkpoint code on FaultEnv and inject crashes and I/O errors.
// Paths are plain strings; every error Status names the operation and the path.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "server/core/status.h"

namespace recovery {

// An open file. Not thread-safe: one thread uses a handle at a time (the log thread or the
// checkpoint writer). Closing (destroying) a handle does NOT sync it.
class File {
 public:
  virtual ~File() = default;
  virtual core::Status Append(std::string_view data) = 0;                  // at the end
  virtual core::Status PWrite(uint64_t offset, std::string_view data) = 0;  // anywhere
  // Reads up to n bytes at offset into dst[0..n) and sets *got to how many (fewer only at end of
  // file). Large reads (a log segment) go into a ByteBuffer this way, never zeroed first.
  virtual core::Status ReadInto(uint64_t offset, size_t n, char* dst, size_t* got) = 0;
  // ReadInto into *out, sized to what was read (shorter only at end of file).
  core::Status Read(uint64_t offset, size_t n, std::string* out) {
    out->resize(n);
    size_t got = 0;
    core::Status s = ReadInto(offset, n, out->data(), &got);
    out->resize(got);
    return s;
  }
  virtual core::Status Sync() = 0;      // fsync: data and metadata
  virtual core::Status DataSync() = 0;  // fdatasync: data (and the size, which it needs)
  virtual core::Status Truncate(uint64_t size) = 0;
  virtual core::Status Size(uint64_t* size) = 0;
  virtual const std::string& path() const = 0;
};

enum class OpenMode {
  kRead,         // existing file, read only
  kReadWrite,    // existing file, read and write
  kCreate,       // create if missing, keep contents, read and write
  kCreateTrunc,  // create or truncate to 0, read and write
};

// Thread-safe: any thread may call any method.
class Env {
 public:
  virtual ~Env() = default;
  // Opens (or creates) a regular file. Anything else at `path` (a directory, a pipe, a device) is
  // IoError "not a regular file", returned at once: opening never waits for a pipe's writer.
  virtual core::Status Open(const std::string& path, OpenMode mode,
                            std::unique_ptr<File>* file) = 0;
  virtual core::Status Rename(const std::string& from, const std::string& to) = 0;
  virtual core::Status Unlink(const std::string& path) = 0;
  // File names (not paths) in dir, without "." and "..", in no particular order.
  virtual core::Status ListDir(const std::string& dir, std::vector<std::string>* names) = 0;
  virtual core::Status SyncDir(const std::string& dir) = 0;  // makes creates/renames/unlinks durable
  virtual core::Status CreateDir(const std::string& dir) = 0;  // ok if it exists
  virtual bool FileExists(const std::string& path) = 0;

  // The process-wide POSIX Env (never destroyed).
  static Env* Posix();
};

// Helpers built on Env.
std::string JoinPath(const std::string& dir, const std::string& name);
// Reads a whole file into *out. A file larger than max_bytes is Corruption ("<path> is N bytes,
// more than the M it can be") and nothing is read: a data directory's small files have a bound,
// and a huge (sparse) file in one's place must not take the process's memory.
core::Status ReadWholeFile(Env* env, const std::string& path, uint64_t max_bytes, std::string* out);

}  // namespace recovery
