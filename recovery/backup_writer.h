// BackupWriter: writes one checkpoint into one of the two backup files. A full checkpoint (every
// object) goes to a temp file that is synced, renamed over the backup and published with a
// directory sync; an incremental one overwrites the dirty objects in place, in offset order.
// Either way the header is written and synced LAST: it is the commit record.
// Used by the checkpoint writer thread only.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "recovery/backup_format.h"
#include "recovery/env.h"

namespace recovery {

class BackupWriter {
 public:
  BackupWriter(Env* env, std::string dir, uint64_t object_count, uint32_t object_size);

  // Starts a checkpoint into backup `index`. full = every object will be written (temp file).
  // An incremental checkpoint requires that this writer has already written a full one to
  // `index` (it knows that backup's per-object CRCs).
  core::Status Begin(int index, bool full);
  // Writes objects [first, first + count) from data (count * object_size bytes), any order.
  core::Status WriteObjects(uint64_t first, const char* data, uint64_t count);
  // Syncs the image, writes and syncs the header, and for a full checkpoint renames the temp
  // file over the backup and syncs the directory. On success the backup holds `tick`.
  core::Status Commit(uint64_t tick, uint64_t sequence);
  // After a failed Begin/WriteObjects/Commit: forget the open file; the backup must be written
  // in full next time (its CRCs and contents are no longer known).
  void Abort();

  bool has_full(int index) const { return has_full_[index]; }
  uint64_t bytes_written() const { return bytes_written_; }

 private:
  Env* env_;
  std::string dir_;
  uint64_t object_count_;
  uint32_t object_size_;
  std::vector<uint32_t> object_crcs_[backup_format::kBackupCount];  // as stored in each file
  bool has_full_[backup_format::kBackupCount] = {false, false};
  int index_ = -1;
  bool full_ = false;
  std::unique_ptr<File> file_;
  uint64_t bytes_written_ = 0;
};

}  // namespace recovery
