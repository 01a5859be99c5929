// BotStats merging and failure names.
#include "client_bots/bot_stats.h"

#include <algorithm>

namespace bots {

const char* BotStateName(BotState s) {
  switch (s) {
    case BotState::kWaiting: return "waiting";
    case BotState::kChallenge: return "challenge";
    case BotState::kLobbyConnect: return "lobby_connect";
    case BotState::kLobbyJoin: return "lobby_join";
    case BotState::kWorkerConnect: return "worker_connect";
    case BotState::kWorkerHello: return "worker_hello";
    case BotState::kPlaying: return "playing";
    case BotState::kBackoff: return "backoff";
    case BotState::kDone: return "done";
  }
  return "unknown";
}

const char* JoinFailureName(JoinFailure f) {
  switch (f) {
    case JoinFailure::kServerFull: return "server_full";
    case JoinFailure::kWrongProtocolVersion: return "wrong_protocol_version";
    case JoinFailure::kWrongToken: return "wrong_token";
    case JoinFailure::kBadChallenge: return "bad_challenge";
    case JoinFailure::kBadName: return "bad_name";
    case JoinFailure::kBanned: return "banned";
    case JoinFailure::kShuttingDown: return "shutting_down";
    case JoinFailure::kBadTicket: return "bad_ticket";
    case JoinFailure::kAlreadyConnected: return "already_connected";
    case JoinFailure::kNoChallenge: return "no_challenge";
    case JoinFailure::kLobbyTimeout: return "lobby_timeout";
    case JoinFailure::kLobbyDisconnected: return "lobby_disconnected";
    case JoinFailure::kWorkerTimeout: return "worker_timeout";
    case JoinFailure::kWorkerDisconnected: return "worker_disconnected";
    case JoinFailure::kBadReply: return "bad_reply";
  }
  return "unknown";
}

uint64_t BotStats::join_failures_total() const {
  uint64_t n = 0;
  for (uint64_t c : join_failures) n += c;
  return n;
}

void BotStats::Merge(const BotStats& o) {
  requests_sent += o.requests_sent;
  replies_received += o.replies_received;
  commands_answered += o.commands_answered;
  unanswered += o.unanswered;
  drains_timed_out += o.drains_timed_out;
  drains_cut_short += o.drains_cut_short;
  snapshot_errors += o.snapshot_errors;
  kill_events += o.kill_events;
  own_death_events += o.own_death_events;
  deaths_seen += o.deaths_seen;
  joins += o.joins;
  reconnects += o.reconnects;
  resumed += o.resumed;
  connections_lost += o.connections_lost;
  kicks += o.kicks;
  durability_violations += o.durability_violations;
  rejoin_checks += o.rejoin_checks;
  datagrams_sent += o.datagrams_sent;
  datagrams_received += o.datagrams_received;
  bytes_sent += o.bytes_sent;
  bytes_received += o.bytes_received;
  for (int i = 0; i < kNumJoinFailures; ++i) join_failures[i] += o.join_failures[i];
  response.Merge(o.response);
  response_read.Merge(o.response_read);
  read_lag.Merge(o.read_lag);
  arrival_stamps = arrival_stamps && o.arrival_stamps;
  join.Merge(o.join);
  outage_ms = std::max(outage_ms, o.outage_ms);
  self_stalls += o.self_stalls;
  self_stall_ms_total += o.self_stall_ms_total;
  self_stall_ms_max = std::max(self_stall_ms_max, o.self_stall_ms_max);
  connected_at_stop += o.connected_at_stop;
  for (size_t i = 0; i < states_at_stop.size(); ++i) states_at_stop[i] += o.states_at_stop[i];
}

}  // namespace bots
