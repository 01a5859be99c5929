// Prometheus metrics: publication, text rendering, and the /metrics HTTP endpoint.
#include "server/sv/metrics.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <deque>
#include <functional>
#include <string_view>
#include <vector>

#include <httplib.h>
#include <spdlog/spdlog.h>

#include "server/core/thread_name.h"
#include "server/core/utf8.h"
#include "server/sv/bounded_stream.h"

namespace sv {

// httplib 0.11 bounds each read of a request (set_read_timeout), never a whole request, and its
// Server::stop() closes only the listening socket: the worker then finishes the connection it
// serves. A client dripping a byte a second held the one worker, and Stop()'s join, for as long
// as it dripped (36 s in a black-box audit, 2026-11-30; for good if it never stops). The library exposes no accepted
// socket (set_socket_options sees the listening one only), but Server::process_and_close_socket
// is virtual and Server::process_request protected: MetricsHttp serves each connection itself,
// through a Stream whose waits end at the connection's deadline, and Abort() shuts the sockets
// being served so that a wait in progress returns at once.
class MetricsHttp final : public httplib::Server {
 public:
  // Ends the exchanges being served now (their sockets are shut) and every later one (closed
  // unread). Any thread; then stop() ends the listen loop.
  void Abort() EXCLUDES(mu_);

  // Runs `task` (the library's call of process_and_close_socket for a connection just accepted)
  // so that the connection is refused: answered 503 without waiting for the client, and closed.
  // ConnectionQueue's, on the listen thread, when its queue is full.
  void RunRefusing(const std::function<void()>& task);

 private:
  bool process_and_close_socket(socket_t sock) override EXCLUDES(mu_);
  void Refuse(int sock);

  core::Mutex mu_;
  bool aborted_ GUARDED_BY(mu_) = false;
  // Sockets being served (one per worker: one today), shut by Abort(). A socket leaves the set
  // before it is closed, so Abort() never shuts a descriptor number reused for something else.
  std::vector<int> serving_fds_ GUARDED_BY(mu_);
  uint64_t refused_ = 0;  // the listen thread's
};

namespace {

// httplib's ThreadPool queues every accepted connection without a bound, each holding a file
// descriptor until the worker takes it up, and the worker gives an idle connection
// kMetricsIdleMs. 252 connections that sent nothing so took every descriptor a 256-descriptor
// server had, and its next checkpoint failed to open its file: a durability failure, the server
// stopped (measured 2026-11-30). This queue keeps at most kMetricsMaxQueued connections waiting
// for its one worker and refuses the rest at once (MetricsHttp::RunRefusing), so the endpoint
// holds at most kMetricsMaxQueued + 2 descriptors whatever its clients do. Like the library's
// pool, shutdown() runs what is queued (after Abort(): closes it unread) and joins the worker.
class ConnectionQueue final : public httplib::TaskQueue {
 public:
  explicit ConnectionQueue(MetricsHttp* http) : http_(http) {
    worker_ = std::thread([this] {
      core::NameThisThread("as-metrics-w");
      WorkerMain();
    });
  }
  void enqueue(std::function<void()> fn) override EXCLUDES(mu_) {
    {
      core::MutexLock lock(&mu_);
      if (queued_.size() < static_cast<size_t>(kMetricsMaxQueued)) {
        queued_.push_back(std::move(fn));
        cv_.Signal();
        return;
      }
    }
    http_->RunRefusing(fn);
  }
  void shutdown() override EXCLUDES(mu_) {
    {
      core::MutexLock lock(&mu_);
      shutdown_ = true;
    }
    cv_.SignalAll();
    worker_.join();
  }

 private:
  void WorkerMain() EXCLUDES(mu_) {
    for (;;) {
      std::function<void()> fn;
      {
        core::MutexLock lock(&mu_);
        while (queued_.empty() && !shutdown_) cv_.Wait(&mu_);
        if (queued_.empty()) return;  // shut down, and nothing left to close
        fn = std::move(queued_.front());
        queued_.pop_front();
      }
      fn();
    }
  }

  MetricsHttp* const http_;
  core::Mutex mu_;
  core::CondVar cv_;  // signalled when a connection is queued and at shutdown
  std::deque<std::function<void()>> queued_ GUARDED_BY(mu_);
  bool shutdown_ GUARDED_BY(mu_) = false;
  std::thread worker_;
};

}  // namespace

namespace {

// Frame-time histogram edges, seconds: around the 33 ms tick of the default 30 Hz.
constexpr double kFrameBucketsS[] = {0.0005, 0.001, 0.002, 0.005, 0.01, 0.02,
                                     0.033,  0.05,  0.1,   0.25,  0.5,  1.0};

// Appends one metric family: HELP and TYPE once, then its samples.
class Writer {
 public:
  void Family(std::string_view name, std::string_view type, std::string_view help) {
    out_ += "# HELP aftershock_";
    out_ += name;
    out_ += ' ';
    out_ += help;
    out_ += "\n# TYPE aftershock_";
    out_ += name;
    out_ += ' ';
    out_ += type;
    out_ += '\n';
  }
  // A sample: `name{labels} value`; labels is "" or `key="value",...` (already escaped).
  void Sample(std::string_view name, std::string_view labels, double value) {
    out_ += "aftershock_";
    out_ += name;
    if (!labels.empty()) {
      out_ += '{';
      out_ += labels;
      out_ += '}';
    }
    out_ += ' ';
    out_ += Number(value);
    out_ += '\n';
  }
  void One(std::string_view name, std::string_view type, std::string_view help, double value) {
    Family(name, type, help);
    Sample(name, "", value);
  }
  std::string Take() { return std::move(out_); }

 private:
  static std::string Number(double v) {
    if (std::isnan(v)) return "NaN";
    if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
    char buf[40];
    // Integers print exactly (counters up to 2^53); other values with 9 significant digits.
    if (v == std::floor(v) && std::fabs(v) < 9.007199254740992e15) {
      std::snprintf(buf, sizeof buf, "%.0f", v);
    } else {
      std::snprintf(buf, sizeof buf, "%.9g", v);
    }
    return buf;
  }

  std::string out_;
};

// A label value in exposition syntax: UTF-8 (core::ValidUtf8: Prometheus rejects the whole scrape
// otherwise), backslash, double quote and newline escaped.
std::string LabelValue(std::string_view raw) {
  const std::string v = core::ValidUtf8(raw);
  std::string out;
  for (char c : v) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

std::string ThreadLabel(size_t t) { return "thread=\"" + std::to_string(t) + "\""; }

double Seconds(uint64_t ns) { return static_cast<double>(ns) / 1e9; }

void RenderFrameLoop(const MetricsSnapshot& s, Writer* w) {
  const StatsReport& r = s.report;
  w->Family("phase_seconds_total", "counter",
            "Wall time each frame thread spent in each phase (docs/stats.md, breakdown_pct).");
  for (size_t t = 0; t < r.thread_ns.size(); ++t) {
    for (int p = 0; p < kPhaseCount; ++p) {
      w->Sample("phase_seconds_total", ThreadLabel(t) + ",phase=\"" + kPhaseNames[p] + "\"",
                Seconds(r.thread_ns[t][p]));
    }
  }
  w->One("frames_total", "counter", "Frames completed.", static_cast<double>(r.frames));
  w->One("world_ticks_total", "counter", "Frames in which the game's world phase ran.",
         static_cast<double>(r.world_ticks));
  struct PerThread {
    const char* name;
    const char* help;
    const std::vector<uint64_t>& values;
  };
  const PerThread per_thread[] = {
      {"thread_frames_total", "Frames each frame thread took part in.", r.thread_frames},
      {"requests_total", "Command packets accepted, by frame thread.", r.thread_requests},
      {"commands_total", "User commands executed, by frame thread.", r.thread_commands},
      {"replies_total", "Snapshots sent, by frame thread.", r.thread_replies},
  };
  for (const PerThread& f : per_thread) {
    w->Family(f.name, "counter", f.help);
    for (size_t t = 0; t < f.values.size(); ++t) {
      w->Sample(f.name, ThreadLabel(t), static_cast<double>(f.values[t]));
    }
  }
  w->Family("frame_duration_seconds", "histogram",
            "Busy time of a frame: world phase start to the last reply sent (2% bucket precision).");
  for (double edge : kFrameBucketsS) {
    char le[32];
    std::snprintf(le, sizeof le, "le=\"%g\"", edge);
    w->Sample("frame_duration_seconds_bucket", le,
              static_cast<double>(s.frame_hist.CountAtMost(edge * 1e6)));
  }
  w->Sample("frame_duration_seconds_bucket", "le=\"+Inf\"", static_cast<double>(s.frame_hist.count()));
  w->Sample("frame_duration_seconds_sum", "", s.frame_hist.sum_us() / 1e6);
  w->Sample("frame_duration_seconds_count", "", static_cast<double>(s.frame_hist.count()));
}

void RenderPlayersAndInput(const MetricsSnapshot& s, Writer* w) {
  const StatsReport& r = s.report;
  w->One("players", "gauge", "Players online now.", static_cast<double>(r.players));
  w->One("players_online_max", "gauge", "The most players online at once since start.",
         static_cast<double>(r.max_players_online));
  w->One("max_players", "gauge", "The player limit (--max-players).", r.info.max_players);
  w->One("joins_total", "counter", "Joins accepted.", static_cast<double>(r.joins));
  w->One("join_refusals_total", "counter", "JoinRefuse replies sent.",
         static_cast<double>(r.join_refusals));
  w->One("leaves_total", "counter", "Players that left.", static_cast<double>(r.leaves));
  w->One("player_records", "gauge", "Offline players' records in the record store.",
         static_cast<double>(r.records.offline));
  w->One("player_record_capacity", "gauge", "The record store's size (--max-records).",
         static_cast<double>(r.records.capacity));
  w->One("player_record_evictions_total", "counter",
         "Offline records evicted (least recently seen first) since the world was created.",
         static_cast<double>(r.records.evicted));
  w->One("new_identity_refusals_total", "counter",
         "Joins of new names refused by the per-address new-identity rate limit.",
         static_cast<double>(r.records.new_identity_refusals));
  w->One("invalid_packets_total", "counter",
         "Packets from connected clients dropped as invalid.", static_cast<double>(r.invalid_packets));
  w->One("chat_dropped_total", "counter", "Chat lines dropped from players silenced for flooding.",
         static_cast<double>(r.chat_dropped));
  w->One("kicks_total", "counter", "Clients dropped for bad input.", static_cast<double>(r.kicked));
  w->Family("junk_dropped_total", "counter",
            "Datagrams the junk filter dropped before ENet parsed them, by reason.");
  const JunkReport& j = r.junk;
  const std::pair<const char*, uint64_t> junk[] = {
      {"short", j.short_datagrams},
      {"oversize", j.oversize},
      {"unreadable", j.unreadable},
      {"bad_header", j.bad_header},
      {"bad_connect", j.bad_connect},
      {"unknown_peer", j.unknown_peer},
      {"connectionless_bad", j.connectionless_bad},
      {"connectionless_limited", j.connectionless_limited},
      {"connect_capped", j.connect_capped}};
  for (const auto& [reason, n] : junk) {
    w->Sample("junk_dropped_total", std::string("reason=\"") + reason + "\"", static_cast<double>(n));
  }
}

void RenderLocking(const MetricsSnapshot& s, Writer* w) {
  const StatsReport& r = s.report;
  w->One("leaf_lock_acquisitions_total", "counter", "Areanode leaf lock acquisitions.",
         static_cast<double>(r.leaf_acquisitions));
  w->One("leaf_relocks_total", "counter",
         "Leaf acquisitions of a leaf already acquired earlier in the same frame.",
         static_cast<double>(s.leaf_relocks));
  w->One("lock_retries_total", "counter",
         "Times a command's region grew after locking: released and relocked.",
         static_cast<double>(r.lock_retries));
  w->One("shared_leaf_frames_total", "counter",
         "Frames in which two or more threads locked leaves.",
         static_cast<double>(s.shared_leaf_frames));
  w->One("shared_leaves_ratio", "gauge",
         "Mean over those frames of the share of leaves locked by two or more threads.",
         r.shared_leaves_pct / 100.0);
}

void RenderDurability(const MetricsSnapshot& s, Writer* w) {
  const DurabilityReport& d = s.report.durability;
  w->One("durability_enabled", "gauge", "1 with a data directory (recovery on), else 0.",
         d.enabled ? 1 : 0);
  if (!d.enabled) return;
  const recovery::CheckpointStats& c = d.stats.checkpoint;
  w->One("checkpoints_total", "counter", "Checkpoints committed.", static_cast<double>(c.checkpoints));
  w->One("checkpoint_bytes_total", "counter", "Bytes written to the backup files.",
         static_cast<double>(c.bytes_written));
  w->One("checkpoint_pause_seconds_total", "counter",
         "Synchronous pause of the frame at checkpoint tick boundaries.", c.pause_total_ms / 1000.0);
  w->One("checkpoint_pause_max_seconds", "gauge", "Longest tick-boundary pause since start.",
         c.pause_max_ms / 1000.0);
  w->One("checkpoint_duration_seconds_total", "counter",
         "Checkpoint start (tick boundary) to commit, summed.", c.checkpoint_total_ms / 1000.0);
  const recovery::LogWriter::Stats& l = d.stats.log;
  w->One("log_records_total", "counter", "Tick records appended to the command log.",
         static_cast<double>(l.records));
  w->One("log_bytes_total", "counter", "Bytes written to the command log.", static_cast<double>(l.bytes));
  w->One("log_syncs_total", "counter", "fdatasync calls on log segments.", static_cast<double>(l.syncs));
  w->One("log_sync_seconds_total", "counter", "Time spent in fdatasync calls on log segments.",
         static_cast<double>(l.sync_ns) / 1e9);
  w->One("log_durable_wait_seconds_total", "counter",
         "Time frames waited for their log record to be on disk before replying (sync mode).",
         d.stats.wait_durable_ms_total / 1000.0);
  w->One("log_append_seconds_total", "counter", "Time spent encoding and queueing log records.",
         d.stats.log_append_ms_total / 1000.0);
  w->One("log_durable_tick", "gauge", "The newest log tick known to be on disk.",
         static_cast<double>(d.stats.durable_tick));
  const durability::WorldRecoveryReport& rec = d.recovery;
  w->One("recovery_found_state", "gauge", "1 if start-up recovery found saved state.",
         rec.found_state ? 1 : 0);
  w->One("recovery_seconds", "gauge", "Start-up recovery, the whole of it.", rec.total_ms / 1000.0);
  w->One("recovery_restore_seconds", "gauge", "Start-up recovery: reading the backup.",
         rec.restore_ms / 1000.0);
  w->One("recovery_replay_seconds", "gauge", "Start-up recovery: replaying the log.",
         rec.replay_ms / 1000.0);
  w->One("recovery_ticks_replayed", "gauge", "Log ticks replayed at start-up.",
         static_cast<double>(rec.ticks_replayed));
  w->One("recovery_checkpoint_tick", "gauge", "Log tick of the backup loaded (0: none).",
         static_cast<double>(rec.checkpoint_tick));
  w->One("recovery_recovered_tick", "gauge", "Log tick the world was recovered to.",
         static_cast<double>(rec.recovered_tick));
  w->One("recovery_replay_check_differs", "gauge",
         "1 if the start-up replay check failed: the log did not replay the older backup to the "
         "recovered one, so this binary does not reproduce the recorded game.",
         rec.replay_check.outcome == durability::ReplayCheck::Outcome::kDiffers ? 1 : 0);
}

using Clock = std::chrono::steady_clock;

}  // namespace

void MetricsHttp::Abort() {
  core::MutexLock lock(&mu_);
  aborted_ = true;
  for (int fd : serving_fds_) ::shutdown(fd, SHUT_RDWR);
}

namespace {
// Set while MetricsHttp::RunRefusing runs a connection's task on the listen thread.
thread_local bool t_refusing = false;
}  // namespace

void MetricsHttp::RunRefusing(const std::function<void()>& task) {
  t_refusing = true;
  task();
  t_refusing = false;
}

void MetricsHttp::Refuse(int sock) {
  // The listen thread must not wait for this client: one attempt to send, whatever fits.
  static constexpr char kBusy[] =
      "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n"
      "Retry-After: 1\r\n\r\n";
  (void)::send(sock, kBusy, sizeof kBusy - 1, MSG_DONTWAIT | MSG_NOSIGNAL);
  ++refused_;
  if (refused_ == 1 || refused_ % 1000 == 0) {
    spdlog::warn("metrics: {} connection(s) refused with 503 so far: {} were already waiting",
                 refused_, kMetricsMaxQueued);
  }
}

// Replaces the library's keep-alive loop: one request per connection, its first byte within
// kMetricsIdleMs, all of it (request read, reply written) within kMetricsExchangeMs.
bool MetricsHttp::process_and_close_socket(socket_t sock) {
  if (t_refusing) {
    Refuse(sock);
    ::shutdown(sock, SHUT_RDWR);
    ::close(sock);
    return false;
  }
  bool serve = false;
  {
    core::MutexLock lock(&mu_);
    serve = !aborted_;
    if (serve) serving_fds_.push_back(sock);
  }
  bool ok = false;
  if (serve) {
    BoundedStream stream(sock, Clock::now() + std::chrono::milliseconds(kMetricsExchangeMs),
                         kMetricsStallMs);
    if (stream.Wait(POLLIN, kMetricsIdleMs)) {
      bool connection_closed = false;
      ok = process_request(stream, /*close_connection=*/true, connection_closed, nullptr);
    }
    core::MutexLock lock(&mu_);
    std::erase(serving_fds_, sock);
  }
  ::shutdown(sock, SHUT_RDWR);
  ::close(sock);
  return ok;
}

bool MetricsBoard::TryPublish(std::shared_ptr<const MetricsSnapshot> snapshot) {
  if (!mu_.TryLock()) return false;
  latest_.swap(snapshot);
  mu_.Unlock();
  return true;  // the old snapshot (now in `snapshot`) is freed here, outside the lock
}

std::shared_ptr<const MetricsSnapshot> MetricsBoard::Latest() const {
  core::MutexLock lock(&mu_);
  return latest_;
}

std::string RenderPrometheus(const MetricsSnapshot& s) {
  Writer w;
  const ReportInfo& info = s.report.info;
  w.Family("server_info", "gauge", "Constant 1, labelled with the server's configuration.");
  w.Sample("server_info",
           "map=\"" + LabelValue(info.map) + "\",locking=\"" + LabelValue(info.locking) +
               "\",frame_mode=\"" + LabelValue(info.frame_mode) + "\",threads=\"" +
               std::to_string(info.threads) + "\",protocol=\"" +
               std::to_string(s.protocol_version) + "\"",
           1);
  w.One("uptime_seconds", "gauge", "Seconds since the frame threads started.", info.uptime_s);
  RenderFrameLoop(s, &w);
  RenderPlayersAndInput(s, &w);
  RenderLocking(s, &w);
  RenderDurability(s, &w);
  return w.Take();
}

core::Status MetricsServer::Start(const std::string& bind_address, uint16_t port,
                                  const MetricsBoard* board, std::unique_ptr<MetricsServer>* out) {
  std::unique_ptr<MetricsServer> m(new MetricsServer());
  m->http_ = std::make_unique<MetricsHttp>();
  // One worker: a scrape is cheap, and the frame threads keep the cores. (Four were tried: TSan
  // reported two workers racing inside Debian's libcpp-httplib 0.11, which is built without TSan,
  // so the report can be neither trusted nor dismissed; see docs/stats.md.) A worker serves one
  // connection at a time, and with the library's 5 s keep-alive a second scraper's idle
  // connection (an HA pair of Prometheus servers), or any client that connected and sent
  // nothing, held every scrape back by up to 5 s. So MetricsHttp answers one request per
  // connection (Connection: close; a scraper comes every few seconds and gains nothing from
  // keeping it) and bounds each connection (kMetricsIdleMs, kMetricsStallMs, kMetricsExchangeMs),
  // so that a client that drips its request holds the worker 5 s at most, not for as long as it
  // drips. The library's keep-alive and read timeouts are unused by MetricsHttp's connections.
  m->http_->new_task_queue = [http = m->http_.get()] { return new ConnectionQueue(http); };
  // A scrape is a GET without a body, yet the library buffered any body it was sent: a POST of
  // 6 GiB grew the process to 3.5 GB. set_payload_max_length alone is not enough in 0.11: it
  // answers 413 to a Content-Length over the limit only after reading and discarding the whole
  // body, and does not apply to a chunked body at all. So any request that carries a body is
  // answered 413 before a byte of the body is read (the pre-routing handler runs once the
  // headers are in), and the limit stays as a second guard.
  m->http_->set_payload_max_length(0);
  m->http_->set_pre_routing_handler([](const httplib::Request& req, httplib::Response& res) {
    const bool has_body =
        req.has_header("Transfer-Encoding") ||
        (req.has_header("Content-Length") && req.get_header_value("Content-Length") != "0");
    if (!has_body) return httplib::Server::HandlerResponse::Unhandled;
    res.status = 413;
    res.set_content("a scrape is a GET without a body\n", "text/plain");
    return httplib::Server::HandlerResponse::Handled;
  });
  m->http_->Get("/metrics", [board](const httplib::Request&, httplib::Response& res) {
    const std::shared_ptr<const MetricsSnapshot> snapshot = board->Latest();
    if (snapshot == nullptr) {
      res.status = 503;
      res.set_content("no metrics published yet\n", "text/plain");
      return;
    }
    res.set_content(RenderPrometheus(*snapshot), "text/plain; version=0.0.4; charset=utf-8");
  });
  const int bound = port == 0 ? m->http_->bind_to_any_port(bind_address)
                              : (m->http_->bind_to_port(bind_address, port) ? port : -1);
  if (bound <= 0) {
    return core::Status::IoError("metrics: cannot listen on " + bind_address + ":" +
                                 std::to_string(port));
  }
  m->port_ = static_cast<uint16_t>(bound);
  MetricsHttp* http = m->http_.get();
  m->thread_ = std::thread([http] {
    core::NameThisThread("as-metrics");
    http->listen_after_bind();
  });
  // Stop() before the listen loop runs would not stop it: wait until it does.
  while (!http->is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  *out = std::move(m);
  return core::Status::OK();
}

MetricsServer::~MetricsServer() { Stop(); }

void MetricsServer::Stop() {
  if (http_ != nullptr) {
    http_->Abort();  // the connection being served ends now; the worker takes up no other
    http_->stop();   // the listening socket: the listen loop ends and joins the worker
  }
  if (thread_.joinable()) thread_.join();
}

}  // namespace sv
