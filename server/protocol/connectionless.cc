// Text codec for the connectionless getchallenge/challenge and status exchanges.
#include "server/protocol/connectionless.h"

#include <algorithm>
#include <map>
#include <string_view>

#include "server/protocol/messages.h"
#include "server/protocol/protocol_format.h"

namespace proto {
namespace {

using core::Status;

constexpr std::string_view kGetChallengeText = "getchallenge";
constexpr std::string_view kStatusText = "status";
constexpr std::string_view kChallengeText = "challenge ";
constexpr char kPrintMarker = 'n';  // QuakeWorld's A2C_PRINT: the reply is text to show
constexpr uint32_t kMaxUserId = 65535;
constexpr uint32_t kMaxMinutes = 99999;

std::vector<uint8_t> WithPrefix(std::string_view text) {
  std::vector<uint8_t> out(kConnectionlessPrefix.size() + text.size());
  for (size_t i = 0; i < kConnectionlessPrefix.size(); ++i) out[i] = kConnectionlessPrefix[i];
  for (size_t i = 0; i < text.size(); ++i) {
    out[kConnectionlessPrefix.size() + i] = static_cast<uint8_t>(text[i]);
  }
  return out;
}

// The text after the prefix, or an error if the datagram is not a plausible connectionless one.
Status Body(std::span<const uint8_t> datagram, std::string_view what, std::string_view* body) {
  if (datagram.size() > kMaxConnectionlessBytes) {
    return Status::Corruption(std::string(what) + ": datagram over 1400 bytes");
  }
  if (!IsConnectionless(datagram)) return Status::Corruption(std::string(what) + ": no prefix");
  *body = std::string_view(reinterpret_cast<const char*>(datagram.data()) + 4, datagram.size() - 4);
  return Status::OK();
}

// Strict unsigned decimal: 1..20 digits, no sign, no leading zeros, value <= max.
bool ParseUnsigned(std::string_view s, uint64_t max, uint64_t* v) {
  if (s.empty() || s.size() > 20 || (s.size() > 1 && s[0] == '0')) return false;
  uint64_t x = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    uint64_t d = static_cast<uint64_t>(c - '0');
    if (x > (max - d) / 10) return false;
    x = x * 10 + d;
  }
  *v = x;
  return true;
}

bool ParseSigned(std::string_view s, int64_t min, int64_t max, int64_t* v) {
  bool neg = !s.empty() && s[0] == '-';
  if (neg) s.remove_prefix(1);
  uint64_t mag = 0;
  uint64_t limit = neg ? static_cast<uint64_t>(-min) : static_cast<uint64_t>(max);
  if (!ParseUnsigned(s, limit, &mag) || (neg && mag == 0)) return false;
  *v = neg ? -static_cast<int64_t>(mag) : static_cast<int64_t>(mag);
  return true;
}

Status BadStatus(const std::string& why) { return Status::InvalidArgument("status: " + why); }

Status CheckStatusFields(const ServerStatus& s) {
  if (s.hostname.size() > kMaxHostnameChars || !IsPrintableAscii(s.hostname) ||
      s.hostname.find('\\') != std::string::npos) {
    return BadStatus("hostname must be 0..63 printable ASCII without '\\'");
  }
  if (s.map.empty() || s.map.size() > kMaxMapNameChars || !IsPrintableAscii(s.map) ||
      s.map.find_first_of("\\ ") != std::string::npos) {
    return BadStatus("map must be 1..63 printable ASCII without '\\' or ' '");
  }
  return Status::OK();
}

Status CheckStatusPlayer(const StatusPlayer& p) {
  if (Status st = ValidateName(p.name); !st.ok()) return BadStatus("player " + st.message());
  if (p.frags < -32768 || p.frags > 32767) return BadStatus("player frags out of range");
  if (p.user_id > kMaxUserId) return BadStatus("player user id over 65535");
  if (p.minutes > kMaxMinutes) return BadStatus("player minutes over 99999");
  if (p.ping_ms > 9999) return BadStatus("player ping over 9999");
  return Status::OK();
}

// Splits "\k1\v1\k2\v2" into pairs.
Status ParseInfo(std::string_view line, std::map<std::string, std::string, std::less<>>* kv) {
  if (line.empty() || line[0] != '\\') return BadStatus("info line must start with '\\'");
  line.remove_prefix(1);
  while (true) {
    size_t k_end = line.find('\\');
    if (k_end == std::string_view::npos) return BadStatus("key without value");
    std::string_view key = line.substr(0, k_end);
    line.remove_prefix(k_end + 1);
    size_t v_end = line.find('\\');
    std::string_view value = line.substr(0, v_end);
    if (key.empty()) return BadStatus("empty key");
    if (!kv->emplace(std::string(key), std::string(value)).second) {
      return BadStatus("key '" + std::string(key) + "' repeated");
    }
    if (v_end == std::string_view::npos) return Status::OK();
    line.remove_prefix(v_end + 1);
  }
}

// Splits a player line into its space-separated fields; a field in double quotes may hold
// spaces (and is returned without the quotes).
bool SplitPlayerFields(std::string_view line, std::vector<std::string_view>* fields,
                       std::vector<bool>* quoted) {
  while (!line.empty()) {
    if (line[0] == '"') {
      const size_t close = line.find('"', 1);
      if (close == std::string_view::npos) return false;
      fields->push_back(line.substr(1, close - 1));
      quoted->push_back(true);
      line.remove_prefix(close + 1);
    } else {
      const size_t sp = line.find(' ');
      fields->push_back(line.substr(0, sp));
      quoted->push_back(false);
      line.remove_prefix(sp == std::string_view::npos ? line.size() : sp);
    }
    if (!line.empty()) {
      if (line[0] != ' ') return false;
      line.remove_prefix(1);
    }
  }
  return true;
}

// `<user_id> <frags> <minutes> <ping> "<name>" "<skin>" <top> <bottom>`.
Status ParsePlayerLine(std::string_view line, StatusPlayer* p) {
  std::vector<std::string_view> f;
  std::vector<bool> quoted;
  if (!SplitPlayerFields(line, &f, &quoted) || f.size() != 8 || !quoted[4] || !quoted[5]) {
    return BadStatus("player line needs id frags minutes ping \"name\" \"skin\" top bottom");
  }
  uint64_t id = 0, minutes = 0, ping = 0, colour = 0;
  int64_t frags = 0;
  if (!ParseUnsigned(f[0], kMaxUserId, &id)) return BadStatus("bad user id");
  if (!ParseSigned(f[1], -32768, 32767, &frags)) return BadStatus("bad frags");
  if (!ParseUnsigned(f[2], kMaxMinutes, &minutes)) return BadStatus("bad minutes");
  if (!ParseUnsigned(f[3], 9999, &ping)) return BadStatus("bad ping");
  if (!ParseUnsigned(f[6], 13, &colour) || !ParseUnsigned(f[7], 13, &colour)) {
    return BadStatus("bad colour");
  }
  p->user_id = static_cast<uint32_t>(id);
  p->frags = static_cast<int32_t>(frags);
  p->minutes = static_cast<uint32_t>(minutes);
  p->ping_ms = static_cast<uint32_t>(ping);
  p->name = std::string(f[4]);
  return CheckStatusPlayer(*p);
}

Status TakeNumber(const std::map<std::string, std::string, std::less<>>& kv, std::string_view key,
                  uint64_t max, uint64_t* v) {
  auto it = kv.find(key);
  if (it == kv.end()) return BadStatus("missing key '" + std::string(key) + "'");
  if (!ParseUnsigned(it->second, max, v)) {
    return BadStatus("bad value for '" + std::string(key) + "'");
  }
  return Status::OK();
}

}  // namespace

bool IsConnectionless(std::span<const uint8_t> datagram) {
  return datagram.size() >= kConnectionlessPrefix.size() &&
         std::equal(kConnectionlessPrefix.begin(), kConnectionlessPrefix.end(), datagram.begin());
}

std::vector<uint8_t> EncodeRequest(ConnectionlessRequest request) {
  return WithPrefix(request == ConnectionlessRequest::kGetChallenge ? kGetChallengeText
                                                                    : kStatusText);
}

StatusParts StatusPartsFromFlags(uint32_t flags) {
  if (flags == 0) return StatusParts{};
  return StatusParts{(flags & 1) != 0, (flags & 2) != 0};
}

Status ParseRequest(std::span<const uint8_t> datagram, ConnectionlessRequest* request,
                    StatusParts* parts) {
  std::string_view body;
  if (Status st = Body(datagram, "request", &body); !st.ok()) return st;
  if (!body.empty() && body.back() == '\n') body.remove_suffix(1);
  if (body == kGetChallengeText) {
    *request = ConnectionlessRequest::kGetChallenge;
  } else if (body == kStatusText) {
    *request = ConnectionlessRequest::kStatus;
    if (parts != nullptr) *parts = StatusParts{};
  } else if (body.starts_with(kStatusText) && body.size() > kStatusText.size() &&
             body[kStatusText.size()] == ' ') {
    uint64_t flags = 0;
    // Browsers send the flags as a plain decimal; tolerate a leading zero ("status 023").
    std::string_view arg = body.substr(kStatusText.size() + 1);
    while (arg.size() > 1 && arg[0] == '0') arg.remove_prefix(1);
    if (!ParseUnsigned(arg, 0x7FFFFFFF, &flags)) {
      return Status::InvalidArgument("request: status argument must be a decimal number");
    }
    *request = ConnectionlessRequest::kStatus;
    if (parts != nullptr) *parts = StatusPartsFromFlags(static_cast<uint32_t>(flags));
  } else {
    return Status::InvalidArgument("request: unknown connectionless command");
  }
  return Status::OK();
}

std::vector<uint8_t> EncodeChallengeReply(uint32_t challenge) {
  return WithPrefix(std::string(kChallengeText) + std::to_string(challenge) + "\n");
}

Status ParseChallengeReply(std::span<const uint8_t> datagram, uint32_t* challenge) {
  std::string_view body;
  if (Status st = Body(datagram, "challenge", &body); !st.ok()) return st;
  if (!body.starts_with(kChallengeText) || !body.ends_with('\n')) {
    return Status::InvalidArgument("challenge: expected \"challenge <n>\\n\"");
  }
  body.remove_prefix(kChallengeText.size());
  body.remove_suffix(1);
  uint64_t v = 0;
  if (!ParseUnsigned(body, UINT32_MAX, &v)) return Status::InvalidArgument("challenge: bad number");
  *challenge = static_cast<uint32_t>(v);
  return Status::OK();
}

Status EncodeStatusReply(const ServerStatus& s, std::vector<uint8_t>* out, size_t* players_listed,
                         StatusParts parts) {
  if (Status st = CheckStatusFields(s); !st.ok()) return st;
  for (const StatusPlayer& p : s.player_list) {
    if (Status st = CheckStatusPlayer(p); !st.ok()) return st;
  }
  std::string text(1, kPrintMarker);
  if (parts.info) {
    text += "\\hostname\\" + s.hostname + "\\map\\" + s.map + "\\maxclients\\" +
            std::to_string(s.max_players) + "\\players\\" + std::to_string(s.players) +
            "\\fraglimit\\" + std::to_string(s.fraglimit) + "\\uptime\\" +
            std::to_string(s.uptime_s) + "\\protocol\\" + std::to_string(s.protocol_version) +
            "\\tickrate\\" + std::to_string(s.tick_rate_hz) + "\\*version\\aftershock " +
            std::to_string(s.protocol_version) + "\n";
  }
  size_t listed = 0;
  for (const StatusPlayer& p : s.player_list) {
    if (!parts.players) break;
    std::string line = std::to_string(p.user_id) + " " + std::to_string(p.frags) + " " +
                       std::to_string(p.minutes) + " " + std::to_string(p.ping_ms) + " \"" +
                       p.name + "\" \"\" 0 0\n";
    if (4 + text.size() + line.size() > kMaxConnectionlessBytes) break;
    text += line;
    ++listed;
  }
  *out = WithPrefix(text);
  if (players_listed != nullptr) *players_listed = listed;
  return Status::OK();
}

Status ParseStatusReply(std::span<const uint8_t> datagram, ServerStatus* s) {
  std::string_view body;
  if (Status st = Body(datagram, "status", &body); !st.ok()) return st;
  if (body.empty() || body[0] != kPrintMarker || !body.ends_with('\n')) {
    return BadStatus("expected 'n' + info line ... ending in '\\n'");
  }
  body.remove_prefix(1);
  for (char c : body) {
    if (c != '\n' && (c < 0x20 || c > 0x7E)) return BadStatus("non-printable character");
  }
  size_t eol = body.find('\n');
  std::map<std::string, std::string, std::less<>> kv;
  if (Status st = ParseInfo(body.substr(0, eol), &kv); !st.ok()) return st;
  ServerStatus r;
  uint64_t v = 0;
  struct NumberKey {
    const char* key;
    uint64_t max;
  };
  static constexpr NumberKey kKeys[] = {{"players", UINT32_MAX},   {"maxclients", UINT32_MAX},
                                        {"fraglimit", UINT32_MAX}, {"uptime", UINT64_MAX},
                                        {"protocol", UINT32_MAX},  {"tickrate", UINT32_MAX}};
  uint64_t values[6] = {};
  for (size_t i = 0; i < 6; ++i) {
    if (Status st = TakeNumber(kv, kKeys[i].key, kKeys[i].max, &v); !st.ok()) return st;
    values[i] = v;
  }
  r.players = static_cast<uint32_t>(values[0]);
  r.max_players = static_cast<uint32_t>(values[1]);
  r.fraglimit = static_cast<uint32_t>(values[2]);
  r.uptime_s = values[3];
  r.protocol_version = static_cast<uint32_t>(values[4]);
  r.tick_rate_hz = static_cast<uint32_t>(values[5]);
  auto host = kv.find("hostname");
  auto map = kv.find("map");
  if (host == kv.end() || map == kv.end()) return BadStatus("missing hostname or map");
  r.hostname = host->second;
  r.map = map->second;
  if (Status st = CheckStatusFields(r); !st.ok()) return st;
  body.remove_prefix(eol + 1);
  while (!body.empty()) {
    eol = body.find('\n');
    StatusPlayer p;
    if (Status st = ParsePlayerLine(body.substr(0, eol), &p); !st.ok()) return st;
    r.player_list.push_back(std::move(p));
    body.remove_prefix(eol + 1);
  }
  *s = std::move(r);
  return Status::OK();
}

}  // namespace proto
