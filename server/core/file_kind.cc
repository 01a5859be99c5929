#include "server/core/file_kind.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace core {

Status ErrnoStatus(const std::string& op, const std::string& path, int err) {
  std::string msg = op + " " + path + ": " + std::strerror(err);
  if (err == ENOENT) return Status::NotFound(msg);
  if (err == ENOSPC || err == EDQUOT) return Status::NoSpace(msg);
  return Status::IoError(msg);
}

namespace {

Status NotRegular(const std::string& path, const char* what, mode_t mode) {
  return Status::IoError("open " + path + ": not a " + what + " (" + NonRegularKind(mode) + ")");
}

}  // namespace

const char* NonRegularKind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a pipe";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a file";
}

Status OpenRegularFile(const std::string& path, int flags, int* fd, const char* what) {
  *fd = -1;
  const int f = ::open(path.c_str(), flags | O_CLOEXEC | O_NONBLOCK, 0644);
  if (f < 0) {
    // Writing to a pipe without a reader fails (ENXIO), as does a directory opened for writing
    // (EISDIR): they get the same message as when the open succeeds.
    const int err = errno;
    if (struct stat st; ::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
      return NotRegular(path, what, st.st_mode);
    }
    return ErrnoStatus("open", path, err);
  }
  struct stat st;
  if (::fstat(f, &st) != 0) {
    const int err = errno;
    ::close(f);
    return ErrnoStatus("fstat", path, err);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(f);
    return NotRegular(path, what, st.st_mode);
  }
  const int fl = ::fcntl(f, F_GETFL);
  if (fl < 0 || ::fcntl(f, F_SETFL, fl & ~O_NONBLOCK) != 0) {
    const int err = errno;
    ::close(f);
    return ErrnoStatus("fcntl", path, err);
  }
  *fd = f;
  return Status::OK();
}

Status ReadRegularFile(const std::string& path, uint64_t max_bytes, std::string* out, const char* what) {
  out->clear();
  int fd;
  if (Status s = OpenRegularFile(path, O_RDONLY, &fd, what); !s.ok()) return s;
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return ErrnoStatus("fstat", path, err);
  }
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  if (size > max_bytes) {
    ::close(fd);
    return Status::InvalidArgument(path + ": a " + what + " of " + std::to_string(size) + " bytes, more than the " +
                                   std::to_string(max_bytes) + " bytes one can hold");
  }
  out->resize(static_cast<size_t>(size));
  size_t got = 0;
  while (got < out->size()) {
    const ssize_t n = ::read(fd, out->data() + got, out->size() - got);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      out->clear();
      return ErrnoStatus("read", path, err);
    }
    if (n == 0) break;  // shrank since fstat
    got += static_cast<size_t>(n);
  }
  out->resize(got);
  ::close(fd);
  return Status::OK();
}

}  // namespace core
