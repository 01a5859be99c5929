#include "server/core/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "server/core/file_kind.h"

namespace core {

namespace {

// The temp file's failure: its step and errno, with the temp file removed.
Status Fail(const std::string& step, const std::string& tmp, int fd, int err) {
  if (fd >= 0) ::close(fd);
  ::unlink(tmp.c_str());
  return Status::IoError(step + " " + tmp + ": " + std::strerror(err));
}

}  // namespace

Status CheckReplaceable(const std::string& path) {
  if (path.empty()) return Status::InvalidArgument("empty file name");
  const size_t slash = path.find_last_of('/');
  if (slash == path.size() - 1) return Status::InvalidArgument(path + ": names a directory, not a file");
  const std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0) {
    return Status::InvalidArgument(path + ": its directory " + dir + " cannot be used: " + std::strerror(errno));
  }
  if (!S_ISDIR(st.st_mode)) return Status::InvalidArgument(path + ": " + dir + " is not a directory");
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    return Status::InvalidArgument(path + " exists and is not a regular file (" + core::NonRegularKind(st.st_mode) +
                                   "): refusing to put a file in its place");
  }
  return Status::OK();
}

Status WriteFileAtomically(const std::string& path, const std::string& text) {
  if (Status s = CheckReplaceable(path); !s.ok()) return s;
  // A name of its own (mkstemp), so that writers of the same path never share a temp file.
  std::string tmp = path + ".tmp.XXXXXX";  // mkostemp fills in the X's
  const int fd = ::mkostemp(tmp.data(), O_CLOEXEC);
  if (fd < 0) return Status::IoError("open " + tmp + ": " + std::strerror(errno));
  // mkstemp makes 0600; reports and caches are for other users' tools too. (Reading the umask
  // would mean setting it, which is not thread-safe.)
  if (::fchmod(fd, 0644) != 0) return Fail("chmod", tmp, fd, errno);
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Fail("write", tmp, fd, errno);
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) return Fail("fsync", tmp, fd, errno);
  if (::close(fd) != 0) return Fail("close", tmp, -1, errno);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    return Status::IoError("rename " + tmp + " -> " + path + ": " + std::strerror(err));
  }
  return Status::OK();
}

}  // namespace core
