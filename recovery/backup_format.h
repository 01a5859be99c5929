// On-disk format of the double backup `backup-0.ckpt` / `backup-1.ckpt`, shared by the checkpoint
// writer, recovery and aftershock-inspect. Prose and byte tables: docs/recovery.md ("Backups").
//
// A backup file = a 4096-byte header region, then the image: object i at
// kHeaderRegion + i * object_size. The header (first 64 bytes of the region, rest zero):
//   magic u32 | version u32 | tick u64 | object_count u64 | object_size u32 | image_crc u32 |
//   sequence u64 | reserved 20 bytes (0) | masked CRC-32C of bytes 0..59 u32
// image_crc = Mask(CRC-32C of the N little-endian u32 values CRC-32C(object i)): a checksum over
// the whole image that the writer keeps up to date from per-object CRCs, so an incremental
// checkpoint needs no re-read of the unchanged objects.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "recovery/env.h"
#include "server/core/status.h"

namespace recovery::backup_format {

inline constexpr uint32_t kMagic = 0x4b435341;  // "ASCK" read as little-endian bytes
inline constexpr uint32_t kVersion = 1;
inline constexpr uint64_t kHeaderRegion = 4096;
inline constexpr size_t kHeaderSize = 64;
inline constexpr int kBackupCount = 2;

struct Header {
  uint64_t tick = 0;
  uint64_t object_count = 0;
  uint32_t object_size = 0;
  uint32_t image_crc = 0;  // masked
  uint64_t sequence = 0;   // checkpoints committed in this directory, counting both backups
};

std::string BackupFileName(int index);  // "backup-0.ckpt"
std::string TempFileName(int index);    // "backup-0.ckpt.tmp"

std::string EncodeHeader(const Header& h);  // kHeaderSize bytes
// Checks magic, version and header CRC; on failure says what is wrong.
core::Status DecodeHeader(std::string_view bytes, const std::string& file, Header* h);

// The header of each backup file of dir that exists, in index order: decoded (status OK), or
// why it could not be read or decoded. Reads only the headers.
struct HeaderRead {
  int index = 0;
  core::Status status;
  Header header;
};
std::vector<HeaderRead> ReadHeaders(Env* env, const std::string& dir);

// Image checksum from the per-object CRCs (see above).
uint32_t ImageCrc(const uint32_t* object_crcs, uint64_t count);

// Reads and fully verifies a backup file (header, size, image checksum). If object_count and
// object_size are non-zero they must match the header (else InvalidArgument). If image is not
// null, the image (object_count * object_size bytes) is copied there as it is read: only an OK
// status says it verified; after an error *image may hold part of the file.
core::Status LoadBackup(Env* env, const std::string& path, uint64_t object_count,
                        uint32_t object_size, void* image, Header* header);

}  // namespace recovery::backup_format
