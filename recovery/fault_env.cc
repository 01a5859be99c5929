// FaultEnv implementation: one mutex over the whole in-memory file system keeps it simple and
// thread-safe (the log thread, the checkpoint writer and the test thread all use it at once).
#include "recovery/fault_env.h"

#include <algorithm>
#include <cstring>
#include <numeric>

namespace recovery {

struct FaultEnv::Inode {
  struct Pending {
    bool truncate = false;
    uint64_t offset = 0;  // write offset, or new size for a truncate
    std::string data;
  };
  std::string durable;
  std::string live;
  std::vector<Pending> pending;  // unsynced changes, in issue order: durable + pending = live
};

namespace {

void ApplyWrite(std::string* content, uint64_t offset, std::string_view data) {
  if (content->size() < offset + data.size()) content->resize(offset + data.size(), '\0');
  std::copy(data.begin(), data.end(), content->begin() + static_cast<std::ptrdiff_t>(offset));
}

std::string ParentDir(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash);
}

std::string StripSlash(std::string dir) {
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return dir;
}

}  // namespace

class FaultEnv::FaultFile final : public File {
 public:
  FaultFile(FaultEnv* env, std::shared_ptr<Inode> inode, std::string path, bool writable)
      REQUIRES(env->mu_)
      : env_(env), inode_(std::move(inode)), path_(std::move(path)), writable_(writable),
        generation_(env->generation_) {}

  core::Status Append(std::string_view data) override {
    core::MutexLock lock(&env_->mu_);
    if (core::Status s = Check(kOpWrite); !s.ok()) return s;
    return WriteLocked(inode_->live.size(), data);
  }
  core::Status PWrite(uint64_t offset, std::string_view data) override {
    core::MutexLock lock(&env_->mu_);
    if (core::Status s = Check(kOpWrite); !s.ok()) return s;
    return WriteLocked(offset, data);
  }
  core::Status ReadInto(uint64_t offset, size_t n, char* dst, size_t* got) override {
    core::MutexLock lock(&env_->mu_);
    *got = 0;
    if (core::Status s = Check(kOpRead); !s.ok()) return s;
    if (offset < inode_->live.size()) {
      *got = static_cast<size_t>(std::min<uint64_t>(n, inode_->live.size() - offset));
      std::memcpy(dst, inode_->live.data() + offset, *got);
    }
    return core::Status::OK();
  }
  core::Status Sync() override { return SyncLocked(); }
  core::Status DataSync() override { return SyncLocked(); }
  core::Status Truncate(uint64_t size) override {
    core::MutexLock lock(&env_->mu_);
    if (core::Status s = Check(kOpTruncate); !s.ok()) return s;
    if (!writable_) return core::Status::IoError("truncate " + path_ + ": opened read-only");
    inode_->live.resize(size, '\0');
    inode_->pending.push_back({true, size, {}});
    return core::Status::OK();
  }
  core::Status Size(uint64_t* size) override {
    core::MutexLock lock(&env_->mu_);
    if (env_->generation_ != generation_) return Dead("fstat");
    *size = inode_->live.size();
    return core::Status::OK();
  }
  const std::string& path() const override { return path_; }

 private:
  core::Status Dead(const char* op) const {
    return core::Status::IoError(std::string(op) + " " + path_ + ": handle from before crash");
  }
  core::Status Check(uint32_t op) REQUIRES(env_->mu_) {
    if (env_->generation_ != generation_) return Dead("file op");
    return env_->MaybeFail(op, path_);
  }
  core::Status WriteLocked(uint64_t offset, std::string_view data) REQUIRES(env_->mu_) {
    if (!writable_) return core::Status::IoError("write " + path_ + ": opened read-only");
    uint64_t end = offset + data.size();
    if (env_->space_limit_ != 0 && end > inode_->live.size() &&
        env_->LiveBytes() + (end - inode_->live.size()) > env_->space_limit_) {
      ++env_->injected_failures_;
      return core::Status::NoSpace("write " + path_ + ": No space left on device (injected)");
    }
    ApplyWrite(&inode_->live, offset, data);
    inode_->pending.push_back({false, offset, std::string(data)});
    return core::Status::OK();
  }
  core::Status SyncLocked() EXCLUDES(env_->mu_) {
    core::MutexLock lock(&env_->mu_);
    if (core::Status s = Check(kOpSync); !s.ok()) return s;
    inode_->durable = inode_->live;
    inode_->pending.clear();
    return core::Status::OK();
  }

  FaultEnv* env_;
  std::shared_ptr<Inode> inode_;
  std::string path_;
  bool writable_;
  uint64_t generation_;
};

FaultEnv::FaultEnv(uint64_t seed) : rng_(seed) {}
FaultEnv::~FaultEnv() = default;

core::Status FaultEnv::MaybeFail(uint32_t op, const std::string& path) {
  for (Fault& f : faults_) {
    if ((f.op_mask & op) == 0 || f.count == 0) continue;
    if (!f.path_part.empty() && path.find(f.path_part) == std::string::npos) continue;
    if (f.skip > 0) {
      --f.skip;
      continue;
    }
    if (f.count > 0) --f.count;
    ++injected_failures_;
    if (f.error.code() == core::Status::Code::kNoSpace) {
      return core::Status::NoSpace(path + ": " + f.error.message());
    }
    return core::Status::IoError(path + ": " + f.error.message());
  }
  return core::Status::OK();
}

uint64_t FaultEnv::LiveBytes() const {
  uint64_t total = 0;
  for (const auto& [name, inode] : live_names_) total += inode->live.size();
  return total;
}

core::Status FaultEnv::Open(const std::string& path, OpenMode mode, std::unique_ptr<File>* file) {
  core::MutexLock lock(&mu_);
  if (core::Status s = MaybeFail(kOpOpen, path); !s.ok()) return s;
  auto it = live_names_.find(path);
  bool create = mode == OpenMode::kCreate || mode == OpenMode::kCreateTrunc;
  if (it == live_names_.end()) {
    if (!create) return core::Status::NotFound("open " + path + ": No such file or directory");
    it = live_names_.emplace(path, std::make_shared<Inode>()).first;
  } else if (mode == OpenMode::kCreateTrunc && !it->second->live.empty()) {
    it->second->live.clear();
    it->second->pending.push_back({true, 0, {}});
  }
  *file = std::make_unique<FaultFile>(this, it->second, path, mode != OpenMode::kRead);
  return core::Status::OK();
}

core::Status FaultEnv::Rename(const std::string& from, const std::string& to) {
  core::MutexLock lock(&mu_);
  if (core::Status s = MaybeFail(kOpRename, from); !s.ok()) return s;
  auto it = live_names_.find(from);
  if (it == live_names_.end()) return core::Status::NotFound("rename " + from + ": no such file");
  std::shared_ptr<Inode> inode = it->second;
  live_names_.erase(it);
  live_names_[to] = std::move(inode);
  return core::Status::OK();
}

core::Status FaultEnv::Unlink(const std::string& path) {
  core::MutexLock lock(&mu_);
  if (core::Status s = MaybeFail(kOpUnlink, path); !s.ok()) return s;
  if (live_names_.erase(path) == 0) return core::Status::NotFound("unlink " + path + ": no such file");
  return core::Status::OK();
}

core::Status FaultEnv::ListDir(const std::string& dir, std::vector<std::string>* names) {
  core::MutexLock lock(&mu_);
  if (core::Status s = MaybeFail(kOpList, dir); !s.ok()) return s;
  names->clear();
  std::string d = StripSlash(dir);
  for (const auto& [path, inode] : live_names_) {
    if (ParentDir(path) == d) names->push_back(path.substr(d.empty() ? 0 : d.size() + 1));
  }
  return core::Status::OK();
}

core::Status FaultEnv::SyncDir(const std::string& dir) {
  core::MutexLock lock(&mu_);
  if (core::Status s = MaybeFail(kOpSyncDir, dir); !s.ok()) return s;
  std::string d = StripSlash(dir);
  std::erase_if(durable_names_, [&](const auto& e) { return ParentDir(e.first) == d; });
  for (const auto& [path, inode] : live_names_) {
    if (ParentDir(path) == d) durable_names_[path] = inode;
  }
  return core::Status::OK();
}

core::Status FaultEnv::CreateDir(const std::string&) { return core::Status::OK(); }

bool FaultEnv::FileExists(const std::string& path) {
  core::MutexLock lock(&mu_);
  return live_names_.count(path) != 0;
}

void FaultEnv::CrashInode(Inode* inode, CrashMode mode) {
  std::string content = inode->durable;
  const size_t n = inode->pending.size();
  auto apply = [&content](const Inode::Pending& p, bool torn, std::mt19937_64& rng) {
    if (p.truncate) {
      content.resize(p.offset, '\0');
      return;
    }
    size_t len = p.data.size();
    if (torn && len > 0) len = std::uniform_int_distribution<size_t>(0, len - 1)(rng);
    ApplyWrite(&content, p.offset, std::string_view(p.data).substr(0, len));
  };
  switch (mode) {
    case CrashMode::kDropUnsynced: break;
    case CrashMode::kKeepPrefix: {
      size_t k = std::uniform_int_distribution<size_t>(0, n)(rng_);
      for (size_t i = 0; i < k && i < n; ++i) apply(inode->pending[i], false, rng_);
      if (k < n) apply(inode->pending[k], true, rng_);
      break;
    }
    case CrashMode::kReorder: {
      std::vector<size_t> order(n);
      std::iota(order.begin(), order.end(), 0);
      std::shuffle(order.begin(), order.end(), rng_);
      for (size_t i : order) {
        uint64_t r = rng_();
        if (r % 2 == 0) apply(inode->pending[i], (r >> 8) % 4 == 0, rng_);
      }
      break;
    }
    case CrashMode::kGarble: {
      for (const Inode::Pending& p : inode->pending) {
        if (p.truncate || p.data.empty()) {
          apply(p, false, rng_);
          continue;
        }
        Inode::Pending g = p;
        size_t at = std::uniform_int_distribution<size_t>(0, g.data.size() - 1)(rng_);
        size_t len = std::min<size_t>(g.data.size() - at, 1 + rng_() % 64);
        for (size_t i = at; i < at + len; ++i) g.data[i] = static_cast<char>(g.data[i] ^ (1 + rng_() % 255));
        apply(g, false, rng_);
      }
      break;
    }
  }
  inode->durable = content;
  inode->live = std::move(content);
  inode->pending.clear();
}

void FaultEnv::Crash(CrashMode mode) {
  core::MutexLock lock(&mu_);
  ++generation_;
  for (auto& [path, inode] : durable_names_) {
    if (!inode->pending.empty()) CrashInode(inode.get(), mode);
  }
  live_names_ = durable_names_;
}

void FaultEnv::InjectFault(uint32_t op_mask, core::Status error, int skip, int count,
                           std::string path_part) {
  core::MutexLock lock(&mu_);
  faults_.push_back({op_mask, std::move(error), skip, count, std::move(path_part)});
}

void FaultEnv::SetSpaceLimit(uint64_t limit_bytes) {
  core::MutexLock lock(&mu_);
  space_limit_ = limit_bytes;
}

void FaultEnv::ClearFaults() {
  core::MutexLock lock(&mu_);
  faults_.clear();
  space_limit_ = 0;
}

bool FaultEnv::GetFile(const std::string& path, std::string* contents) {
  core::MutexLock lock(&mu_);
  auto it = live_names_.find(path);
  if (it == live_names_.end()) return false;
  *contents = it->second->live;
  return true;
}

void FaultEnv::PutFile(const std::string& path, const std::string& contents) {
  core::MutexLock lock(&mu_);
  auto inode = std::make_shared<Inode>();
  inode->durable = inode->live = contents;
  live_names_[path] = inode;
  durable_names_[path] = inode;
}

int FaultEnv::injected_failures() const {
  core::MutexLock lock(&mu_);
  return injected_failures_;
}

}  // namespace recovery
