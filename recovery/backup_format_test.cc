// LoadBackup on files built here byte by byte: an image of several read chunks, and objects
// larger than a chunk, load exactly; damage anywhere in the image, a short file and a header
// whose geometry the file cannot hold are Corruption, before anything of the header's size is
// allocated.
#include <stdlib.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "recovery/backup_format.h"
#include "recovery/crc32c.h"
#include "recovery/fault_env.h"

namespace recovery {

namespace bf = backup_format;

namespace {

// A committed backup file of `count` objects of `size` bytes, each byte a function of its place.
std::string MakeBackup(uint64_t count, uint32_t size, uint64_t tick, std::string* image) {
  image->assign(count * size, '\0');
  for (size_t i = 0; i < image->size(); ++i) (*image)[i] = static_cast<char>((i * 131 + tick) % 251);
  std::vector<uint32_t> crcs(count);
  for (uint64_t i = 0; i < count; ++i) crcs[i] = crc32c::Value(image->data() + i * size, size);
  bf::Header h;
  h.tick = tick;
  h.object_count = count;
  h.object_size = size;
  h.image_crc = bf::ImageCrc(crcs.data(), crcs.size());
  h.sequence = 7;
  std::string file = bf::EncodeHeader(h);
  file.resize(bf::kHeaderRegion, '\0');
  return file + *image;
}

core::Status Load(FaultEnv* env, const std::string& file, uint64_t count, uint32_t size,
                  std::string* image, bf::Header* h) {
  env->PutFile("/db/backup-0.ckpt", file);
  image->assign(count * size, '\0');
  return bf::LoadBackup(env, "/db/backup-0.ckpt", count, size, image->data(), h);
}

}  // namespace

TEST_CASE("LoadBackup reads an image of many chunks, and objects larger than a chunk, exactly") {
  FaultEnv env;
  REQUIRE(env.CreateDir("/db").ok());
  // 5,000 objects of 260 bytes (the game's records) span five 256 KiB chunks and a part; three
  // objects of 300,000 bytes are each a chunk of their own.
  for (auto [count, size] : {std::pair<uint64_t, uint32_t>{5000, 260}, {3, 300000}, {1, 1}}) {
    std::string want, got;
    const std::string file = MakeBackup(count, size, 42, &want);
    bf::Header h;
    const core::Status s = Load(&env, file, count, size, &got, &h);
    INFO(count << " x " << size << ": " << s.ToString());
    REQUIRE(s.ok());
    CHECK(h.tick == 42);
    CHECK(got == want);
    // Verification alone (no image, geometry from the header) says the same.
    CHECK(bf::LoadBackup(&env, "/db/backup-0.ckpt", 0, 0, nullptr, &h).ok());
  }
}

TEST_CASE("LoadBackup finds one flipped byte in any chunk, and a short file") {
  FaultEnv env;
  REQUIRE(env.CreateDir("/db").ok());
  constexpr uint64_t kCount = 5000;
  constexpr uint32_t kSize = 260;
  std::string want, got;
  const std::string file = MakeBackup(kCount, kSize, 9, &want);
  const uint64_t image_bytes = kCount * kSize;
  bf::Header h;
  for (uint64_t at : {uint64_t{0}, uint64_t{262143}, uint64_t{262144}, image_bytes / 2, image_bytes - 1}) {
    std::string bad = file;
    bad[bf::kHeaderRegion + at] ^= 0x20;
    const core::Status s = Load(&env, bad, kCount, kSize, &got, &h);
    INFO("flipped image byte " << at << ": " << s.ToString());
    CHECK(s.code() == core::Status::Code::kCorruption);
    CHECK(s.message().find("image checksum mismatch") != std::string::npos);
  }
  for (uint64_t cut : {uint64_t{1}, uint64_t{kSize}, image_bytes}) {
    const core::Status s = Load(&env, file.substr(0, file.size() - cut), kCount, kSize, &got, &h);
    INFO("cut " << cut << " bytes: " << s.ToString());
    CHECK(s.code() == core::Status::Code::kCorruption);
    CHECK(s.message().find("image is " + std::to_string(image_bytes - cut) + " bytes, header says " +
                           std::to_string(image_bytes)) != std::string::npos);
  }
}

TEST_CASE("LoadBackup refuses a header whose image the file cannot hold, allocating nothing for it") {
  // A header with a good checksum that claims 2^32 objects of 4 GiB - 1 bytes: aftershock-inspect
  // passes no geometry, so only the file's size stands between it and a read of that size. On
  // the real file system too, whose reads size their buffer from the request.
  bf::Header h;
  h.tick = 1;
  h.object_count = uint64_t{1} << 32;
  h.object_size = 0xffffffffu;
  h.sequence = 1;
  std::string file = bf::EncodeHeader(h);
  file.resize(bf::kHeaderRegion + 4096, '\0');
  const uint64_t claimed = h.object_count * h.object_size;

  FaultEnv fault_env;
  REQUIRE(fault_env.CreateDir("/db").ok());
  fault_env.PutFile("/db/backup-1.ckpt", file);
  std::string tmpl = (std::filesystem::temp_directory_path() / "aftershock-backup-XXXXXX").string();
  REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
  {
    std::unique_ptr<File> f;
    REQUIRE(Env::Posix()->Open(JoinPath(tmpl, "backup-1.ckpt"), OpenMode::kCreate, &f).ok());
    REQUIRE(f->Append(file).ok());
  }
  for (auto [env, dir] : {std::pair<Env*, std::string>{&fault_env, "/db"}, {Env::Posix(), tmpl}}) {
    bf::Header read;
    const core::Status s = bf::LoadBackup(env, JoinPath(dir, "backup-1.ckpt"), 0, 0, nullptr, &read);
    INFO(dir << ": " << s.ToString());
    CHECK(s.code() == core::Status::Code::kCorruption);
    CHECK(s.message().find("image is 4096 bytes, header says " + std::to_string(claimed)) !=
          std::string::npos);
  }
  std::filesystem::remove_all(tmpl);
}

}  // namespace recovery
