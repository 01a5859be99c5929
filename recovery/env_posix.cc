// PosixEnv: Env on open/pwrite/pread/fsync/fdatasync/rename/unlink/opendir. EINTR is retried;
// errors are core::ErrnoStatus (ENOSPC/EDQUOT: Status::NoSpace, else IoError with strerror).
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "recovery/env.h"
#include "server/core/file_kind.h"

namespace recovery {
namespace {

using core::ErrnoStatus;

class PosixFile final : public File {
 public:
  PosixFile(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  ~PosixFile() override { ::close(fd_); }

  core::Status Append(std::string_view data) override {
    uint64_t size = 0;
    if (core::Status s = Size(&size); !s.ok()) return s;
    return PWrite(size, data);
  }
  core::Status PWrite(uint64_t offset, std::string_view data) override {
    while (!data.empty()) {
      ssize_t n = ::pwrite(fd_, data.data(), data.size(), static_cast<off_t>(offset));
      if (n < 0) {
        if (errno == EINTR) continue;
        return ErrnoStatus("pwrite", path_, errno);
      }
      data.remove_prefix(static_cast<size_t>(n));
      offset += static_cast<uint64_t>(n);
    }
    return core::Status::OK();
  }
  core::Status ReadInto(uint64_t offset, size_t n, char* dst, size_t* got) override {
    *got = 0;
    while (*got < n) {
      ssize_t r = ::pread(fd_, dst + *got, n - *got, static_cast<off_t>(offset + *got));
      if (r < 0) {
        if (errno == EINTR) continue;
        return ErrnoStatus("pread", path_, errno);
      }
      if (r == 0) break;
      *got += static_cast<size_t>(r);
    }
    return core::Status::OK();
  }
  core::Status Sync() override {
    return ::fsync(fd_) == 0 ? core::Status::OK() : ErrnoStatus("fsync", path_, errno);
  }
  core::Status DataSync() override {
    return ::fdatasync(fd_) == 0 ? core::Status::OK() : ErrnoStatus("fdatasync", path_, errno);
  }
  core::Status Truncate(uint64_t size) override {
    return ::ftruncate(fd_, static_cast<off_t>(size)) == 0
               ? core::Status::OK()
               : ErrnoStatus("ftruncate", path_, errno);
  }
  core::Status Size(uint64_t* size) override {
    struct stat st;
    if (::fstat(fd_, &st) != 0) return ErrnoStatus("fstat", path_, errno);
    *size = static_cast<uint64_t>(st.st_size);
    return core::Status::OK();
  }
  const std::string& path() const override { return path_; }

 private:
  int fd_;
  std::string path_;
};

class PosixEnv final : public Env {
 public:
  core::Status Open(const std::string& path, OpenMode mode, std::unique_ptr<File>* file) override {
    int flags = 0;
    switch (mode) {
      case OpenMode::kRead: flags = O_RDONLY; break;
      case OpenMode::kReadWrite: flags = O_RDWR; break;
      case OpenMode::kCreate: flags = O_RDWR | O_CREAT; break;
      case OpenMode::kCreateTrunc: flags = O_RDWR | O_CREAT | O_TRUNC; break;
    }
    // A FIFO, a directory or a device is no log or backup: refused, and a FIFO without waiting.
    int fd;
    if (core::Status s = core::OpenRegularFile(path, flags, &fd); !s.ok()) return s;
    *file = std::make_unique<PosixFile>(fd, path);
    return core::Status::OK();
  }
  core::Status Rename(const std::string& from, const std::string& to) override {
    return ::rename(from.c_str(), to.c_str()) == 0 ? core::Status::OK()
                                                   : ErrnoStatus("rename", from + " -> " + to, errno);
  }
  core::Status Unlink(const std::string& path) override {
    return ::unlink(path.c_str()) == 0 ? core::Status::OK() : ErrnoStatus("unlink", path, errno);
  }
  core::Status ListDir(const std::string& dir, std::vector<std::string>* names) override {
    names->clear();
    DIR* d = ::opendir(dir.c_str());
    if (d == nullptr) return ErrnoStatus("opendir", dir, errno);
    while (struct dirent* e = ::readdir(d)) {
      std::string name = e->d_name;
      if (name != "." && name != "..") names->push_back(std::move(name));
    }
    ::closedir(d);
    return core::Status::OK();
  }
  core::Status SyncDir(const std::string& dir) override {
    int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return ErrnoStatus("open dir", dir, errno);
    int rc = ::fsync(fd);
    int err = errno;
    ::close(fd);
    return rc == 0 ? core::Status::OK() : ErrnoStatus("fsync dir", dir, err);
  }
  core::Status CreateDir(const std::string& dir) override {
    if (::mkdir(dir.c_str(), 0755) == 0 || errno == EEXIST) return core::Status::OK();
    return ErrnoStatus("mkdir", dir, errno);
  }
  bool FileExists(const std::string& path) override { return ::access(path.c_str(), F_OK) == 0; }
};

}  // namespace

Env* Env::Posix() {
  static PosixEnv* env = new PosixEnv;  // never destroyed: threads may outlive static destructors
  return env;
}

std::string JoinPath(const std::string& dir, const std::string& name) {
  if (dir.empty()) return name;
  if (dir.back() == '/') return dir + name;
  return dir + "/" + name;
}

core::Status ReadWholeFile(Env* env, const std::string& path, uint64_t max_bytes, std::string* out) {
  out->clear();
  std::unique_ptr<File> f;
  if (core::Status s = env->Open(path, OpenMode::kRead, &f); !s.ok()) return s;
  uint64_t size = 0;
  if (core::Status s = f->Size(&size); !s.ok()) return s;
  if (size > max_bytes) {
    return core::Status::Corruption(path + " is " + std::to_string(size) + " bytes, more than the " +
                                    std::to_string(max_bytes) + " it can be");
  }
  return f->Read(0, static_cast<size_t>(size), out);
}

}  // namespace recovery
