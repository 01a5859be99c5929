// Malformed input against a live server: random and mutated raw UDP datagrams at the lobby and
// worker ports (with and without the connectionless prefix), and malformed ENet payloads from a
// connected client (random bytes, bit-flipped command packets, truncations, wrong types). The
// server keeps running and counts the invalid packets, the abuser is kicked, a speed hacker is
// kicked, and the legitimate clients keep getting replies to every command.
#include <catch2/catch.hpp>

#include <chrono>
#include <memory>
#include <random>
#include <thread>

#include <spdlog/spdlog.h>

#include "server/protocol/connectionless.h"
#include "server/protocol/messages.h"
#include "server/protocol/protocol_format.h"
#include "server/sv/server.h"
#include "server/sv/worker.h"
#include "tests/server/play_harness.h"
#include "tests/server/test_client.h"

namespace {

std::vector<uint8_t> RandomBytes(std::mt19937_64& rng, size_t max_len) {
  std::vector<uint8_t> b(rng() % (max_len + 1));
  for (uint8_t& x : b) x = static_cast<uint8_t>(rng());
  return b;
}

std::vector<uint8_t> ValidCommandPacket(uint32_t seq) {
  proto::CommandPacket p;
  p.count = 1;
  p.cmds[0].sequence = seq;
  p.cmds[0].duration_ms = 30;
  std::vector<uint8_t> bytes;
  (void)proto::Encode(p, &bytes);
  return bytes;
}

std::vector<uint8_t> Mutate(std::mt19937_64& rng, std::vector<uint8_t> b) {
  switch (rng() % 4) {
    case 0:  // flip bits
      for (int i = 0; i < 3 && !b.empty(); ++i) b[rng() % b.size()] ^= static_cast<uint8_t>(1u << (rng() % 8));
      break;
    case 1:  // truncate
      b.resize(b.empty() ? 0 : rng() % b.size());
      break;
    case 2:  // trailing garbage
      for (int i = 0; i < 5; ++i) b.push_back(static_cast<uint8_t>(rng()));
      break;
    default:  // a server->client or unknown type byte
      if (!b.empty()) b[0] = static_cast<uint8_t>(0x80 + rng() % 0x20);
  }
  return b;
}

}  // namespace

TEST_CASE("malformed packets cost their sender, never the server") {
  spdlog::set_level(spdlog::level::warn);
  sv::ServerOptions o = svtest::TestOptions(sv::LockingScheme::kAreanodeOpt, 2);
  std::unique_ptr<sv::Server> server;
  REQUIRE(sv::Server::Create(o, &server).ok());
  server->Start();
  const uint16_t port = server->lobby_port();

  std::vector<std::unique_ptr<svtest::TestClient>> legit;
  for (int i = 0; i < 4; ++i) {
    auto c = std::make_unique<svtest::TestClient>();
    svtest::JoinParams p;
    p.lobby_port = port;
    p.name = "legit" + std::to_string(i);
    p.token = 500 + static_cast<uint64_t>(i);
    REQUIRE(c->Join(p, 3000).ok());
    legit.push_back(std::move(c));
  }
  svtest::TestClient abuser, speeder;
  svtest::JoinParams pa;
  pa.lobby_port = port;
  pa.name = "abuser";
  REQUIRE(abuser.Join(pa, 3000).ok());
  pa.name = "speeder";
  REQUIRE(speeder.Join(pa, 3000).ok());

  std::mt19937_64 rng(12345);
  const std::vector<uint16_t> ports = {port, server->worker_port(0), server->worker_port(1)};
  for (int round = 0; round < 60; ++round) {
    for (auto& c : legit) c->SendCommand(300, 0, static_cast<float>(round * 6 % 360) - 180, 0, 33);
    // Raw datagrams: garbage, and garbage behind the connectionless prefix.
    for (uint16_t p : ports) {
      svtest::SendRawUdp(p, RandomBytes(rng, 1500));
      std::vector<uint8_t> cl = {0xFF, 0xFF, 0xFF, 0xFF};
      const std::vector<uint8_t> tail = RandomBytes(rng, 64);
      cl.insert(cl.end(), tail.begin(), tail.end());
      svtest::SendRawUdp(p, cl);
    }
    // Malformed ENet payloads from a connected client, on every channel.
    if (!abuser.kicked()) {
      const uint8_t channel = static_cast<uint8_t>(rng() % 3);
      if (round % 2 == 0) {
        abuser.SendRaw(RandomBytes(rng, 1100), channel, rng() % 2 == 0);
      } else {
        abuser.SendRaw(Mutate(rng, ValidCommandPacket(1000 + static_cast<uint32_t>(round))), channel, false);
      }
    }
    // Speed hack: five 250 ms commands every 33 ms of real time.
    for (int k = 0; k < 5 && !speeder.kicked(); ++k) speeder.SendCommand(400, 0, 0, 0, 250);
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(33);
    while (std::chrono::steady_clock::now() < until) {
      for (auto& c : legit) c->Service(0);
      abuser.Service(0);
      speeder.Service(0);
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  // Legitimate clients: everything they sent is applied (after a short drain).
  const auto drain_end = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  auto last_nudge = std::chrono::steady_clock::now();
  bool all = false;
  while (!all && std::chrono::steady_clock::now() < drain_end) {
    all = true;
    for (auto& c : legit) {
      c->Service(0);
      all = all && c->last_applied_sequence() == c->last_sent_sequence();
    }
    if (std::chrono::steady_clock::now() - last_nudge > std::chrono::milliseconds(100)) {
      last_nudge = std::chrono::steady_clock::now();
      for (auto& c : legit) {
        if (c->last_applied_sequence() != c->last_sent_sequence()) c->SendCommand(0, 0, 0, 0, 10);
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  for (int i = 0; i < 20; ++i) {
    abuser.Service(0);
    speeder.Service(0);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  server->RequestStop();
  server->Wait();

  for (auto& c : legit) {
    CHECK(c->snapshots() > 0);
    CHECK(c->last_applied_sequence() == c->last_sent_sequence());
    CHECK(!c->kicked());
  }
  REQUIRE(abuser.kick().has_value());
  CHECK(abuser.kick()->reason == proto::KickReason::kInvalidInput);
  REQUIRE(speeder.kick().has_value());
  CHECK(speeder.kick()->reason == proto::KickReason::kSpeedHack);
  const sv::StatsReport rep = server->Report();
  CHECK(rep.invalid_packets >= 20);
  CHECK(rep.kicked == 2);
}

// Each chat line goes to every player, reliably, so a client's chat flood was multiplied by the
// number of players. QuakeWorld's flood protection now silences the sender after 4 lines within
// 4 s, for 10 s: the others get its first 4 lines, the sender is told once, and is not kicked.
TEST_CASE("a chat flood silences its sender, and the others get its first lines only") {
  spdlog::set_level(spdlog::level::warn);
  sv::ServerOptions o = svtest::TestOptions(sv::LockingScheme::kAreanodeOpt, 2);
  std::unique_ptr<sv::Server> server;
  REQUIRE(sv::Server::Create(o, &server).ok());
  server->Start();
  svtest::TestClient talker, listener;
  svtest::JoinParams p;
  p.lobby_port = server->lobby_port();
  p.name = "talker";
  p.token = 71;
  REQUIRE(talker.Join(p, 3000).ok());
  p.name = "listener";
  p.token = 72;
  REQUIRE(listener.Join(p, 3000).ok());
  // A 30 ms command at most every 35 ms: no faster than real time, or the speed check kicks.
  auto last_command = std::chrono::steady_clock::now() - std::chrono::seconds(1);
  auto service = [&] {
    if (std::chrono::steady_clock::now() - last_command >= std::chrono::milliseconds(35)) {
      last_command = std::chrono::steady_clock::now();
      talker.SendCommand(0, 0, 0, 0, 30);
      listener.SendCommand(0, 0, 0, 0, 30);
    }
    talker.Service(5);
    listener.Service(5);
  };
  for (int i = 0; i < 20; ++i) service();  // settle: the join's reliable packets are in
  const uint64_t talker_before = talker.events(), listener_before = listener.events();

  constexpr int kLines = 30;
  for (int i = 0; i < kLines; ++i) {
    proto::ClientChat chat;
    chat.text = "spam " + std::to_string(i);
    std::vector<uint8_t> bytes;
    REQUIRE(proto::Encode(chat, &bytes).ok());
    talker.SendRaw(bytes, proto::kChannelControl, true);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (server->Report().chat_dropped < kLines - sv::kChatFloodLines &&
         std::chrono::steady_clock::now() < deadline) {
    service();
  }
  REQUIRE(server->Report().chat_dropped == kLines - sv::kChatFloodLines);
  // Every line has been handled; the accepted ones leave with a frame's replies. Wait for them,
  // then for 20 more snapshots, in which nothing more may come.
  while (listener.events() < listener_before + sv::kChatFloodLines && std::chrono::steady_clock::now() < deadline) {
    service();
  }
  const uint64_t snapshots = listener.snapshots();
  while (listener.snapshots() < snapshots + 20 && std::chrono::steady_clock::now() < deadline) service();
  CHECK(listener.events() - listener_before == sv::kChatFloodLines);
  CHECK(talker.events() - talker_before == sv::kChatFloodLines + 1);  // its lines, and the notice
  CHECK_FALSE(talker.kicked());
  CHECK(talker.connected());
  CHECK(server->Report().kicked == 0);
  server->RequestStop();
  server->Wait();
}
