// Prometheus metrics: publication, text rendering, and the /metrics HTTP endpoint.
#include "server/sv/metrics.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string_view>
#include <thread>
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
// as it dripped (36 s in a black-box audit, 2026-11-30; for good if it never stops). Its
// ThreadPool also queued every accepted connection without a bound, each holding a descriptor
// until the worker took it up: 252 connections that sent nothing took every descriptor of a
// server limited to 256, and its next checkpoint failed to open its file, a durability failure
// that stopped the server (2026-11-30).
//
// The library exposes no accepted socket (set_socket_options sees the listening one only), but
// Server::process_and_close_socket is virtual and Server::process_request protected. So the
// listen thread only admits a connection (process_and_close_socket: at most
// kMetricsMaxConnections held, the rest answered 503 at once), and one reader thread
// (ServeConnections) polls every admitted connection together, reading each request's head as it
// comes. Only a complete head is handed to the library, through a BoundedStream that delivers the
// head and ends its waits at the connection's deadline. A client that sends nothing or drips its
// head holds one of the places until its deadline, never the reader, so a scrape is served at
// once beside them. Abort() shuts the socket being served so that a write in progress returns.
class MetricsHttp final : public httplib::Server {
 public:
  MetricsHttp();
  ~MetricsHttp() override;
  // Why the wake-up eventfd could not be created (an errno value), or 0. Do not listen if not 0.
  int wake_error() const { return wake_error_; }

  // The reader thread's loop; returns once Abort() or StopServing() was called, closing every
  // connection it still holds.
  void ServeConnections() EXCLUDES(mu_);
  // Ends ServeConnections (the listen loop has ended: no more connections come). Any thread.
  void StopServing() EXCLUDES(mu_);
  // Ends the exchange being served now (its socket is shut) and every later one (closed unread).
  // Any thread; then stop() ends the listen loop.
  void Abort() EXCLUDES(mu_);

 private:
  using Clock = std::chrono::steady_clock;
  // A connection the reader holds: its request head so far.
  struct Connection {
    int fd = -1;
    Clock::time_point accepted;
    std::string head;
  };

  // The library's call for each accepted connection, on the listen thread: hands it to the
  // reader, or refuses it (503, closed) when kMetricsMaxConnections are held. Never waits for
  // the client.
  bool process_and_close_socket(socket_t sock) override EXCLUDES(mu_);
  void Refuse(int sock);
  // Reads what `c` sent (without waiting); true once the connection is done with (served,
  // refused or gone) and closed.
  bool ReadHead(Connection* c) EXCLUDES(mu_);
  // Serves a complete request head and closes the connection.
  void Serve(Connection* c) EXCLUDES(mu_);
  void Close(int fd) EXCLUDES(mu_);
  void Wake();

  const int wake_fd_;  // an eventfd: a connection admitted, or the end
  const int wake_error_;
  core::Mutex mu_;
  bool aborted_ GUARDED_BY(mu_) = false;
  bool stopping_ GUARDED_BY(mu_) = false;
  std::vector<Connection> admitted_ GUARDED_BY(mu_);  // not yet taken by the reader
  int held_ GUARDED_BY(mu_) = 0;  // admitted and not yet closed
  // The socket being served, shut by Abort(); -1 when none. It is cleared before the socket is
  // closed, so Abort() never shuts a descriptor number reused for something else.
  int serving_fd_ GUARDED_BY(mu_) = -1;
  uint64_t refused_ = 0;  // the listen thread's
};

namespace {

// The library's task queue, which it creates when it starts listening and shuts down when it
// stops: runs each accepted connection's task (MetricsHttp::process_and_close_socket, which only
// admits it) on the listen thread, and owns the reader thread.
class ConnectionReader final : public httplib::TaskQueue {
 public:
  explicit ConnectionReader(MetricsHttp* http) : http_(http) {
    reader_ = std::thread([http] {
      core::NameThisThread("as-metrics-r");
      http->ServeConnections();
    });
  }
  void enqueue(std::function<void()> fn) override { fn(); }
  void shutdown() override {
    http_->StopServing();
    reader_.join();
  }

 private:
  MetricsHttp* const http_;
  std::thread reader_;
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
  out.reserve(v.size());
  size_t run = 0;  // copied in runs between the bytes escaped (see core::ValidUtf8)
  for (size_t i = 0; i < v.size();) {
    if (i + 8 <= v.size()) {  // eight bytes at a time while none of them is escaped
      const uint64_t w = core::Word8At(v.data() + i);
      if (!core::WordHasByte(w, '\\') && !core::WordHasByte(w, '"') &&
          !core::WordHasByte(w, '\n')) {
        i += 8;
        continue;
      }
    }
    const char c = v[i++];
    if (c != '\\' && c != '"' && c != '\n') continue;
    out.append(v, run, i - 1 - run);
    out += '\\';
    out += c == '\n' ? 'n' : c;
    run = i;
  }
  out.append(v, run);
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

}  // namespace

MetricsHttp::MetricsHttp()
    : wake_fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)), wake_error_(wake_fd_ < 0 ? errno : 0) {}

MetricsHttp::~MetricsHttp() {
  if (wake_fd_ >= 0) ::close(wake_fd_);
}

void MetricsHttp::Wake() {
  const uint64_t one = 1;
  (void)::write(wake_fd_, &one, sizeof one);
}

void MetricsHttp::Abort() {
  {
    core::MutexLock lock(&mu_);
    aborted_ = true;
    if (serving_fd_ >= 0) ::shutdown(serving_fd_, SHUT_RDWR);
  }
  Wake();
}

void MetricsHttp::StopServing() {
  {
    core::MutexLock lock(&mu_);
    stopping_ = true;
  }
  Wake();
}

void MetricsHttp::Refuse(int sock) {
  // The listen thread must not wait for this client: one attempt to send, whatever fits.
  static constexpr char kBusy[] =
      "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n"
      "Retry-After: 1\r\n\r\n";
  (void)::send(sock, kBusy, sizeof kBusy - 1, MSG_DONTWAIT | MSG_NOSIGNAL);
  ++refused_;
  if (refused_ == 1 || refused_ % 1000 == 0) {
    spdlog::warn("metrics: {} connection(s) refused with 503 so far: {} were already held",
                 refused_, kMetricsMaxConnections);
  }
}

bool MetricsHttp::process_and_close_socket(socket_t sock) {
  bool admit = false, refuse = false;
  {
    core::MutexLock lock(&mu_);
    if (!aborted_ && !stopping_) {
      admit = held_ < kMetricsMaxConnections;
      refuse = !admit;
    }
    if (admit) {
      admitted_.push_back(Connection{sock, Clock::now(), {}});
      ++held_;
    }
  }
  if (admit) {
    Wake();
    return true;
  }
  if (refuse) Refuse(sock);
  ::shutdown(sock, SHUT_RDWR);
  ::close(sock);
  return false;
}

void MetricsHttp::Close(int fd) {
  ::shutdown(fd, SHUT_RDWR);
  ::close(fd);
  core::MutexLock lock(&mu_);
  --held_;
}

bool MetricsHttp::ReadHead(Connection* c) {
  char buf[4096];
  for (;;) {
    const ssize_t n = ::recv(c->fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return false;  // more to come
    if (n <= 0) {  // the client hung up, or the socket failed
      Close(c->fd);
      return true;
    }
    // Read up to the head's blank line. Bytes read past it go to the library with the head; the
    // rest of a body stays in the socket (a request that announces one is refused unread).
    const size_t searched = c->head.size() >= 3 ? c->head.size() - 3 : 0;
    c->head.append(buf, static_cast<size_t>(n));
    const size_t blank = c->head.find("\r\n\r\n", searched);
    const size_t head_bytes = blank == std::string::npos ? c->head.size() : blank + 4;
    if (blank != std::string::npos && head_bytes <= kMetricsMaxHeadBytes) {
      Serve(c);
      return true;
    }
    if (head_bytes > kMetricsMaxHeadBytes) {
      static constexpr char kTooLarge[] =
          "HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Length: 0\r\n"
          "Connection: close\r\n\r\n";
      (void)::send(c->fd, kTooLarge, sizeof kTooLarge - 1, MSG_DONTWAIT | MSG_NOSIGNAL);
      Close(c->fd);
      return true;
    }
  }
}

void MetricsHttp::Serve(Connection* c) {
  bool serve = false;
  {
    core::MutexLock lock(&mu_);
    serve = !aborted_;
    if (serve) serving_fd_ = c->fd;
  }
  if (serve) {
    BoundedStream stream(c->fd, c->accepted + std::chrono::milliseconds(kMetricsExchangeMs),
                         kMetricsStallMs, BoundedStream::kUnlimited, std::move(c->head));
    bool connection_closed = false;
    process_request(stream, /*close_connection=*/true, connection_closed, nullptr);
    core::MutexLock lock(&mu_);
    serving_fd_ = -1;
  }
  Close(c->fd);
}

// One request per connection: its first byte within kMetricsIdleMs of being accepted, its head
// complete and the reply written within kMetricsExchangeMs.
void MetricsHttp::ServeConnections() {
  std::vector<Connection> held;
  std::vector<pollfd> fds;
  auto deadline_of = [](const Connection& c) {
    return c.accepted +
           std::chrono::milliseconds(c.head.empty() ? kMetricsIdleMs : kMetricsExchangeMs);
  };
  // Keeps the connections for which `done` is false, in order.
  auto keep_if_not = [&held](auto done) {
    size_t kept = 0;
    for (size_t i = 0; i < held.size(); ++i) {
      if (done(i)) continue;
      if (kept != i) held[kept] = std::move(held[i]);
      ++kept;
    }
    held.resize(kept);
  };
  for (;;) {
    bool end = false;
    {
      core::MutexLock lock(&mu_);
      end = aborted_ || stopping_;
      for (Connection& c : admitted_) held.push_back(std::move(c));
      admitted_.clear();
    }
    if (end) break;
    // Wait for bytes on any held connection, a wake-up, or the earliest deadline.
    Clock::time_point next = Clock::time_point::max();
    for (const Connection& c : held) next = std::min(next, deadline_of(c));
    fds.assign(1, pollfd{wake_fd_, POLLIN, 0});
    for (const Connection& c : held) fds.push_back(pollfd{c.fd, POLLIN, 0});
    const int wait_ms =
        held.empty() ? -1
                     : static_cast<int>(std::clamp<int64_t>(
                           std::chrono::ceil<std::chrono::milliseconds>(next - Clock::now())
                               .count(),
                           0, kMetricsExchangeMs));
    if (::poll(fds.data(), fds.size(), wait_ms) < 0) {
      if (errno != EINTR) {  // ENOMEM: try again shortly, the connections keep their deadlines
        spdlog::error("metrics: poll failed: {}", std::strerror(errno));
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
      continue;
    }
    if (fds[0].revents != 0) {
      uint64_t count = 0;
      (void)::read(wake_fd_, &count, sizeof count);
    }
    keep_if_not([&](size_t i) { return fds[i + 1].revents != 0 && ReadHead(&held[i]); });
    // Drop the connections past their deadline. Each gets one more read first: bytes that came
    // while this thread served another connection were sent in time, only not yet read.
    const Clock::time_point now = Clock::now();
    keep_if_not([&](size_t i) {
      Connection& c = held[i];
      if (deadline_of(c) > now) return false;
      if (ReadHead(&c)) return true;  // served, refused or gone
      if (deadline_of(c) > now) return false;  // its first bytes came: it has until the exchange's
      Close(c.fd);
      return true;
    });
  }
  for (const Connection& c : held) Close(c.fd);
  core::MutexLock lock(&mu_);
  for (const Connection& c : admitted_) {
    ::close(c.fd);
    --held_;
  }
  admitted_.clear();
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
  if (m->http_->wake_error() != 0) {
    return core::Status::IoError(std::string("metrics: cannot create its eventfd: ") +
                                 std::strerror(m->http_->wake_error()));
  }
  // One thread serves the connections: a scrape is cheap, and the frame threads keep the cores.
  // (Four library workers were tried: TSan reported two of them racing inside Debian's
  // libcpp-httplib 0.11, which is built without TSan, so the report can be neither trusted nor
  // dismissed; see docs/stats.md.) With the library's 5 s keep-alive a second scraper's idle
  // connection (an HA pair of Prometheus servers), or any client that connected and sent
  // nothing, held every scrape back by up to 5 s. So MetricsHttp answers one request per
  // connection (Connection: close; a scraper comes every few seconds and gains nothing from
  // keeping it), reads request heads for all its connections at once and bounds each connection
  // (kMetricsIdleMs, kMetricsStallMs, kMetricsExchangeMs). The library's keep-alive and read
  // timeouts are unused by MetricsHttp's connections.
  m->http_->new_task_queue = [http = m->http_.get()] { return new ConnectionReader(http); };
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
  // The library listens with a backlog of 5 (CPPHTTPLIB_LISTEN_BACKLOG, compiled in): a burst of
  // more connections than that waited for the kernel to resend its SYN-ACK, 1 s and more, before
  // the listen thread even saw them. Listening again on the same socket sets a larger backlog;
  // the socket is the one the library's socket-options hook saw last (it stops at the first
  // address it binds).
  int listen_fd = -1;
  m->http_->set_socket_options([&listen_fd](socket_t sock) {
    httplib::default_socket_options(sock);
    listen_fd = sock;
  });
  const int bound = port == 0 ? m->http_->bind_to_any_port(bind_address)
                              : (m->http_->bind_to_port(bind_address, port) ? port : -1);
  if (bound <= 0) {
    return core::Status::IoError("metrics: cannot listen on " + bind_address + ":" +
                                 std::to_string(port));
  }
  m->http_->set_socket_options(httplib::default_socket_options);  // drop the hook's reference
  if (::listen(listen_fd, kMetricsListenBacklog) != 0) {
    spdlog::warn("metrics: could not raise the listen backlog to {}: {}", kMetricsListenBacklog,
                 std::strerror(errno));
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
