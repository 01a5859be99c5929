// BackupWriter: the write order is image, sync, header, sync (, rename, sync dir). A crash before
// the header is synced leaves the old header, whose image checksum no longer matches a partially
// overwritten image, so recovery ignores this backup and uses the other one.
#include "recovery/backup_writer.h"

#include "recovery/crc32c.h"
#include "server/core/check.h"

namespace recovery {

namespace bf = backup_format;

BackupWriter::BackupWriter(Env* env, std::string dir, uint64_t object_count, uint32_t object_size)
    : env_(env), dir_(std::move(dir)), object_count_(object_count), object_size_(object_size) {
  for (auto& crcs : object_crcs_) crcs.assign(object_count, 0);
}

core::Status BackupWriter::Begin(int index, bool full) {
  AS_CHECK(index >= 0 && index < bf::kBackupCount, "backup index out of range");
  AS_CHECK(full || has_full_[index], "incremental checkpoint into a backup never written in full");
  index_ = index;
  full_ = full;
  const std::string path = JoinPath(dir_, full ? bf::TempFileName(index) : bf::BackupFileName(index));
  core::Status s = env_->Open(path, full ? OpenMode::kCreateTrunc : OpenMode::kReadWrite, &file_);
  if (s.ok() && full) {
    // Header region first (zeros: not committed), so the image lands at its fixed offset.
    s = file_->Append(std::string(bf::kHeaderRegion, '\0'));
  }
  if (s.ok() && full) has_full_[index] = false;  // the old file is about to be replaced
  return s;
}

core::Status BackupWriter::WriteObjects(uint64_t first, const char* data, uint64_t count) {
  AS_CHECK(file_ != nullptr && first + count <= object_count_, "write outside a checkpoint");
  const uint64_t bytes = count * object_size_;
  core::Status s = file_->PWrite(bf::kHeaderRegion + first * object_size_, std::string_view(data, bytes));
  if (!s.ok()) return s;
  crc32c::ValuesOfBlocks(data, object_size_, count, &object_crcs_[index_][first]);
  bytes_written_ += bytes;
  return core::Status::OK();
}

core::Status BackupWriter::Commit(uint64_t tick, uint64_t sequence) {
  AS_CHECK(file_ != nullptr, "commit outside a checkpoint");
  if (core::Status s = file_->DataSync(); !s.ok()) return s;
  bf::Header h;
  h.tick = tick;
  h.object_count = object_count_;
  h.object_size = object_size_;
  h.image_crc = bf::ImageCrc(object_crcs_[index_].data(), object_count_);
  h.sequence = sequence;
  if (core::Status s = file_->PWrite(0, bf::EncodeHeader(h)); !s.ok()) return s;
  if (core::Status s = file_->Sync(); !s.ok()) return s;
  bytes_written_ += bf::kHeaderSize;
  file_.reset();
  if (full_) {
    core::Status s = env_->Rename(JoinPath(dir_, bf::TempFileName(index_)),
                                  JoinPath(dir_, bf::BackupFileName(index_)));
    if (!s.ok()) return s;
    if (s = env_->SyncDir(dir_); !s.ok()) return s;
  }
  has_full_[index_] = true;
  index_ = -1;
  return core::Status::OK();
}

void BackupWriter::Abort() {
  if (index_ >= 0) has_full_[index_] = false;
  file_.reset();
  index_ = -1;
}

}  // namespace recovery
