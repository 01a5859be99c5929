// Command-line parsing for aftershock-bots (cxxopts): flags, defaults, cross-field rules.
#include "client_bots/bot_options.h"

#include <algorithm>
#include <cmath>
#include <cxxopts.hpp>
#include <vector>

#include "server/core/atomic_file.h"
#include "server/core/flag_error.h"
#include "server/core/int_range.h"
#include "server/protocol/messages.h"
#include "server/protocol/protocol_format.h"

namespace bots {

const char* BehaviorName(Behavior b) {
  switch (b) {
    case Behavior::kWander: return "wander";
    case Behavior::kFight: return "fight";
    case Behavior::kItems: return "items";
    case Behavior::kHotspot: return "hotspot";
    case Behavior::kMixed: return "mixed";
  }
  return "?";
}

int BotOptions::command_ms() const {
  const long ms = std::lround(1000.0 / rate_hz);
  return static_cast<int>(std::clamp<long>(ms, proto::kMinCommandMs, proto::kMaxCommandMs));
}

namespace {

cxxopts::Options MakeOptions() {
  cxxopts::Options o("aftershock-bots",
                     "Aftershock bot cluster: one process that plays as many clients, and measures\n"
                     "response rate and response time as the players feel them.");
  // clang-format off
  o.add_options()
    ("server", "Server lobby as HOST:PORT (IPv4 or name); a comma list spreads the bots over several servers",
     cxxopts::value<std::string>()->default_value("127.0.0.1:" + std::to_string(proto::kDefaultBasePort)))
    ("bots", "Number of bots (1..100000)", cxxopts::value<int>()->default_value("1"))
    ("rate", "Commands per second per bot (1..250); each covers 1000/rate ms", cxxopts::value<double>()->default_value("30"))
    ("duration", "Length of the whole run in seconds, ramp included", cxxopts::value<double>()->default_value("10"))
    ("ramp", "Spread the joins evenly over this many seconds", cxxopts::value<double>()->default_value("0"))
    ("seed", "Seed for behaviours, jitter and identity tokens", cxxopts::value<uint64_t>()->default_value("1"))
    ("threads", "Bot threads (1..64); each drives its bots from one loop", cxxopts::value<int>()->default_value("1"))
    ("behavior", "wander, fight, items, hotspot or mixed", cxxopts::value<std::string>()->default_value("mixed"))
    ("identity-prefix", "Bot i plays as identity NAME-i (token derived from --seed and the name)",
     cxxopts::value<std::string>()->default_value("bot"))
    ("out", "Write the JSON summary to this file (schema in docs/bots.md)", cxxopts::value<std::string>()->default_value(""))
    ("series", "Write one CSV row per second to this file", cxxopts::value<std::string>()->default_value(""))
    ("verify", "Count durability violations: a rejoin reporting fewer applied commands than seen")
    ("silence-ms", "Treat the server as lost after this many ms without a snapshot (100..60000)",
     cxxopts::value<int>()->default_value("750"))
    ("drain-ms", "At the end of the run (--duration, SIGINT, SIGTERM) wait at most this many ms for the "
                 "answers to the commands in flight before they count as unanswered; a second signal "
                 "ends the wait (0..600000)",
     cxxopts::value<int>()->default_value("500"))
    ("map", "Map file for navigation (default: the server's map, found under maps/ by its status name)",
     cxxopts::value<std::string>()->default_value(""))
    ("quiet", "No console line every second")
    ("h,help", "Print this help");
  // clang-format on
  return o;
}

ParseResult Error(const std::string& msg, const std::string& help) {
  return {ParseOutcome::kError, "error: " + msg + "\n\n" + help};
}

// "host:port" -> parts; false if malformed.
bool SplitHostPort(const std::string& text, std::string* host, uint16_t* port) {
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size()) return false;
  const std::string port_text = text.substr(colon + 1);
  if (port_text.size() > 5 || !std::all_of(port_text.begin(), port_text.end(), ::isdigit)) return false;
  const int p = std::stoi(port_text);
  if (p < 1 || p > 65535) return false;
  *host = text.substr(0, colon);
  *port = static_cast<uint16_t>(p);
  return true;
}

bool ParseBehavior(const std::string& text, Behavior* out) {
  for (Behavior b : {Behavior::kWander, Behavior::kFight, Behavior::kItems, Behavior::kHotspot,
                     Behavior::kMixed}) {
    if (text == BehaviorName(b)) {
      *out = b;
      return true;
    }
  }
  return false;
}

}  // namespace

// The settings' ranges: ValidateBotOptions checks them and its errors quote them.
constexpr core::IntRange kBots{"--bots", 1, 100000};
constexpr double kMinRateHz = 1, kMaxRateHz = 250;
constexpr core::IntRange kThreads{"--threads", 1, 64};
constexpr core::IntRange kSilenceMs{"--silence-ms", 100, 60000};
constexpr core::IntRange kDrainMs{"--drain-ms", 0, 600000};

core::Status ValidateBotOptions(const BotOptions& o) {
  if (core::Status s = kBots.Check(o.bots); !s.ok()) return s;
  if (!(o.rate_hz >= kMinRateHz && o.rate_hz <= kMaxRateHz)) {
    return core::Status::InvalidArgument("--rate must be " + std::to_string(static_cast<int>(kMinRateHz)) +
                                         ".." + std::to_string(static_cast<int>(kMaxRateHz)));
  }
  if (!(o.duration_s > 0) || !std::isfinite(o.duration_s)) {
    return core::Status::InvalidArgument("--duration must be > 0");
  }
  if (!(o.ramp_s >= 0) || !std::isfinite(o.ramp_s)) return core::Status::InvalidArgument("--ramp must be >= 0");
  if (core::Status s = kThreads.Check(o.threads); !s.ok()) return s;
  if (core::Status s = kSilenceMs.Check(o.silence_ms); !s.ok()) return s;
  if (core::Status s = kDrainMs.Check(o.drain_ms); !s.ok()) return s;
  // The longest name is "<prefix>-99999": it must pass the protocol's name rules.
  const std::string longest = o.identity_prefix + "-" + std::to_string(o.bots - 1);
  if (!proto::ValidateName(longest).ok()) {
    return core::Status::InvalidArgument("--identity-prefix must make valid player names (printable, no "
                                         "quote or backslash, names at most 31 characters): '" +
                                         longest + "'");
  }
  return core::Status::OK();
}

ParseResult ParseBotOptions(int argc, const char* const* argv, BotOptions* out) {
  cxxopts::Options options = MakeOptions();
  const std::string help = options.help();
  try {
    const cxxopts::ParseResult r = options.parse(argc, argv);
    if (r.count("help")) return {ParseOutcome::kHelp, help};
    if (!r.unmatched().empty()) return Error("unexpected argument '" + r.unmatched()[0] + "'", help);
    BotOptions o;
    o.servers.clear();
    const std::string servers = r["server"].as<std::string>();
    for (size_t start = 0; start <= servers.size();) {
      const size_t comma = std::min(servers.find(',', start), servers.size());
      Endpoint e;
      if (!SplitHostPort(servers.substr(start, comma - start), &e.host, &e.port)) {
        return Error("--server must be HOST:PORT[,HOST:PORT...] with PORT 1..65535, got '" + servers + "'", help);
      }
      o.servers.push_back(e);
      start = comma + 1;
    }
    o.bots = r["bots"].as<int>();
    o.rate_hz = r["rate"].as<double>();
    o.duration_s = r["duration"].as<double>();
    o.ramp_s = r["ramp"].as<double>();
    o.seed = r["seed"].as<uint64_t>();
    o.threads = r["threads"].as<int>();
    if (!ParseBehavior(r["behavior"].as<std::string>(), &o.behavior)) {
      return Error("--behavior must be wander, fight, items, hotspot or mixed, got '" +
                       r["behavior"].as<std::string>() + "'",
                   help);
    }
    o.identity_prefix = r["identity-prefix"].as<std::string>();
    o.out_path = r["out"].as<std::string>();
    if (!o.out_path.empty()) {
      if (core::Status s = core::CheckReplaceable(o.out_path); !s.ok()) return Error("--out " + s.message(), help);
    }
    o.series_path = r["series"].as<std::string>();
    o.verify = r.count("verify") > 0;
    o.silence_ms = r["silence-ms"].as<int>();
    o.drain_ms = r["drain-ms"].as<int>();
    o.map_path = r["map"].as<std::string>();
    o.quiet = r.count("quiet") > 0;
    const core::Status s = ValidateBotOptions(o);
    if (!s.ok()) return Error(s.message(), help);
    *out = std::move(o);
    return {ParseOutcome::kRun, ""};
  } catch (const cxxopts::exceptions::exception& e) {
    return Error(core::NameFlagOfBadValue(e.what(), argc, argv), help);
  }
}

}  // namespace bots
