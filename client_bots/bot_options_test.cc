// BotOptions parsing: defaults, every flag, and clear errors for bad input. Identity derivation.
#include "client_bots/bot_options.h"

#include <catch2/catch.hpp>

#include <vector>

#include "client_bots/identity.h"

using namespace bots;

namespace {
ParseResult Parse(std::vector<const char*> args, BotOptions* o) {
  args.insert(args.begin(), "aftershock-bots");
  return ParseBotOptions(static_cast<int>(args.size()), args.data(), o);
}
}  // namespace

TEST_CASE("defaults match the documentation") {
  BotOptions o;
  REQUIRE(Parse({}, &o).outcome == ParseOutcome::kRun);
  REQUIRE(o.servers.size() == 1);
  CHECK(o.servers[0].host == "127.0.0.1");
  CHECK(o.servers[0].port == 27500);
  CHECK(o.rate_hz == 30);
  CHECK(o.command_ms() == 33);
  CHECK(o.threads == 1);
  CHECK(o.behavior == Behavior::kMixed);
  CHECK_FALSE(o.verify);
}

TEST_CASE("every flag is read") {
  BotOptions o;
  const ParseResult r = Parse({"--server", "localhost:28000", "--bots", "50", "--rate", "60", "--duration", "3",
                               "--ramp", "1", "--seed", "7", "--threads", "2", "--behavior", "hotspot",
                               "--identity-prefix", "alice", "--out", "a.json", "--series", "a.csv", "--verify",
                               "--map", "maps/dm_arena.map"},
                              &o);
  REQUIRE(r.outcome == ParseOutcome::kRun);
  REQUIRE(o.servers.size() == 1);
  CHECK(o.servers[0].host == "localhost");
  CHECK(o.servers[0].port == 28000);
  CHECK(o.bots == 50);
  CHECK(o.command_ms() == 17);
  CHECK(o.duration_s == 3);
  CHECK(o.ramp_s == 1);
  CHECK(o.seed == 7);
  CHECK(o.threads == 2);
  CHECK(o.behavior == Behavior::kHotspot);
  CHECK(o.identity_prefix == "alice");
  CHECK(o.out_path == "a.json");
  CHECK(o.series_path == "a.csv");
  CHECK(o.verify);
  CHECK(o.map_path == "maps/dm_arena.map");
}

TEST_CASE("bad flags are errors that name the problem and show the help") {
  struct Case {
    std::vector<const char*> args;
    const char* needle;
  };
  const std::vector<Case> cases = {
      {{"--bots", "0"}, "--bots"},
      {{"--bots", "many"}, "--bots: Argument \u2018many\u2019 failed to parse"},
      {{"--rate", "0"}, "--rate"},
      {{"--rate", "1000"}, "--rate"},
      {{"--duration", "0"}, "--duration"},
      {{"--ramp", "-1"}, "--ramp"},
      {{"--threads", "0"}, "--threads"},
      {{"--behavior", "dance"}, "--behavior"},
      {{"--server", "nohostport"}, "--server"},
      {{"--server", "host:99999"}, "--server"},
      {{"--identity-prefix", "a-name-that-is-far-too-long-for-quake"}, "--identity-prefix"},
      {{"--identity-prefix", "bad\"quote"}, "--identity-prefix"},
      {{"--no-such-flag"}, "no-such-flag"},
      {{"stray"}, "stray"},
      {{"--out", "/nonexistent-dir/bots.json"}, "--out /nonexistent-dir/bots.json: its directory"},
      {{"--out", "/dev/null"}, "--out /dev/null exists and is not a regular file (a device)"},
  };
  for (const Case& c : cases) {
    BotOptions o;
    const ParseResult r = Parse(c.args, &o);
    INFO(c.args[0]);
    CHECK(r.outcome == ParseOutcome::kError);
    CHECK(r.text.rfind("error: ", 0) == 0);
    CHECK(r.text.find(c.needle) != std::string::npos);
    CHECK(r.text.find("--identity-prefix") != std::string::npos);  // the help follows
  }
}

TEST_CASE("the --server flag takes a comma list of lobbies") {
  BotOptions o;
  REQUIRE(Parse({"--server", "127.0.0.1:28000,10.0.0.2:29000"}, &o).outcome == ParseOutcome::kRun);
  REQUIRE(o.servers.size() == 2);
  CHECK(o.servers[1].host == "10.0.0.2");
  CHECK(o.servers[1].port == 29000);
  CHECK(Parse({"--server", "127.0.0.1:28000,"}, &o).outcome == ParseOutcome::kError);
}

TEST_CASE("asking for --help is not an error") {
  BotOptions o;
  const ParseResult r = Parse({"--help"}, &o);
  CHECK(r.outcome == ParseOutcome::kHelp);
  CHECK(r.text.find("--behavior") != std::string::npos);
}

TEST_CASE("identity tokens are stable per (seed, name) and differ otherwise") {
  CHECK(IdentityName("exp3", 12) == "exp3-12");
  CHECK(IdentityToken(1, "bot-0") == IdentityToken(1, "bot-0"));
  CHECK(IdentityToken(1, "bot-0") != IdentityToken(2, "bot-0"));
  CHECK(IdentityToken(1, "bot-0") != IdentityToken(1, "bot-1"));
  CHECK(IdentityToken(0, "") != 0);
}
