// Backup header encoding and full verification of a backup file.
#include "recovery/backup_format.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <vector>

#include "recovery/coding.h"
#include "recovery/crc32c.h"

namespace recovery::backup_format {

namespace {
// LoadBackup reads the image this much at a time (rounded to whole objects): small enough to stay
// in the L2 cache between the read, the checksum and the copy.
constexpr uint64_t kLoadChunkBytes = 256 * 1024;
}  // namespace

static_assert(std::endian::native == std::endian::little, "ImageCrc hashes u32s as stored in memory");

std::string BackupFileName(int index) { return "backup-" + std::to_string(index) + ".ckpt"; }
std::string TempFileName(int index) { return BackupFileName(index) + ".tmp"; }

std::string EncodeHeader(const Header& h) {
  std::string out(kHeaderSize, '\0');
  char* p = out.data();
  EncodeFixed32(p, kMagic);
  EncodeFixed32(p + 4, kVersion);
  EncodeFixed64(p + 8, h.tick);
  EncodeFixed64(p + 16, h.object_count);
  EncodeFixed32(p + 24, h.object_size);
  EncodeFixed32(p + 28, h.image_crc);
  EncodeFixed64(p + 32, h.sequence);
  EncodeFixed32(p + 60, crc32c::Mask(crc32c::Value(p, 60)));
  return out;
}

core::Status DecodeHeader(std::string_view bytes, const std::string& file, Header* h) {
  if (bytes.size() < kHeaderSize) return core::Status::Corruption(file + ": file shorter than its header");
  const char* p = bytes.data();
  if (DecodeFixed32(p) != kMagic) return core::Status::Corruption(file + ": bad magic (not a committed backup)");
  if (crc32c::Unmask(DecodeFixed32(p + 60)) != crc32c::Value(p, 60)) {
    return core::Status::Corruption(file + ": header checksum mismatch");
  }
  if (DecodeFixed32(p + 4) != kVersion) {
    return core::Status::Corruption(file + ": unsupported backup version " + std::to_string(DecodeFixed32(p + 4)));
  }
  h->tick = DecodeFixed64(p + 8);
  h->object_count = DecodeFixed64(p + 16);
  h->object_size = DecodeFixed32(p + 24);
  h->image_crc = DecodeFixed32(p + 28);
  h->sequence = DecodeFixed64(p + 32);
  if (h->object_size == 0 || h->object_count == 0 || h->object_count > (1ull << 32)) {
    return core::Status::Corruption(file + ": header has an impossible geometry");
  }
  return core::Status::OK();
}

std::vector<HeaderRead> ReadHeaders(Env* env, const std::string& dir) {
  std::vector<HeaderRead> out;
  for (int b = 0; b < kBackupCount; ++b) {
    const std::string path = JoinPath(dir, BackupFileName(b));
    if (!env->FileExists(path)) continue;
    HeaderRead r;
    r.index = b;
    std::unique_ptr<File> f;
    std::string head;
    r.status = env->Open(path, OpenMode::kRead, &f);
    if (r.status.ok()) r.status = f->Read(0, kHeaderSize, &head);
    if (r.status.ok()) r.status = DecodeHeader(head, path, &r.header);
    out.push_back(std::move(r));
  }
  return out;
}

uint32_t ImageCrc(const uint32_t* object_crcs, uint64_t count) {
  return crc32c::Mask(crc32c::Value(object_crcs, count * sizeof(uint32_t)));
}

core::Status LoadBackup(Env* env, const std::string& path, uint64_t object_count,
                        uint32_t object_size, void* image, Header* header) {
  std::unique_ptr<File> f;
  if (core::Status s = env->Open(path, OpenMode::kRead, &f); !s.ok()) return s;
  std::string head;
  if (core::Status s = f->Read(0, kHeaderSize, &head); !s.ok()) return s;
  if (core::Status s = DecodeHeader(head, path, header); !s.ok()) return s;
  if (object_count != 0 && (header->object_count != object_count || header->object_size != object_size)) {
    return core::Status::InvalidArgument(
        path + " holds " + std::to_string(header->object_count) + " objects of " +
        std::to_string(header->object_size) + " bytes, but the state has " +
        std::to_string(object_count) + " objects of " + std::to_string(object_size) + " bytes");
  }
  // The image is read in chunks of whole objects into one buffer that stays in the cache, each
  // object checksummed there and copied on to `image`: no buffer of the image's size to allocate
  // and fault in, and the size is checked against the file before anything is allocated.
  const uint64_t image_bytes = header->object_count * header->object_size;
  uint64_t file_size = 0;
  if (core::Status s = f->Size(&file_size); !s.ok()) return s;
  const uint64_t have = file_size > kHeaderRegion ? file_size - kHeaderRegion : 0;
  if (have < image_bytes) {
    return core::Status::Corruption(path + ": image is " + std::to_string(have) +
                                    " bytes, header says " + std::to_string(image_bytes));
  }
  // The image checksum is the CRC of the objects' CRCs (ImageCrc), extended chunk by chunk: a
  // vector of every object's CRC was 16 GiB for a 4 GiB sparse file whose header claimed 2^32
  // objects of a byte, and aftershock-inspect aborted allocating it.
  const uint64_t per_chunk = std::max<uint64_t>(1, kLoadChunkBytes / header->object_size);
  std::vector<uint32_t> crcs(std::min(per_chunk, header->object_count));
  uint32_t image_crc = 0;
  char* out = static_cast<char*>(image);
  std::string chunk;
  for (uint64_t first = 0; first < header->object_count; first += per_chunk) {
    const uint64_t n = std::min(per_chunk, header->object_count - first);
    const uint64_t offset = first * header->object_size;
    if (core::Status s = f->Read(kHeaderRegion + offset, n * header->object_size, &chunk); !s.ok()) {
      return s;
    }
    if (chunk.size() != n * header->object_size) {  // the file shrank since its size was read
      return core::Status::Corruption(path + ": image is " + std::to_string(offset + chunk.size()) +
                                      " bytes, header says " + std::to_string(image_bytes));
    }
    for (uint64_t i = 0; i < n; ++i) {
      crcs[i] = crc32c::Value(chunk.data() + i * header->object_size, header->object_size);
    }
    image_crc = crc32c::Extend(image_crc, crcs.data(), n * sizeof(uint32_t));
    if (out != nullptr) std::memcpy(out + offset, chunk.data(), chunk.size());
  }
  if (crc32c::Mask(image_crc) != header->image_crc) {  // ImageCrc of all the objects' CRCs
    return core::Status::Corruption(path + ": image checksum mismatch (tick " +
                                    std::to_string(header->tick) + ")");
  }
  return core::Status::OK();
}

}  // namespace recovery::backup_format
