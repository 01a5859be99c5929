// Player admission, in the master's world phase: the workers' leave notices and the lobby's join
// requests become the tick's leaves and joins (in the order the tick record replays them), each
// accepted player gets a slot, a worker and a session ticket.
#include <algorithm>

#include <spdlog/spdlog.h>

#include "server/core/steady_clock.h"
#include "server/durability/tick_apply.h"
#include "server/protocol/messages.h"
#include "server/sv/server.h"

namespace sv {

namespace {

constexpr uint64_t kHelloDeadlineMs = 10000;  // joined players must reach their worker by then

}  // namespace

void Server::ApplyNotices() {
  notice_scratch_.clear();
  shared_.notices.DrainInto(&notice_scratch_);
  for (const WorkerNotice& n : notice_scratch_) {
    if (n.kind == WorkerNotice::Kind::kChat) {
      proto::ChatEvent chat;
      chat.from_id = static_cast<uint16_t>(n.player);
      chat.from_name = world_->Get(n.player).name;
      chat.text = n.text;
      std::vector<uint8_t> bytes;
      if (proto::Encode(chat, &bytes).ok()) Broadcast(bytes);
      continue;
    }
    auto it = online_.find(n.player);
    if (it == online_.end()) continue;
    const core::Status s = durability::ApplyLeave(world_.get(), n.player, &record_);
    if (!s.ok()) spdlog::warn("leave of player {} failed: {}", n.player, s.ToString());
    slot_used_[it->second.slot] = false;
    online_.erase(it);
    AddRelaxed(stats_.leaves, 1);
    stats_.players_online.store(online_.size(), std::memory_order_relaxed);
  }
}

int Server::WorkerForSlot(int slot) const {
  return sv::WorkerForSlot(options_.assign, slot, options_.threads, options_.max_players);
}

void Server::ApplyJoins() {
  join_scratch_.clear();
  join_requests_.DrainInto(&join_scratch_);
  // A tick record lists leaves before joins, so every leave a duplicate login causes is applied
  // first, then the joins. Of several requests for one name in this batch the newest wins.
  std::vector<bool> superseded(join_scratch_.size(), false);
  for (size_t i = 0; i < join_scratch_.size(); ++i) {
    for (size_t j = i + 1; j < join_scratch_.size() && !superseded[i]; ++j) {
      superseded[i] = join_scratch_[j].name == join_scratch_[i].name;
    }
  }
  for (size_t i = 0; i < join_scratch_.size(); ++i) {
    if (!superseded[i]) ReplaceOnlineSession(join_scratch_[i]);
  }
  for (size_t i = 0; i < join_scratch_.size(); ++i) {
    JoinDecision d;
    d.lobby_conn = join_scratch_[i].lobby_conn;
    if (superseded[i]) {
      d.refuse.reason = proto::RefuseReason::kAlreadyConnected;
      d.refuse.text = "superseded by a newer login of the same identity";
    } else {
      d.refuse = DecideJoin(join_scratch_[i], &d);
    }
    join_decisions_.Push(std::move(d));
  }
}

void Server::ReplaceOnlineSession(const JoinTicketRequest& req) {
  const game::EntityId existing = world_->FindPlayer(req.name);
  auto it = online_.find(existing);
  // Duplicate login (docs/protocol.md section 4): with the right token the new session wins.
  // The old one leaves now, in this serial phase and in the log, and its worker drops the
  // session without a leave notice. A wrong token never kicks the real player.
  if (existing == 0 || it == online_.end() || !world_->TokenMatches(existing, req.token)) return;
  PlayerAssignment drop;
  drop.player = existing;
  drop.drop = true;
  drop.rejoin_ip = req.source_ip;
  drop.rejoin_port = req.source_port;
  workers_[it->second.worker]->assignments().Push(drop);
  const core::Status s = durability::ApplyLeave(world_.get(), existing, &record_);
  if (!s.ok()) spdlog::warn("leave of player {} on duplicate login failed: {}", existing, s.ToString());
  slot_used_[it->second.slot] = false;
  online_.erase(it);
  AddRelaxed(stats_.leaves, 1);
}

proto::JoinRefuse Server::DecideJoin(const JoinTicketRequest& req, JoinDecision* d) {
  proto::JoinRefuse refuse;
  const game::EntityId existing = world_->FindPlayer(req.name);
  const bool known = existing != 0 || world_->FindRecord(req.name) != 0;
  if (existing != 0 && online_.count(existing)) {
    // Still online after ReplaceOnlineSession: the token did not match.
    refuse.reason = proto::RefuseReason::kWrongToken;
    refuse.text = "wrong token for player '" + req.name + "'";
    return refuse;
  }
  if (online_.size() >= static_cast<size_t>(options_.max_players)) {
    refuse.reason = proto::RefuseReason::kServerFull;
    refuse.text = "server full (" + std::to_string(options_.max_players) + " players)";
    return refuse;
  }
  // A new identity costs a record when it leaves: new names per source address are rate-limited
  // so a flood of one-shot names cannot churn returning players' records out of the store.
  if (!known && !new_identities_.Allow(req.source_ip, 0, core::SteadyMs())) {
    refuse.reason = proto::RefuseReason::kServerFull;
    refuse.text = "too many new players from your address: try again later or join with a known name";
    stats_.new_identity_refusals.fetch_add(1, std::memory_order_relaxed);
    return refuse;
  }
  const game::JoinResult r = durability::ApplyJoin(world_.get(), req.name, req.token, &record_);
  if (!r.status.ok()) {
    if (r.status.code() == core::Status::Code::kInvalidArgument) {
      refuse.reason = proto::RefuseReason::kBadName;
    } else {
      refuse.reason = known ? proto::RefuseReason::kWrongToken : proto::RefuseReason::kServerFull;
    }
    refuse.text = r.status.message().substr(0, proto::kMaxReasonChars);
    return refuse;
  }
  int slot = 0;
  while (slot_used_[slot]) ++slot;  // online_.size() < max_players: a free slot exists
  slot_used_[slot] = true;
  const int worker = WorkerForSlot(slot);
  online_[r.player] = Online{slot, worker, core::SteadyMs()};
  uint64_t ticket = 0;
  while (ticket == 0) ticket = ticket_rng_();
  const game::Edict& p = world_->Get(r.player);
  workers_[worker]->assignments().Push(
      PlayerAssignment{r.player, ticket, p.last_cmd_sequence, core::SteadyMs() + kHelloDeadlineMs});
  last_frags_[r.player] = p.frags;
  last_deaths_[r.player] = p.deaths;
  d->accepted = true;
  d->accept.worker_port = workers_[worker]->port();
  d->accept.player_id = static_cast<uint16_t>(r.player);
  d->accept.session_ticket = ticket;
  d->accept.last_applied_sequence = p.last_cmd_sequence;
  d->accept.tick_rate_hz = static_cast<uint16_t>(options_.tick_hz);
  d->accept.server_tick = static_cast<uint32_t>(std::max(0, world_->globals().tick));
  d->accept.server_time_ms = core::SteadyMs() - start_ms_;
  AddRelaxed(stats_.joins, 1);
  stats_.players_online.store(online_.size(), std::memory_order_relaxed);
  if (online_.size() > Load(stats_.max_players_online)) {
    stats_.max_players_online.store(online_.size(), std::memory_order_relaxed);
  }
  return refuse;
}

}  // namespace sv
