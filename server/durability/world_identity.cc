// world.id: formatting, parsing and the start-up check of a data directory's identity.
#include "server/durability/world_identity.h"

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

#include "recovery/backup_format.h"
#include "recovery/log_format.h"

namespace durability {

namespace {

constexpr char kHeaderLine[] = "aftershock-world 1";

struct Field {
  const char* key;
  uint64_t value;
  uint64_t max = UINT32_MAX;  // the largest value its WorldIdentity member holds
};

std::vector<Field> Fields(const WorldIdentity& id) {
  return {{"map_hash", id.map_hash, UINT64_MAX},  {"object_count", id.object_count},
          {"object_size", id.object_size},        {"max_players", id.max_players},
          {"first_pickup", id.first_pickup},      {"tick_ms", id.tick_ms},
          {"seed", id.seed, UINT64_MAX}};
}

core::Status WriteIdentity(recovery::Env* env, const std::string& dir, const WorldIdentity& id) {
  const std::string path = recovery::JoinPath(dir, kIdentityFileName);
  const std::string tmp = path + ".tmp";
  std::unique_ptr<recovery::File> f;
  core::Status s = env->Open(tmp, recovery::OpenMode::kCreateTrunc, &f);
  if (s.ok()) s = f->Append(FormatIdentity(id));
  if (s.ok()) s = f->Sync();
  f.reset();
  if (s.ok()) s = env->Rename(tmp, path);
  if (s.ok()) s = env->SyncDir(dir);
  return s;
}

}  // namespace

bool HoldsState(const std::vector<std::string>& names) {
  for (const std::string& n : names) {
    uint64_t number = 0;
    if (recovery::log_format::ParseSegmentFileName(n, &number)) return true;
    for (int b = 0; b < recovery::backup_format::kBackupCount; ++b) {
      if (n == recovery::backup_format::BackupFileName(b)) return true;
    }
  }
  return false;
}

WorldIdentity IdentityOf(const game::Globals& g) {
  // world.id keeps the configuration's fields that the file format names; the record-store
  // fields follow from object_count with the map (and are compared on restore, below).
  const game::WorldConfiguration c = game::ConfigurationOf(g);
  WorldIdentity id;
  id.map_hash = c.map_hash;
  id.object_count = c.object_count;
  id.object_size = c.object_size;
  id.max_players = c.max_players;
  id.first_pickup = c.first_pickup;
  id.tick_ms = c.tick_ms;
  id.seed = c.seed;
  return id;
}

std::string FormatIdentity(const WorldIdentity& id) {
  std::string out = std::string(kHeaderLine) + "\n";
  for (const Field& f : Fields(id)) {
    char line[96];
    std::snprintf(line, sizeof line, "%s %" PRIu64 "\n", f.key, f.value);
    out += line;
  }
  return out;
}

core::Status ParseIdentity(std::string_view text, const std::string& file, WorldIdentity* out) {
  const WorldIdentity want_keys;
  const std::vector<Field> keys = Fields(want_keys);
  std::vector<uint64_t> values(keys.size());
  std::vector<bool> seen(keys.size(), false);
  size_t pos = 0;
  int line_no = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string line(text.substr(pos, end - pos));
    pos = end + 1;
    ++line_no;
    auto bad = [&](const std::string& why) {
      return core::Status::Corruption(file + " line " + std::to_string(line_no) + ": " + why);
    };
    if (line_no == 1) {
      if (line != kHeaderLine) return bad("expected '" + std::string(kHeaderLine) + "'");
      continue;
    }
    const size_t space = line.find(' ');
    if (space == std::string::npos) return bad("expected 'key value'");
    const std::string key = line.substr(0, space);
    size_t k = 0;
    while (k < keys.size() && key != keys[k].key) ++k;
    if (k == keys.size()) return bad("unknown key '" + key + "'");
    if (seen[k]) return bad("key '" + key + "' given twice");
    char* stop = nullptr;
    const std::string digits = line.substr(space + 1);
    errno = 0;
    values[k] = std::strtoull(digits.c_str(), &stop, 10);
    if (digits.empty() || *stop != '\0' || digits[0] == '-' || errno == ERANGE) {
      return bad("bad number '" + digits + "'");
    }
    // A value past its member's width used to be cut to it: object_count 4294987650 matched a
    // world of 20354.
    if (values[k] > keys[k].max) return bad(key + " " + digits + " is out of range");
    seen[k] = true;
  }
  for (size_t k = 0; k < keys.size(); ++k) {
    if (!seen[k]) return core::Status::Corruption(file + ": missing key '" + keys[k].key + "'");
  }
  out->map_hash = values[0];
  out->object_count = static_cast<uint32_t>(values[1]);
  out->object_size = static_cast<uint32_t>(values[2]);
  out->max_players = static_cast<uint32_t>(values[3]);
  out->first_pickup = static_cast<uint32_t>(values[4]);
  out->tick_ms = static_cast<uint32_t>(values[5]);
  out->seed = values[6];
  return core::Status::OK();
}

core::Status ReadIdentity(recovery::Env* env, const std::string& dir, WorldIdentity* out) {
  const std::string path = recovery::JoinPath(dir, kIdentityFileName);
  std::string text;
  core::Status s = recovery::ReadWholeFile(env, path, kMaxIdentityBytes, &text);
  if (s.code() == core::Status::Code::kNotFound) {  // only that: a denied read says so itself
    return core::Status::InvalidArgument("data dir " + dir + " has no " + kIdentityFileName +
                                         ": it is missing, or no server wrote it");
  }
  if (!s.ok()) return s;
  return ParseIdentity(text, path, out);
}

core::Status CheckIdentity(recovery::Env* env, const std::string& dir, const WorldIdentity& mine) {
  WorldIdentity theirs;
  const core::Status s = ReadIdentity(env, dir, &theirs);
  if (!s.ok()) return s;
  if (theirs == mine) return core::Status::OK();
  std::string diff;
  const std::vector<Field> a = Fields(theirs), b = Fields(mine);
  for (size_t k = 0; k < a.size(); ++k) {
    if (a[k].value == b[k].value) continue;
    diff += std::string(diff.empty() ? "" : ", ") + a[k].key + " " + std::to_string(a[k].value) +
            " there, " + std::to_string(b[k].value) + " here";
  }
  return core::Status::InvalidArgument("data dir " + dir +
                                       " belongs to another map or configuration (" + diff +
                                       "); use another --data-dir or the original map and flags");
}

core::Status CheckOrCreateIdentity(recovery::Env* env, const std::string& dir,
                                   const WorldIdentity& mine) {
  const std::string path = recovery::JoinPath(dir, kIdentityFileName);
  if (!env->FileExists(path)) {
    std::vector<std::string> names;
    core::Status s = env->ListDir(dir, &names);
    if (!s.ok()) return s;
    if (HoldsState(names)) {
      return core::Status::InvalidArgument(
          "data dir " + dir + " holds log or backup files but no " + kIdentityFileName +
          ": it was not written by this server, or is damaged; check it with "
          "aftershock-inspect " + dir + " or use another --data-dir");
    }
    return WriteIdentity(env, dir, mine);
  }
  return CheckIdentity(env, dir, mine);
}

}  // namespace durability
