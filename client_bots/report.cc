// JSON summary, CSV series and console line formatting.
#include "client_bots/report.h"

#include <cerrno>
#include <cstring>
#include <sstream>


namespace bots {

namespace {

std::string Num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3f", v);
  return buf;
}

std::string Quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) continue;
    out += c;
  }
  return out + "\"";
}

}  // namespace

std::string SummaryJson(const BotOptions& o, const BotStats& s, const RunFacts& f) {
  const double ms = 1e-3;  // histograms hold microseconds
  std::ostringstream j;
  j << "{\n";
  j << "  \"bots\": " << o.bots << ",\n";
  j << "  \"connected\": " << s.connected_at_stop << ",\n";
  j << "  \"duration_s\": " << Num(f.elapsed_s) << ",\n";
  j << "  \"rate_hz\": " << Num(o.rate_hz) << ",\n";
  j << "  \"command_ms\": " << o.command_ms() << ",\n";
  j << "  \"threads\": " << o.threads << ",\n";
  j << "  \"behavior\": " << Quoted(BehaviorName(o.behavior)) << ",\n";
  std::string servers;
  for (const Endpoint& e : o.servers) servers += (servers.empty() ? "" : ",") + e.host + ":" + std::to_string(e.port);
  j << "  \"server\": " << Quoted(servers) << ",\n";
  j << "  \"identity_prefix\": " << Quoted(o.identity_prefix) << ",\n";
  j << "  \"seed\": " << o.seed << ",\n";
  j << "  \"nav_map\": " << Quoted(f.nav_map) << ",\n";
  j << "  \"requests_sent\": " << s.requests_sent << ",\n";
  j << "  \"replies_received\": " << s.replies_received << ",\n";
  j << "  \"request_rate\": " << Num(f.elapsed_s > 0 ? s.requests_sent / f.elapsed_s : 0) << ",\n";
  j << "  \"response_rate\": " << Num(f.elapsed_s > 0 ? s.replies_received / f.elapsed_s : 0) << ",\n";
  j << "  \"response_ms\": {\"count\": " << s.response.count() << ", \"mean\": " << Num(s.response.mean_us() * ms)
    << ", \"p50\": " << Num(s.response.Percentile(0.50) * ms) << ", \"p90\": " << Num(s.response.Percentile(0.90) * ms)
    << ", \"p99\": " << Num(s.response.Percentile(0.99) * ms) << ", \"max\": " << Num(s.response.max_us() * ms)
    << "},\n";
  j << "  \"arrival_stamps\": " << (s.arrival_stamps ? "true" : "false") << ",\n";
  j << "  \"response_read_ms\": {\"mean\": " << Num(s.response_read.mean_us() * ms)
    << ", \"p50\": " << Num(s.response_read.Percentile(0.50) * ms) << ", \"p99\": " << Num(s.response_read.Percentile(0.99) * ms)
    << ", \"max\": " << Num(s.response_read.max_us() * ms) << "},\n";
  j << "  \"read_lag_ms\": {\"mean\": " << Num(s.read_lag.mean_us() * ms)
    << ", \"p50\": " << Num(s.read_lag.Percentile(0.50) * ms) << ", \"p99\": " << Num(s.read_lag.Percentile(0.99) * ms)
    << ", \"max\": " << Num(s.read_lag.max_us() * ms) << "},\n";
  j << "  \"commands_answered\": " << s.commands_answered << ",\n";
  j << "  \"unanswered\": " << s.unanswered << ",\n";
  // The end-of-run drain: "cut_short" if a second signal ended some thread's wait, else
  // "timed_out" if some thread still had answers in flight at --drain-ms, else "complete".
  j << "  \"drain\": \"" << (s.drains_cut_short > 0 ? "cut_short" : s.drains_timed_out > 0 ? "timed_out" : "complete")
    << "\",\n";
  j << "  \"snapshot_errors\": " << s.snapshot_errors << ",\n";
  j << "  \"kill_events\": " << s.kill_events << ",\n";
  j << "  \"own_death_events\": " << s.own_death_events << ",\n";
  j << "  \"deaths_seen\": " << s.deaths_seen << ",\n";
  j << "  \"joins\": " << s.joins << ",\n";
  j << "  \"join_ms\": {\"mean\": " << Num(s.join.mean_us() * ms) << ", \"p50\": " << Num(s.join.Percentile(0.5) * ms)
    << ", \"p99\": " << Num(s.join.Percentile(0.99) * ms) << ", \"max\": " << Num(s.join.max_us() * ms) << "},\n";
  j << "  \"join_failures\": " << s.join_failures_total() << ",\n";
  j << "  \"join_failure_reasons\": {";
  bool first = true;
  for (int i = 1; i < kNumJoinFailures; ++i) {
    if (s.join_failures[i] == 0) continue;
    j << (first ? "" : ", ") << Quoted(JoinFailureName(static_cast<JoinFailure>(i))) << ": " << s.join_failures[i];
    first = false;
  }
  j << "},\n";
  j << "  \"states_at_stop\": {";
  first = true;
  for (size_t i = 0; i < s.states_at_stop.size(); ++i) {
    if (s.states_at_stop[i] == 0) continue;
    j << (first ? "" : ", ") << Quoted(BotStateName(static_cast<BotState>(i))) << ": " << s.states_at_stop[i];
    first = false;
  }
  j << "},\n";
  j << "  \"reconnects\": " << s.reconnects << ",\n";
  j << "  \"resumed\": " << s.resumed << ",\n";
  j << "  \"connections_lost\": " << s.connections_lost << ",\n";
  j << "  \"kicks\": " << s.kicks << ",\n";
  j << "  \"outage_ms\": " << Num(s.outage_ms) << ",\n";
  j << "  \"self_stalls\": " << s.self_stalls << ",\n";
  j << "  \"self_stall_ms\": {\"total\": " << Num(s.self_stall_ms_total) << ", \"max\": " << Num(s.self_stall_ms_max)
    << "},\n";
  j << "  \"verify\": " << (o.verify ? "true" : "false") << ",\n";
  j << "  \"rejoin_checks\": " << s.rejoin_checks << ",\n";
  j << "  \"durability_violations\": " << s.durability_violations << ",\n";
  j << "  \"datagrams_sent\": " << s.datagrams_sent << ",\n";
  j << "  \"datagrams_received\": " << s.datagrams_received << ",\n";
  j << "  \"bytes_sent\": " << s.bytes_sent << ",\n";
  j << "  \"bytes_received\": " << s.bytes_received << ",\n";
  j << "  \"cpu_s\": " << Num(f.cpu_s) << ",\n";
  j << "  \"cpu_pct_of_core\": " << Num(f.elapsed_s > 0 ? 100.0 * f.cpu_s / f.elapsed_s : 0) << ",\n";
  j << "  \"cpu_s_per_1000_requests\": "
    << (s.requests_sent > 0 ? Num(f.cpu_s * 1000.0 / static_cast<double>(s.requests_sent)) : std::string("0"))
    << "\n";
  j << "}\n";
  return j.str();
}

SeriesWriter::~SeriesWriter() {
  if (file_ != nullptr) std::fclose(file_);
}

core::Status SeriesWriter::Open(const std::string& path) {
  file_ = std::fopen(path.c_str(), "w");
  if (file_ == nullptr) return core::Status::IoError("open " + path + ": " + std::strerror(errno));
  std::fprintf(file_, "t_s,connected,requests_per_s,replies_per_s,response_mean_ms,response_p50_ms,"
                      "response_p99_ms,join_failures,reconnects\n");
  return core::Status::OK();
}

void SeriesWriter::Append(const SecondSample& s) {
  if (file_ == nullptr) return;
  std::fprintf(file_, "%.3f,%d,%llu,%llu,%.3f,%.3f,%.3f,%llu,%llu\n", s.t_s, s.connected,
               static_cast<unsigned long long>(s.requests), static_cast<unsigned long long>(s.replies), s.mean_ms,
               s.p50_ms, s.p99_ms, static_cast<unsigned long long>(s.join_failures),
               static_cast<unsigned long long>(s.reconnects));
  std::fflush(file_);
}

std::string ConsoleLine(const SecondSample& s, int bots) {
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "[%6.1fs] connected %d/%d  req/s %llu  rep/s %llu  response p50 %.2f ms  p99 %.2f ms  "
                "join failures %llu  reconnects %llu",
                s.t_s, s.connected, bots, static_cast<unsigned long long>(s.requests),
                static_cast<unsigned long long>(s.replies), s.p50_ms, s.p99_ms,
                static_cast<unsigned long long>(s.join_failures), static_cast<unsigned long long>(s.reconnects));
  return buf;
}

}  // namespace bots
