// BotThread: the join state machine, the command/snapshot loop and the measurements.
//
// Loop order per iteration: read every host (events dispatch to their bot), read challenge
// replies, fire the bot timers that are due (joins, retries, commands), flush every host once,
// then sleep to the next millisecond boundary. One flush per iteration batches all commands due
// in that millisecond.
//
// Own stalls: a wake-up, or a read of the hosts, that comes kSelfStallMs or more late means this
// thread was paused or starved. The server cannot answer commands that were never sent, so that
// time is taken off the silence that makes a bot give the server up, and off outage_ms.
//
// Response time of command k: from its send to the first snapshot whose last_applied_sequence
// is >= k (per bot, steady clock; send times in a ring of kSendRing). Every snapshot decoded is
// one reply.
#include "client_bots/bot_thread.h"

#include <poll.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <thread>

#include "client_bots/identity.h"
#include "server/core/check.h"
#include "server/protocol/enet_drain.h"
#include "server/protocol/enet_socket_batch.h"
#include "server/protocol/protocol_format.h"

namespace bots {

namespace {

constexpr uint64_t kStepTimeoutMs = 5000;    // each join step (challenge, connect, Welcome)
// The lobby answers within a frame or two; one that has not answered by then has lost the
// request (it happened in early bot runs), so ask again rather than wait out kStepTimeoutMs.
constexpr uint64_t kLobbyAnswerMs = 1500;
constexpr uint64_t kBackoffBaseMs = 100;
constexpr uint64_t kBackoffCapMs = 2000;
constexpr uint64_t kChallengeRetryMs = 20;
constexpr uint64_t kPublishUs = 250'000;
constexpr uint64_t kMaxLagUs = 100'000;      // a bot this late skips commands instead of bursting
// ENet's own timeouts are a backstop for --silence-ms, never shorter than it: a server stalled
// for a couple of seconds is not dead.
constexpr uint32_t kEnetTimeoutLimit = 32;
constexpr uint32_t kEnetTimeoutMinMs = 5000;
constexpr uint32_t kEnetTimeoutMaxMs = 10000;
constexpr uint64_t kPhaseSalt = 0x9A5Eull;
constexpr uint64_t kDisconnectMs = 300;
// The loop runs once per kLoopUs: everything that arrived meanwhile is read in one batch and all
// commands due are sent with one flush per host. It bounds wake-ups (and so CPU) whatever the
// packet rate; the price is that a reply's arrival is timestamped up to kLoopUs late.
constexpr uint64_t kLoopUs = 1000;

// Bot i's send phase in [0, period): the Weyl sequence frac(u0 + i / golden ratio), u0 seeded.
// Each bot's phase looks random, and the bots' phases together cover the period evenly (any run
// of consecutive indices does, so a ramp's first bots and each thread's share do too); i.i.d.
// phases would leave clumps, and with them a p50 that moves by a few ms with the server's frame
// offset from one run to the next.
uint64_t SendPhaseUs(const BotOptions& options, int index, uint64_t period_us) {
  constexpr double kInverseGolden = 0.6180339887498949;
  const double u0 = static_cast<double>(IdentityToken(options.seed ^ kPhaseSalt, options.identity_prefix) >> 11) * 0x1.0p-53;
  const double u = u0 + kInverseGolden * index;
  return static_cast<uint64_t>((u - std::floor(u)) * static_cast<double>(period_us)) % period_us;
}


}  // namespace

BotThread::BotThread(std::vector<int> bot_indices, const BotOptions& options, const NavMap& nav,
                     std::vector<ENetAddress> lobbies, std::chrono::steady_clock::time_point epoch)
    : options_(options),
      nav_(nav),
      lobbies_(std::move(lobbies)),
      epoch_(epoch),
      period_us_(static_cast<uint64_t>(std::llround(1e6 / options.rate_hz))),
      end_us_(static_cast<uint64_t>(options.duration_s * 1e6)),
      command_ms_(static_cast<uint8_t>(options.command_ms())),
      bots_(bot_indices.size()),
      wheel_(static_cast<uint32_t>(bot_indices.size()), 0) {
  for (size_t k = 0; k < bots_.size(); ++k) {
    Bot& b = bots_[k];
    b.index = bot_indices[k];
    b.name = IdentityName(options.identity_prefix, b.index);
    b.token = IdentityToken(options.seed, b.name);
    b.host = static_cast<int>(k / kBotsPerHost);
    b.server = b.index % static_cast<int>(lobbies_.size());
    b.brain.role = ChooseRole(options.behavior, options.seed, b.index);
    b.brain.rng = IdentityToken(options.seed ^ 0x5EEDull, b.name);
    b.brain.heading_deg = static_cast<float>(UnitRandom(&b.brain.rng) * 360.0 - 180.0);
    b.phase_us = SendPhaseUs(options, b.index, period_us_);
    // Ramp: bot i joins at ramp * i / bots.
    const double join_s = options.ramp_s * b.index / std::max(1, options.bots);
    wheel_.Schedule(static_cast<uint32_t>(k), static_cast<uint64_t>(join_s * 1000));
  }
}

BotThread::~BotThread() {
  for (ENetHost* h : hosts_) enet_host_destroy(h);
}

core::Status BotThread::Init() {
  const size_t n_hosts = (bots_.size() + kBotsPerHost - 1) / kBotsPerHost;
  for (size_t h = 0; h < n_hosts; ++h) {
    const size_t on_host = std::min<size_t>(kBotsPerHost, bots_.size() - h * kBotsPerHost);
    const size_t peers = std::min<size_t>(ENET_PROTOCOL_MAXIMUM_PEER_ID, 2 * on_host + 8);
    ENetHost* host = enet_host_create(nullptr, peers, proto::kNumChannels, 0, 0);
    if (host == nullptr) return core::Status::IoError("enet_host_create failed for a bot host");
    host->maximumPacketSize = proto::kMaxPacketBytes;
    // Thousands of peers share this socket: give the kernel room to queue a frame's snapshots.
    enet_socket_set_option(host->socket, ENET_SOCKOPT_RCVBUF, 8 << 20);
    enet_socket_set_option(host->socket, ENET_SOCKOPT_SNDBUF, 4 << 20);
    hosts_.push_back(host);
  }
  for (const ENetAddress& lobby : lobbies_) {
    challenges_.push_back(std::make_unique<ChallengeClient>());
    core::Status s = challenges_.back()->Open(lobby.host, lobby.port);
    if (!s.ok()) return s;
  }
  return core::Status::OK();
}

uint64_t BotThread::NowUs() const {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - epoch_)
          .count());
}

void BotThread::Run(const std::atomic<bool>& stop, const std::atomic<bool>& abort) {
  // Response times end at the kernel's arrival stamp, not at this loop's read (docs/bots.md).
  for (ENetHost* h : hosts_) {
    if (const core::Status s = proto::StampArrivals(h->socket); !s.ok()) {
      stats_.arrival_stamps = false;
      std::fprintf(stderr, "warning: no arrival stamps (%s); response times end when a reply is read\n",
                   s.ToString().c_str());
    }
  }
  uint64_t wake_us = NowUs();
  while (!stop.load(std::memory_order_relaxed)) {
    const uint64_t woke_us = NowUs();
    CountSelfStall(wake_us, woke_us);
    if (woke_us >= end_us_) break;
    uint64_t now_us;
    {
      // Reads with recvmmsg; the iteration's datagrams (commands, acknowledgements) leave in
      // sendmmsg calls when the scope ends, right after the flushes below.
      proto::SocketBatchScope batch;
      ServiceHosts();
      now_us = NowUs();
      CountSelfStall(woke_us, now_us);
      for (auto& c : challenges_) c->Poll(now_us / 1000);
      wheel_.Advance(now_us / 1000, [&](uint32_t id) { Fire(id, now_us); });
      for (ENetHost* h : hosts_) enet_host_flush(h);
    }
    if (now_us >= last_publish_us_ + kPublishUs) Publish();
    wake_us = now_us - now_us % kLoopUs + kLoopUs;
    SleepUntil(wake_us);
  }
  Finish(abort);
}

void BotThread::CountSelfStall(uint64_t from_us, uint64_t now_us) {
  if (now_us < from_us + kSelfStallMs * 1000) return;
  const uint64_t stall_us = now_us - from_us;
  self_stall_us_ += stall_us;
  ++stats_.self_stalls;
  stats_.self_stall_ms_total += stall_us / 1000.0;
  stats_.self_stall_ms_max = std::max(stats_.self_stall_ms_max, stall_us / 1000.0);
}

uint64_t BotThread::ServerSilenceMs(const Bot& bot, uint64_t now_us) const {
  const uint64_t excused_ms = (self_stall_us_ - bot.self_stall_us_at_snapshot) / 1000;
  const uint64_t since_ms = now_us / 1000 - std::min(now_us / 1000, bot.last_snapshot_ms);
  return since_ms - std::min(since_ms, excused_ms);
}

uint64_t BotThread::NextSendUs(const Bot& bot, uint64_t at_us) const {
  if (at_us <= bot.phase_us) return bot.phase_us;
  const uint64_t periods = (at_us - bot.phase_us + period_us_ - 1) / period_us_;
  return bot.phase_us + periods * period_us_;
}

void BotThread::WaitForTraffic(int timeout_ms) {
  // The hosts only: the caller (Finish) never reads the challenge sockets, and a late reply
  // left on one would make poll return at once on every call.
  std::vector<pollfd> fds;
  fds.reserve(hosts_.size());
  for (ENetHost* h : hosts_) fds.push_back({static_cast<int>(h->socket), POLLIN, 0});
  ::poll(fds.data(), fds.size(), timeout_ms);
}

void BotThread::SleepUntil(uint64_t when_us) {
  std::this_thread::sleep_until(epoch_ + std::chrono::microseconds(when_us));
}

void BotThread::CountTraffic() {
  // ENet's host counters are 32-bit (bytes wrap in minutes at full load): move them into the
  // 64-bit totals and restart them. ENet itself never reads them.
  for (ENetHost* h : hosts_) {
    stats_.datagrams_sent += h->totalSentPackets;
    stats_.datagrams_received += h->totalReceivedPackets;
    stats_.bytes_sent += h->totalSentData;
    stats_.bytes_received += h->totalReceivedData;
    h->totalSentPackets = h->totalReceivedPackets = h->totalSentData = h->totalReceivedData = 0;
  }
}

void BotThread::Publish() {
  last_publish_us_ = NowUs();
  CountTraffic();
  live_.connected.store(connected_, std::memory_order_relaxed);
  // Samples go to interval_ only; the run's histogram takes them here (Finish ends with Publish).
  stats_.response.Merge(interval_);
  core::MutexLock lock(&live_.mu);
  live_.interval.Merge(interval_);
  interval_.Clear();
}

// --- timers -----------------------------------------------------------------------------------

void BotThread::Fire(uint32_t id, uint64_t now_us) {
  Bot& bot = bots_[id];
  const uint64_t now_ms = now_us / 1000;
  switch (bot.state) {
    case BotState::kWaiting:
    case BotState::kBackoff:
      StartAttempt(bot, id, now_us);
      break;
    case BotState::kChallenge:
      TryChallenge(bot, id, now_us);
      break;
    case BotState::kLobbyConnect:
    case BotState::kLobbyJoin:
    case BotState::kWorkerConnect:
    case BotState::kWorkerHello:
      if (now_ms < bot.deadline_ms) {
        wheel_.Reschedule(id, bot.deadline_ms);
      } else {
        const bool lobby = bot.state == BotState::kLobbyConnect || bot.state == BotState::kLobbyJoin;
        FailJoin(bot, id, lobby ? JoinFailure::kLobbyTimeout : JoinFailure::kWorkerTimeout, now_us);
      }
      break;
    case BotState::kPlaying:
      SendCommand(bot, id, now_us);
      break;
    case BotState::kDone:
      break;
  }
}

void BotThread::StartAttempt(Bot& bot, uint32_t id, uint64_t now_us) {
  if (!bot.joining) {
    bot.joining = true;
    bot.join_start_us = now_us;
  }
  bot.state = BotState::kChallenge;
  bot.deadline_ms = now_us / 1000 + kStepTimeoutMs;
  TryChallenge(bot, id, now_us);
}

void BotThread::TryChallenge(Bot& bot, uint32_t id, uint64_t now_us) {
  const uint64_t now_ms = now_us / 1000;
  if (!challenges_[bot.server]->Get(now_ms, &bot.challenge)) {
    if (now_ms >= bot.deadline_ms) {
      FailJoin(bot, id, JoinFailure::kNoChallenge, now_us);
    } else {
      wheel_.Reschedule(id, now_ms + kChallengeRetryMs);
    }
    return;
  }
  bot.lobby_peer = Connect(bot, lobbies_[bot.server].port);
  if (bot.lobby_peer == nullptr) {  // no free peer slot: should not happen with 2 per bot
    FailJoin(bot, id, JoinFailure::kLobbyTimeout, now_us);
    return;
  }
  bot.state = BotState::kLobbyConnect;
  bot.deadline_ms = now_ms + kStepTimeoutMs;
  wheel_.Reschedule(id, bot.deadline_ms);
}

ENetPeer* BotThread::Connect(Bot& bot, uint16_t port) {
  ENetAddress addr = lobbies_[bot.server];
  addr.port = port;
  ENetPeer* peer = enet_host_connect(hosts_[bot.host], &addr, proto::kNumChannels, 0);
  if (peer == nullptr) return nullptr;
  peer->data = &bot;
  // ENet's default gives up after 30 s; --silence-ms normally decides long before.
  const uint32_t silence_ms = static_cast<uint32_t>(options_.silence_ms);
  enet_peer_timeout(peer, kEnetTimeoutLimit, std::max(kEnetTimeoutMinMs, silence_ms),
                    std::max(kEnetTimeoutMaxMs, 2 * silence_ms));
  return peer;
}

void BotThread::SendCommand(Bot& bot, uint32_t id, uint64_t now_us) {
  const uint64_t now_ms = now_us / 1000;
  if (!sending_) return;
  if (ServerSilenceMs(bot, now_us) > static_cast<uint64_t>(options_.silence_ms)) {
    LoseConnection(bot, id, now_us);
    return;
  }
  const uint32_t seq = bot.next_seq++;
  proto::UserCmd& cmd = bot.history[seq % proto::kMaxCommandsPerPacket];
  cmd.sequence = seq;
  cmd.duration_ms = command_ms_;
  Steer(bot.me, nav_, now_ms, &bot.brain, &cmd);
  bot.sent_seq = seq;
  bot.sent_us[seq % kSendRing] = now_us;

  proto::CommandPacket packet;
  packet.ack_snapshot_id = bot.decoder.ack_id();
  packet.count = static_cast<uint8_t>(std::min<uint32_t>(proto::kMaxCommandsPerPacket, seq - bot.session_first_seq + 1));
  for (uint8_t i = 0; i < packet.count; ++i) packet.cmds[i] = bot.history[(seq - i) % proto::kMaxCommandsPerPacket];
  const core::Status s = proto::Encode(packet, &packet_bytes_);
  AS_CHECK(s.ok(), "BotThread::SendCommand: the bot built an invalid command");
  ENetPacket* p = enet_packet_create(packet_bytes_.data(), packet_bytes_.size(), ENET_PACKET_FLAG_UNSEQUENCED);
  if (p != nullptr && enet_peer_send(bot.worker_peer, proto::kChannelCommand, p) != 0) enet_packet_destroy(p);
  ++stats_.requests_sent;
  live_.requests.fetch_add(1, std::memory_order_relaxed);

  bot.next_cmd_us += period_us_;
  // Late (a stall of this thread): skip the missed sends, keeping the phase.
  if (bot.next_cmd_us + kMaxLagUs < now_us) bot.next_cmd_us = NextSendUs(bot, now_us + 1);
  wheel_.Reschedule(id, bot.next_cmd_us / 1000);
}

// --- failures ---------------------------------------------------------------------------------

void BotThread::DropPeers(Bot& bot) {
  for (ENetPeer** p : {&bot.lobby_peer, &bot.worker_peer}) {
    if (*p != nullptr) {
      (*p)->data = nullptr;
      enet_peer_disconnect_now(*p, 0);  // resets the slot at once: no event will follow
      *p = nullptr;
    }
  }
}

void BotThread::FailJoin(Bot& bot, uint32_t id, JoinFailure why, uint64_t now_us) {
  ++stats_.join_failures[static_cast<int>(why)];
  live_.join_failures.fetch_add(1, std::memory_order_relaxed);
  if (why == JoinFailure::kBadChallenge) challenges_[bot.server]->Invalidate();
  DropPeers(bot);
  Backoff(bot, id, now_us);
}

void BotThread::LoseConnection(Bot& bot, uint32_t id, uint64_t now_us) {
  if (bot.state == BotState::kPlaying) {
    --connected_;
    ++stats_.connections_lost;
    stats_.unanswered += bot.sent_seq - bot.answered_seq;
  }
  DropPeers(bot);
  Backoff(bot, id, now_us);
}

void BotThread::Backoff(Bot& bot, uint32_t id, uint64_t now_us) {
  bot.state = BotState::kBackoff;
  const uint64_t full = std::min(kBackoffCapMs, kBackoffBaseMs << std::min(bot.attempts, 5));
  const uint64_t delay = full / 2 + SplitMix64(&bot.brain.rng) % (full / 2 + 1);  // jitter 50..100%
  ++bot.attempts;
  wheel_.Reschedule(id, now_us / 1000 + delay);
}

// --- network events ---------------------------------------------------------------------------

void BotThread::ServiceHosts() {
  for (ENetHost* h : hosts_) proto::DrainHost(h, [this](ENetEvent& ev) { HandleEvent(ev); });
}

void BotThread::HandleEvent(const ENetEvent& ev) {
  Bot* bot = static_cast<Bot*>(ev.peer->data);
  const uint64_t now_us = NowUs();
  // A peer we let go of (data cleared) or one reused since: not this bot's business any more.
  const bool ours = bot != nullptr && (ev.peer == bot->lobby_peer || ev.peer == bot->worker_peer);
  switch (ev.type) {
    case ENET_EVENT_TYPE_CONNECT:
      if (ours) OnConnect(*bot, ev.peer, now_us);
      break;
    case ENET_EVENT_TYPE_RECEIVE:
      if (ours) OnPacket(*bot, ev.peer, ev.packet, now_us, ArrivalUs(ev.peer, now_us));
      enet_packet_destroy(ev.packet);
      break;
    case ENET_EVENT_TYPE_DISCONNECT:
      if (ours) OnDisconnect(*bot, ev.peer, now_us);
      break;
    case ENET_EVENT_TYPE_NONE:
      break;
  }
}

template <class M>
bool BotThread::SendReliable(ENetPeer* peer, const M& message) {
  if (!proto::Encode(message, &packet_bytes_).ok()) return false;
  ENetPacket* p = enet_packet_create(packet_bytes_.data(), packet_bytes_.size(), ENET_PACKET_FLAG_RELIABLE);
  if (p == nullptr) return false;
  if (enet_peer_send(peer, proto::kChannelControl, p) != 0) {
    enet_packet_destroy(p);
    return false;
  }
  return true;
}

void BotThread::OnConnect(Bot& bot, ENetPeer* peer, uint64_t now_us) {
  const uint32_t id = IdOf(bot);
  const uint64_t now_ms = now_us / 1000;
  // Never let ENet's packet throttle drop unreliable packets (our commands, the server's
  // snapshots): deceleration 0. Sent as a command, so only once connected (ENet refuses it on a
  // connecting peer).
  enet_peer_throttle_configure(peer, ENET_PEER_PACKET_THROTTLE_INTERVAL, ENET_PEER_PACKET_THROTTLE_ACCELERATION, 0);
  enet_peer_ping_interval(peer, proto::kEnetPingIntervalMs);
  if (peer == bot.lobby_peer && bot.state == BotState::kLobbyConnect) {
    proto::JoinRequest req;
    req.challenge = bot.challenge;
    req.name = bot.name;
    req.secret_token = bot.token;
    if (!SendReliable(peer, req)) return FailJoin(bot, id, JoinFailure::kLobbyDisconnected, now_us);
    bot.state = BotState::kLobbyJoin;
    bot.deadline_ms = now_ms + kLobbyAnswerMs;
    wheel_.Reschedule(id, bot.deadline_ms);
    return;
  } else if (peer == bot.worker_peer && bot.state == BotState::kWorkerConnect) {
    proto::Hello hello;
    hello.session_ticket = bot.ticket;
    hello.player_id = bot.player_id;
    if (!SendReliable(peer, hello)) return FailJoin(bot, id, JoinFailure::kWorkerDisconnected, now_us);
    bot.state = BotState::kWorkerHello;
  } else {
    return;
  }
  bot.deadline_ms = now_ms + kStepTimeoutMs;
  wheel_.Reschedule(id, bot.deadline_ms);
}

uint64_t BotThread::ArrivalUs(const ENetPeer* peer, uint64_t now_us) const {
  const uint64_t ns = proto::LastArrivalNs(peer->host->socket, peer->incomingPeerID);
  const uint64_t epoch_ns = static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(epoch_.time_since_epoch()).count());
  if (ns <= epoch_ns) return now_us;  // no stamp (yet)
  return std::min(now_us, (ns - epoch_ns) / 1000);
}

void BotThread::OnPacket(Bot& bot, ENetPeer* peer, const ENetPacket* packet, uint64_t now_us,
                         uint64_t arrival_us) {
  const std::span<const uint8_t> bytes(packet->data, packet->dataLength);
  const std::optional<proto::MessageType> type = proto::PeekType(bytes);
  if (!type) return;
  const uint32_t id = IdOf(bot);
  const bool from_lobby = peer == bot.lobby_peer;
  switch (*type) {
    case proto::MessageType::kSnapshot:
      if (!from_lobby && bot.state == BotState::kPlaying) OnSnapshot(bot, packet, now_us, arrival_us);
      return;
    case proto::MessageType::kJoinAccept: {
      if (!from_lobby || bot.state != BotState::kLobbyJoin) return;
      proto::JoinAccept accept;
      if (!proto::Decode(bytes, &accept).ok()) return FailJoin(bot, id, JoinFailure::kBadReply, now_us);
      return OnJoinAccept(bot, accept, now_us);
    }
    case proto::MessageType::kJoinRefuse: {
      proto::JoinRefuse refuse;
      if (!from_lobby || bot.state != BotState::kLobbyJoin) return;
      if (!proto::Decode(bytes, &refuse).ok()) return FailJoin(bot, id, JoinFailure::kBadReply, now_us);
      return FailJoin(bot, id, FailureOf(refuse.reason), now_us);
    }
    case proto::MessageType::kWelcome: {
      if (from_lobby || bot.state != BotState::kWorkerHello) return;
      proto::Welcome welcome;
      if (!proto::Decode(bytes, &welcome).ok()) return FailJoin(bot, id, JoinFailure::kBadReply, now_us);
      return OnWelcome(bot, welcome, now_us);
    }
    case proto::MessageType::kRefuse: {
      if (from_lobby || bot.state != BotState::kWorkerHello) return;
      proto::Refuse refuse;
      if (!proto::Decode(bytes, &refuse).ok()) return FailJoin(bot, id, JoinFailure::kBadReply, now_us);
      return FailJoin(bot, id, FailureOf(refuse.reason), now_us);
    }
    case proto::MessageType::kKick:
      ++stats_.kicks;  // the disconnect that follows moves the bot on
      return;
    default:
      return;  // chat: nothing for a bot to do
  }
}

void BotThread::OnJoinAccept(Bot& bot, const proto::JoinAccept& accept, uint64_t now_us) {
  const uint32_t id = IdOf(bot);
  // Durability: every command the server showed as applied must still be known after a rejoin.
  if (options_.verify && bot.ever_played) {
    ++stats_.rejoin_checks;
    if (accept.last_applied_sequence < bot.max_reported_seq) ++stats_.durability_violations;
  }
  bot.max_reported_seq = accept.last_applied_sequence;  // the server's truth from here on
  bot.lobby_peer->data = nullptr;
  enet_peer_disconnect(bot.lobby_peer, 0);
  bot.lobby_peer = nullptr;
  bot.ticket = accept.session_ticket;
  bot.player_id = accept.player_id;
  bot.worker_peer = Connect(bot, accept.worker_port);
  if (bot.worker_peer == nullptr) return FailJoin(bot, id, JoinFailure::kWorkerTimeout, now_us);
  bot.state = BotState::kWorkerConnect;
  bot.deadline_ms = now_us / 1000 + kStepTimeoutMs;
  wheel_.Reschedule(id, bot.deadline_ms);
}

void BotThread::OnWelcome(Bot& bot, const proto::Welcome& welcome, uint64_t now_us) {
  const uint32_t id = IdOf(bot);
  bot.state = BotState::kPlaying;
  ++connected_;
  ++stats_.joins;
  if (!bot.ever_played && welcome.last_applied_sequence > 0) ++stats_.resumed;
  if (bot.ever_played) {
    ++stats_.reconnects;
    live_.reconnects.fetch_add(1, std::memory_order_relaxed);
  }
  bot.ever_played = true;
  bot.attempts = 0;
  bot.joining = false;
  stats_.join.Add(static_cast<double>(now_us - bot.join_start_us));
  // The protocol's numbering rule: continue right after what the server has applied.
  bot.next_seq = welcome.last_applied_sequence + 1;
  bot.sent_seq = bot.answered_seq = welcome.last_applied_sequence;
  bot.session_first_seq = bot.next_seq;
  bot.max_reported_seq = std::max(bot.max_reported_seq, welcome.last_applied_sequence);
  bot.brain.player_id = welcome.player_id;
  bot.decoder.Reset();
  bot.deaths_known = false;
  bot.last_snapshot_ms = now_us / 1000;  // the silence clock starts now
  bot.self_stall_us_at_snapshot = self_stall_us_;
  bot.next_cmd_us = NextSendUs(bot, now_us);
  wheel_.Reschedule(id, bot.next_cmd_us / 1000);
}

void BotThread::OnSnapshot(Bot& bot, const ENetPacket* packet, uint64_t now_us, uint64_t arrival_us) {
  if (!bot.decoder.Decode({packet->data, packet->dataLength}, &snapshot_).ok()) {
    ++stats_.snapshot_errors;  // a missing baseline makes the decoder ack 0: a full one follows
    return;
  }
  ++stats_.replies_received;
  stats_.read_lag.Add(static_cast<double>(now_us - arrival_us));
  live_.replies.fetch_add(1, std::memory_order_relaxed);
  NoteOutage(now_us);
  last_reply_us_ = now_us;
  self_stall_us_at_reply_ = self_stall_us_;
  bot.last_snapshot_ms = now_us / 1000;
  bot.self_stall_us_at_snapshot = self_stall_us_;

  const uint32_t applied = snapshot_.last_applied_sequence;
  bot.max_reported_seq = std::max(bot.max_reported_seq, applied);
  const uint32_t answered = std::min(applied, bot.sent_seq);
  if (answered > bot.answered_seq) {
    // Commands answered now; the ones too old for the ring count without a sample.
    const uint32_t first_sampled = std::max(bot.answered_seq + 1, answered >= kSendRing ? answered - kSendRing + 1 : 1);
    for (uint32_t k = first_sampled; k <= answered; ++k) {
      const uint64_t sent_us = bot.sent_us[k % kSendRing];
      interval_.Add(static_cast<double>(std::max(arrival_us, sent_us) - sent_us));
      stats_.response_read.Add(static_cast<double>(now_us - sent_us));
    }
    stats_.commands_answered += answered - bot.answered_seq;
    bot.answered_seq = answered;
  }
  stats_.kill_events += snapshot_.events.size();
  for (const proto::KillEvent& k : snapshot_.events) {
    if (k.victim_id == bot.brain.player_id) ++stats_.own_death_events;
  }
  if (bot.deaths_known && snapshot_.player.deaths > bot.me.deaths) {
    stats_.deaths_seen += snapshot_.player.deaths - bot.me.deaths;
  }
  bot.deaths_known = true;
  bot.me = snapshot_.player;
  Perceive(snapshot_, &bot.brain);
}

void BotThread::OnDisconnect(Bot& bot, ENetPeer* peer, uint64_t now_us) {
  const uint32_t id = IdOf(bot);
  peer->data = nullptr;
  if (peer == bot.lobby_peer) bot.lobby_peer = nullptr;
  if (peer == bot.worker_peer) bot.worker_peer = nullptr;
  switch (bot.state) {
    case BotState::kPlaying:
      return LoseConnection(bot, id, now_us);
    case BotState::kLobbyConnect:
    case BotState::kLobbyJoin:
      return FailJoin(bot, id, JoinFailure::kLobbyDisconnected, now_us);
    case BotState::kWorkerConnect:
    case BotState::kWorkerHello:
      return FailJoin(bot, id, JoinFailure::kWorkerDisconnected, now_us);
    default:
      return;
  }
}

void BotThread::NoteOutage(uint64_t now_us) {
  if (last_reply_us_ == 0) return;
  const uint64_t gap_us = now_us - last_reply_us_;
  const uint64_t own_us = std::min(gap_us, self_stall_us_ - self_stall_us_at_reply_);
  stats_.outage_ms = std::max(stats_.outage_ms, (gap_us - own_us) / 1000.0);
}

// --- the end of the run -----------------------------------------------------------------------

void BotThread::Finish(const std::atomic<bool>& abort) {
  const uint64_t stop_us = NowUs();
  stats_.connected_at_stop = connected_;
  for (const Bot& b : bots_) ++stats_.states_at_stop[static_cast<int>(b.state)];
  NoteOutage(stop_us);
  // Drain: no new commands; wait a little for the answers to those in flight.
  sending_ = false;
  auto outstanding = [&] {
    uint64_t n = 0;
    for (const Bot& b : bots_) {
      if (b.state == BotState::kPlaying) n += b.sent_seq - b.answered_seq;
    }
    return n;
  };
  const uint64_t drain_until_us = stop_us + static_cast<uint64_t>(options_.drain_ms) * 1000;
  bool cut_short = false;
  while (outstanding() > 0 && NowUs() < drain_until_us) {
    if (abort.load(std::memory_order_relaxed)) {
      cut_short = true;
      break;
    }
    ServiceHosts();
    WaitForTraffic(1);
  }
  if (outstanding() > 0) ++(cut_short ? stats_.drains_cut_short : stats_.drains_timed_out);
  // Leave politely so the server frees the slots now, not at its timeout.
  for (Bot& b : bots_) {
    if (b.state == BotState::kPlaying) stats_.unanswered += b.sent_seq - b.answered_seq;
    for (ENetPeer* p : {b.lobby_peer, b.worker_peer}) {
      if (p != nullptr) {
        p->data = nullptr;
        enet_peer_disconnect(p, 0);
      }
    }
    b.lobby_peer = b.worker_peer = nullptr;
    b.state = BotState::kDone;
  }
  connected_ = 0;
  const uint64_t leave_until = NowUs() + kDisconnectMs * 1000;
  while (NowUs() < leave_until) {
    bool any = false;
    for (ENetHost* h : hosts_) {
      for (size_t i = 0; i < h->peerCount; ++i) any |= h->peers[i].state != ENET_PEER_STATE_DISCONNECTED;
    }
    if (!any) break;
    ServiceHosts();
    WaitForTraffic(1);
  }
  Publish();
}

}  // namespace bots
