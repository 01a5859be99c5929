// StatsReport: snapshot of the counters, JSON rendering, console line, atomic file write.
#include "server/sv/stats_report.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <string_view>
#include <utility>

#include "server/core/utf8.h"

namespace sv {

namespace {

double Ratio(double num, double den) { return den > 0 ? num / den : 0.0; }

// JSON string escaping for the few free-text fields (map path, names of modes). A path's bytes
// need not be UTF-8; JSON's must (core::ValidUtf8).
std::string JsonString(std::string_view raw) {
  const std::string s = core::ValidUtf8(raw);
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string Num(double v) {
  if (!std::isfinite(v)) return "0";
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.4f", v);
  return buf;
}

std::string Num(uint64_t v) { return std::to_string(v); }

// {"key": value, ...} of already formatted values, in the order given.
std::string JsonObject(std::initializer_list<std::pair<std::string_view, std::string>> fields) {
  std::string out = "{";
  for (const auto& [key, value] : fields) {
    if (out.size() > 1) out += ", ";
    out += JsonString(key) + ": " + value;
  }
  return out + "}";
}

std::string BreakdownJson(const std::array<uint64_t, kPhaseCount>& ns) {
  const auto pct = Percentages(ns);
  std::string out = "{";
  for (int p = 0; p < kPhaseCount; ++p) {
    if (p) out += ", ";
    out += JsonString(kPhaseNames[p]) + ": " + Num(pct[p]);
  }
  return out + "}";
}

std::string Hex64(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

// The "recovery", "checkpoint" and "log" objects (docs/stats.md).
void DurabilityJson(const DurabilityReport& d, std::string* j) {
  const durability::WorldRecoveryReport& r = d.recovery;
  *j += "  \"data_dir\": " + JsonString(d.data_dir) + ",\n";
  *j += "  \"recovery\": {\"found_state\": " + std::string(r.found_state ? "true" : "false") +
        ", \"checkpoint_tick\": " + Num(r.checkpoint_tick) +
        ", \"backup\": " + std::to_string(r.backup_index) +
        ", \"ticks_replayed\": " + Num(r.ticks_replayed) +
        ", \"recovered_tick\": " + Num(r.recovered_tick) +
        ", \"world_tick\": " + std::to_string(r.world_tick) +
        ", \"restore_ms\": " + Num(r.restore_ms) + ", \"replay_ms\": " + Num(r.replay_ms) +
        ", \"replay_threads\": " + std::to_string(r.replay_threads) +
        ", \"replay_lock_order_ticks\": " + Num(r.replay_lock_order_ticks) +
        ", \"replay_coarse_tree_ticks\": " + Num(r.replay_coarse_tree_ticks) +
        ", \"commands_replayed\": " + Num(r.commands_replayed) +
        ", \"speed_x_realtime\": " + Num(r.speed_x_realtime) +
        ", \"total_ms\": " + Num(r.total_ms) + ", \"state_hash\": \"" + Hex64(r.state_hash) +
        "\", \"torn_tail_cut\": " + (r.torn_tail_cut ? "true" : "false") +
        ", \"replay_check\": {\"outcome\": " +
        JsonString(durability::ReplayCheckName(r.replay_check.outcome)) +
        ", \"from_tick\": " + Num(r.replay_check.from_tick) +
        ", \"to_tick\": " + Num(r.replay_check.to_tick) +
        ", \"duration_ms\": " + Num(r.replay_check.duration_ms) +
        ", \"beside_recovery\": " + (r.replay_check.beside_recovery ? "true" : "false") +
        ", \"fallback_damaged\": " + (r.replay_check.fallback_damaged ? "true" : "false") +
        ", \"detail\": " + JsonString(r.replay_check.detail) + "}},\n";
  const recovery::CheckpointStats& c = d.stats.checkpoint;
  *j += "  \"checkpoint\": {\"algorithm\": " + JsonString(d.algorithm) +
        ", \"interval_ms\": " + std::to_string(d.interval_ms) +
        ", \"count\": " + Num(c.checkpoints) +
        ", \"pause_mean_ms\": " + Num(c.mean_pause_ms()) +
        ", \"pause_max_ms\": " + Num(c.pause_max_ms) +
        ", \"bytes_written\": " + Num(c.bytes_written) +
        ", \"duration_mean_ms\": " + Num(c.mean_checkpoint_ms()) +
        ", \"duration_max_ms\": " + Num(c.checkpoint_max_ms) +
        ", \"saved_on_update\": " + Num(c.saved_on_update) +
        ", \"last_tick\": " + Num(c.last_tick) + "},\n";
  const durability::DurabilityStats& s = d.stats;
  const double ticks = static_cast<double>(s.ticks_logged);
  *j += "  \"log\": {\"durability\": " + JsonString(d.mode) +
        ", \"ticks\": " + Num(s.ticks_logged) + ", \"durable_tick\": " + Num(s.durable_tick) +
        ", \"bytes\": " + Num(s.log.bytes) + ", \"syncs\": " + Num(s.log.syncs) +
        ", \"sync_ms\": " + Num(static_cast<double>(s.log.sync_ns) / 1e6) +
        ", \"sync_mean_ms\": " + Num(Ratio(static_cast<double>(s.log.sync_ns) / 1e6,
                                            static_cast<double>(s.log.syncs))) +
        ", \"append_mean_ms\": " + Num(Ratio(s.log_append_ms_total, ticks)) +
        ", \"wait_mean_ms\": " + Num(Ratio(s.wait_durable_ms_total, ticks)) +
        ", \"wait_max_ms\": " + Num(s.wait_durable_ms_max) + "},\n";
}

}  // namespace

std::array<double, kPhaseCount> Percentages(const std::array<uint64_t, kPhaseCount>& ns) {
  std::array<double, kPhaseCount> pct{};
  double total = 0;
  for (uint64_t v : ns) total += static_cast<double>(v);
  if (total <= 0) return pct;
  for (int p = 0; p < kPhaseCount; ++p) pct[p] = 100.0 * static_cast<double>(ns[p]) / total;
  return pct;
}

namespace {

JunkReport TakeJunkReport(const JunkCounters& c) {
  JunkReport r;
  r.short_datagrams = Load(c.short_datagrams);
  r.oversize = Load(c.oversize);
  r.unreadable = Load(c.unreadable);
  r.bad_header = Load(c.bad_header);
  r.bad_connect = Load(c.bad_connect);
  r.unknown_peer = Load(c.unknown_peer);
  r.connectionless_bad = Load(c.connectionless_bad);
  r.connectionless_limited = Load(c.connectionless_limited);
  r.connect_capped = Load(c.connect_capped);
  r.dropped = r.short_datagrams + r.oversize + r.unreadable + r.bad_header + r.bad_connect +
              r.unknown_peer + r.connectionless_bad + r.connectionless_limited + r.connect_capped;
  r.half_open_expired = Load(c.half_open_expired);
  r.half_open_evicted = Load(c.half_open_evicted);
  r.half_open_max = Load(c.half_open_max);
  return r;
}

std::string JunkJson(const JunkReport& r) {
  return "{\"dropped\": " + Num(r.dropped) + ", \"short\": " + Num(r.short_datagrams) +
         ", \"oversize\": " + Num(r.oversize) + ", \"unreadable\": " + Num(r.unreadable) +
         ", \"bad_header\": " + Num(r.bad_header) + ", \"bad_connect\": " + Num(r.bad_connect) +
         ", \"unknown_peer\": " + Num(r.unknown_peer) +
         ", \"connectionless_bad\": " + Num(r.connectionless_bad) +
         ", \"connectionless_limited\": " + Num(r.connectionless_limited) +
         ", \"connect_capped\": " + Num(r.connect_capped) +
         ", \"half_open_expired\": " + Num(r.half_open_expired) +
         ", \"half_open_evicted\": " + Num(r.half_open_evicted) +
         ", \"half_open_max\": " + Num(r.half_open_max) + "}";
}

}  // namespace

StatsReport TakeReport(const ServerStats& s, const ReportInfo& info) {
  StatsReport r;
  r.info = info;
  r.players = Load(s.players_online);
  r.max_players_online = Load(s.max_players_online);
  r.frames = Load(s.frames);
  r.world_ticks = Load(s.world_ticks);
  r.invalid_packets = Load(s.invalid_packets);
  r.chat_dropped = Load(s.chat_dropped);
  r.kicked = Load(s.kicked);
  r.joins = Load(s.joins);
  r.join_refusals = Load(s.join_refusals);
  r.records = {Load(s.records_offline), static_cast<uint64_t>(info.max_records),
               Load(s.records_evicted), Load(s.new_identity_refusals)};
  r.leaves = Load(s.leaves);
  r.junk = TakeJunkReport(s.junk);
  for (int t = 0; t < s.threads(); ++t) {
    const ThreadStats& ts = s.thread(t);
    std::array<uint64_t, kPhaseCount> ns{};
    for (int p = 0; p < kPhaseCount; ++p) {
      ns[p] = Load(ts.phase_ns[p]);
      r.total_ns[p] += ns[p];
    }
    r.thread_ns.push_back(ns);
    r.thread_requests.push_back(Load(ts.requests));
    r.thread_commands.push_back(Load(ts.commands));
    r.thread_replies.push_back(Load(ts.replies));
    r.thread_frames.push_back(Load(ts.frames));
    r.requests += r.thread_requests.back();
    r.commands += r.thread_commands.back();
    r.replies += r.thread_replies.back();
    r.kill_events += Load(ts.kill_events);
    r.kill_events_dropped += Load(ts.kill_events_dropped);
  }
  const core::LogHistogram frames = s.FrameHistogram();
  r.frame = {frames.count(), frames.mean_us() / 1000.0, frames.Percentile(0.50) / 1000.0,
             frames.Percentile(0.99) / 1000.0, frames.max_us() / 1000.0};
  const double n = static_cast<double>(Load(s.rptf_samples));
  r.rptf_mean = Ratio(static_cast<double>(Load(s.rptf_sum)), n);
  const double mean_sq = Ratio(static_cast<double>(Load(s.rptf_sum_sq)), n);
  r.rptf_stddev = std::sqrt(std::max(0.0, mean_sq - r.rptf_mean * r.rptf_mean));
  r.rptf_mean_spread = Ratio(static_cast<double>(Load(s.rptf_spread_sum)),
                             static_cast<double>(Load(s.rptf_spread_frames)));
  const double locked = static_cast<double>(Load(s.locked_commands));
  r.leaves_per_request = Ratio(static_cast<double>(Load(s.distinct_leaves)), locked);
  r.leaves_per_request_pct =
      info.leaf_count > 0 ? 100.0 * r.leaves_per_request / info.leaf_count : 0.0;
  r.leaf_acquisitions = Load(s.leaf_acquisitions);
  r.relock_pct = 100.0 * Ratio(static_cast<double>(Load(s.relocks)),
                               static_cast<double>(r.leaf_acquisitions));
  r.shared_leaves_pct = Ratio(static_cast<double>(Load(s.shared_leaves_milli_pct)) / 1000.0,
                              static_cast<double>(Load(s.shared_frames)));
  r.lock_retries = Load(s.lock_retries);
  r.waited_commands = Load(s.waited_commands);
  r.waited_commands_pct = 100.0 * Ratio(static_cast<double>(r.waited_commands),
                                        static_cast<double>(r.commands));
  r.replay.commands_refused = Load(s.refused_commands);
  StatsReport::AssignmentFigures& a = r.assignment;
  a.exec_imbalance_pct = 100.0 * Ratio(static_cast<double>(Load(s.exec_spread_sum)),
                                       static_cast<double>(Load(s.exec_mean_milli_sum)) / 1000.0);
  a.exec_imbalance_steady_pct =
      100.0 * Ratio(static_cast<double>(Load(s.steady_exec_spread_sum)),
                    static_cast<double>(Load(s.steady_exec_mean_milli_sum)) / 1000.0);
  a.steady_frames = Load(s.steady_frames);
  a.routed_commands = Load(s.routed_commands);
  a.routed_commands_pct = 100.0 * Ratio(static_cast<double>(a.routed_commands),
                                        static_cast<double>(r.commands));
  a.migrations = Load(s.migrations);
  a.rebalances = Load(s.rebalances);
  a.leaves_moved = Load(s.leaves_moved);
  a.migrations_per_s = Ratio(static_cast<double>(a.migrations), info.uptime_s);
  return r;
}

namespace {

// One `  "key": value` line of a top-level object, with its comma unless it is the last.
void AppendField(std::string* j, std::string_view key, const std::string& value, bool last = false) {
  *j += "  " + JsonString(key) + ": " + value + (last ? "\n" : ",\n");
}

// aftershock-replay's fields, the last of the object.
void ReplayJson(const ReplayFigures& p, std::string* j) {
  auto hex = [](uint64_t v) { return "\"" + Hex64(v) + "\""; };
  auto field = [j](std::string_view key, const std::string& value, bool last = false) {
    AppendField(j, key, value, last);
  };
  field("data_dir", JsonString(p.data_dir));
  field("from_tick", Num(p.from_tick));
  field("to_tick", Num(p.to_tick));
  field("ticks", Num(p.ticks));
  field("commands_refused", Num(p.commands_refused));
  field("snapshot_bytes", Num(p.snapshot_bytes));
  field("wall_s", Num(p.wall_s));
  field("speed_x_realtime", Num(p.speed_x_realtime));
  field("order_as_recorded", p.order_as_recorded ? "true" : "false");
  field("state_hash", hex(p.state_hash));
  field("recorded_hash_source", JsonString(p.recorded_hash_source));
  field("recorded_state_hash", p.has_recorded_hash ? hex(p.recorded_state_hash) : "null");
  field("state_hash_match",
        p.has_recorded_hash ? (p.state_hash == p.recorded_state_hash ? "true" : "false") : "null",
        /*last=*/true);
}

}  // namespace

std::string ToJson(const StatsReport& r) {
  std::string j = "{\n";
  auto field = [&j](std::string_view key, const std::string& value, bool last = false) {
    AppendField(&j, key, value, last);
  };
  field("threads", Num(static_cast<uint64_t>(r.info.threads)));
  field("locking", JsonString(r.info.locking));
  field("frame_mode", JsonString(r.info.frame_mode));
  field("assign", JsonString(r.info.assign));
  field("map", JsonString(r.info.map));
  field("tick_hz", Num(static_cast<uint64_t>(r.info.tick_hz)));
  field("areanode_depth", Num(static_cast<uint64_t>(r.info.areanode_depth)));
  field("areanode_leaves", Num(static_cast<uint64_t>(r.info.leaf_count)));
  field("max_players", Num(static_cast<uint64_t>(r.info.max_players)));
  field("instrument", r.info.instrument ? "true" : "false");
  field("uptime_s", Num(r.info.uptime_s));
  std::string ports = "{\"lobby\": " + Num(static_cast<uint64_t>(r.info.lobby_port)) + ", \"workers\": [";
  for (size_t w = 0; w < r.info.worker_ports.size(); ++w) {
    ports += (w ? ", " : "") + Num(static_cast<uint64_t>(r.info.worker_ports[w]));
  }
  ports += "]";
  if (r.info.metrics_port != 0) ports += ", \"metrics\": " + Num(static_cast<uint64_t>(r.info.metrics_port));
  field("ports", ports + "}");
  field("players", Num(r.players));
  field("max_players_online", Num(r.max_players_online));
  field("frames", Num(r.frames));
  field("world_ticks", Num(r.world_ticks));
  field("requests", Num(r.requests));
  field("commands", Num(r.commands));
  field("replies", Num(r.replies));
  field("kill_events",
        JsonObject({{"queued", Num(r.kill_events)}, {"dropped", Num(r.kill_events_dropped)}}));
  field("breakdown_pct", BreakdownJson(r.total_ns));
  std::string per = "[";
  for (size_t t = 0; t < r.thread_ns.size(); ++t) {
    if (t) per += ",";
    per += "\n    {\"thread\": " + Num(static_cast<uint64_t>(t)) +
           ", \"frames\": " + Num(r.thread_frames[t]) +
           ", \"requests\": " + Num(r.thread_requests[t]) +
           ", \"commands\": " + Num(r.thread_commands[t]) +
           ", \"replies\": " + Num(r.thread_replies[t]) +
           ", \"breakdown_pct\": " + BreakdownJson(r.thread_ns[t]) + "}";
  }
  field("per_thread", per + "\n  ]");
  field("frame_ms", JsonObject({{"count", Num(r.frame.count)}, {"mean", Num(r.frame.mean_ms)},
                                {"p50", Num(r.frame.p50_ms)}, {"p99", Num(r.frame.p99_ms)},
                                {"max", Num(r.frame.max_ms)}}));
  field("requests_per_thread_per_frame",
        JsonObject({{"mean", Num(r.rptf_mean)}, {"stddev", Num(r.rptf_stddev)},
                    {"mean_spread", Num(r.rptf_mean_spread)}}));
  field("lock", JsonObject({{"leaves_per_request", Num(r.leaves_per_request)},
                            {"leaves_per_request_pct", Num(r.leaves_per_request_pct)},
                            {"relock_pct", Num(r.relock_pct)},
                            {"shared_leaves_pct", Num(r.shared_leaves_pct)},
                            {"leaf_acquisitions", Num(r.leaf_acquisitions)},
                            {"retries", Num(r.lock_retries)},
                            {"waited_commands", Num(r.waited_commands)},
                            {"waited_commands_pct", Num(r.waited_commands_pct)}}));
  const StatsReport::AssignmentFigures& a = r.assignment;
  field("assignment", JsonObject({{"exec_imbalance_pct", Num(a.exec_imbalance_pct)},
                                  {"exec_imbalance_steady_pct", Num(a.exec_imbalance_steady_pct)},
                                  {"steady_frames", Num(a.steady_frames)},
                                  {"routed_commands", Num(a.routed_commands)},
                                  {"routed_commands_pct", Num(a.routed_commands_pct)},
                                  {"migrations", Num(a.migrations)},
                                  {"migrations_per_s", Num(a.migrations_per_s)},
                                  {"rebalances", Num(a.rebalances)},
                                  {"leaves_moved", Num(a.leaves_moved)}}));
  if (r.durability.enabled) DurabilityJson(r.durability, &j);
  field("invalid_packets", Num(r.invalid_packets));
  field("chat_dropped", Num(r.chat_dropped));
  field("kicked", Num(r.kicked));
  field("junk", JunkJson(r.junk));
  field("joins", Num(r.joins));
  field("join_refusals", Num(r.join_refusals));
  field("records", "{\"offline\": " + Num(r.records.offline) + ", \"capacity\": " +
                       Num(r.records.capacity) + ", \"evicted\": " + Num(r.records.evicted) +
                       ", \"new_identity_refusals\": " + Num(r.records.new_identity_refusals) + "}");
  field("leaves", Num(r.leaves), /*last=*/!r.replay.enabled);
  if (r.replay.enabled) ReplayJson(r.replay, &j);
  return j + "}\n";
}

std::string ConsoleLine(const StatsReport& prev, const StatsReport& cur) {
  const double dt = cur.info.uptime_s - prev.info.uptime_s;
  std::array<uint64_t, kPhaseCount> d{};
  for (int p = 0; p < kPhaseCount; ++p) d[p] = cur.total_ns[p] - prev.total_ns[p];
  const auto pct = Percentages(d);
  const auto P = [&pct](Phase p) { return pct[static_cast<int>(p)]; };
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "players %llu | %.1f frames/s | %.0f req/s | frame p99 %.2f ms | lock %.1f%% | "
                "wait %.1f%% | idle %.1f%% | invalid %llu kicked %llu junk %llu",
                static_cast<unsigned long long>(cur.players),
                Ratio(static_cast<double>(cur.frames - prev.frames), dt),
                Ratio(static_cast<double>(cur.requests - prev.requests), dt), cur.frame.p99_ms,
                P(Phase::kLockLeaf) + P(Phase::kLockParent),
                P(Phase::kIntraWait) + P(Phase::kInterWait), P(Phase::kIdle),
                static_cast<unsigned long long>(cur.invalid_packets),
                static_cast<unsigned long long>(cur.kicked),
                static_cast<unsigned long long>(cur.junk.dropped));
  return buf;
}

}  // namespace sv
