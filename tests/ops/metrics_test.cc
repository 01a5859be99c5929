// The Prometheus endpoint (label tsan): the text format's shape, and an in-process server (with
// a data directory, sync durability) whose frame master publishes metrics while an HTTP client
// scrapes /metrics as fast as it can and clients play. A data race between publication and
// scraping fails the TSan run; the scrapes must see the counters the play and the log produced.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

#include <httplib.h>
#include <spdlog/spdlog.h>

#include "server/core/steady_clock.h"
#include "server/sv/metrics.h"
#include "server/sv/server.h"
#include "tests/server/play_harness.h"
#include "tests/support/poll.h"
#include "tests/support/scratch_dir.h"

using testing_util::PollUntil;
using testing_util::ReturnsWithin;

namespace {

// Checks the exposition format (names, TYPE before samples, numbers) and returns each sample
// line's value by its full name with labels.
std::map<std::string, double> ParseExposition(const std::string& text) {
  static const std::regex kSample(R"(^(aftershock_[a-z_]+)(\{[^}]*\})? (\S+)$)");
  static const std::regex kType(R"(^# TYPE (aftershock_[a-z_]+) (counter|gauge|histogram)$)");
  std::map<std::string, double> values;
  std::set<std::string> typed;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (line.starts_with("# HELP ")) continue;
    if (std::regex_match(line, m, kType)) {
      CHECK(typed.insert(m[1]).second);  // one TYPE per family
      continue;
    }
    INFO(line);
    REQUIRE(std::regex_match(line, m, kSample));
    std::string family = m[1];
    for (const char* suffix : {"_bucket", "_sum", "_count"}) {
      if (!typed.count(family) && family.ends_with(suffix)) family.resize(family.size() - std::strlen(suffix));
    }
    CHECK(typed.count(family) == 1);  // TYPE came first
    if (std::string(m[1]).ends_with("_total")) CHECK(std::stod(m[3]) >= 0);
    values[std::string(m[1]) + std::string(m[2])] = std::stod(m[3]);
  }
  return values;
}

// The sum of the values of every sample line starting with `prefix` (any thread: no Catch calls).
double SumOf(const std::string& text, const std::string& prefix) {
  double sum = 0;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with(prefix)) sum += std::stod(line.substr(line.rfind(' ') + 1));
  }
  return sum;
}

}  // namespace

TEST_CASE("the rendering is valid exposition text with counters, gauges and a histogram") {
  sv::MetricsSnapshot s;
  s.report.info.map = "maps/a \"quoted\" map.map";
  s.report.info.threads = 2;
  s.report.thread_ns = {{}, {}};
  s.report.thread_ns[1][0] = 1'500'000'000;
  s.report.thread_requests = {3, 4};
  s.report.thread_commands = {3, 4};
  s.report.thread_replies = {3, 4};
  s.report.thread_frames = {10, 10};
  s.report.frames = 10;
  for (double us : {400.0, 900.0, 30000.0, 2'000'000.0}) s.frame_hist.Add(us);
  const std::string text = sv::RenderPrometheus(s);
  const auto v = ParseExposition(text);
  CHECK(v.at("aftershock_phase_seconds_total{thread=\"1\",phase=\"world\"}") == 1.5);
  CHECK(v.at("aftershock_requests_total{thread=\"1\"}") == 4);
  CHECK(v.at("aftershock_frame_duration_seconds_bucket{le=\"0.0005\"}") == 1);
  CHECK(v.at("aftershock_frame_duration_seconds_bucket{le=\"0.001\"}") == 2);
  CHECK(v.at("aftershock_frame_duration_seconds_bucket{le=\"0.033\"}") == 3);
  CHECK(v.at("aftershock_frame_duration_seconds_bucket{le=\"1\"}") == 3);
  CHECK(v.at("aftershock_frame_duration_seconds_bucket{le=\"+Inf\"}") == 4);
  CHECK(v.at("aftershock_frame_duration_seconds_count") == 4);
  CHECK(v.at("aftershock_frame_duration_seconds_sum") == Approx(2.0313));
  CHECK(v.at("aftershock_durability_enabled") == 0);
  CHECK(v.count("aftershock_log_sync_seconds_total") == 0);  // durability series only with it on
  CHECK(text.find("map=\"maps/a \\\"quoted\\\" map.map\"") != std::string::npos);

  // A byte that is not UTF-8 in the map's file name made Prometheus reject the whole scrape.
  s.report.info.map = "maps/caf\xff.map";
  CHECK(sv::RenderPrometheus(s).find("map=\"maps/caf\xEF\xBF\xBD.map\"") != std::string::npos);

  // Label values are escaped eight bytes at a time where nothing needs it: a backslash, quote,
  // newline or bad byte at every offset of a word, and across two words, is still escaped.
  for (size_t at = 0; at < 24; ++at) {
    const std::string before(at, 'a'), after(23 - at, 'z');
    for (const auto& [raw, escaped] : std::vector<std::pair<std::string, std::string>>{
             {"\\", "\\\\"}, {"\"", "\\\""}, {"\n", "\\n"}, {"\xff", "\xEF\xBF\xBD"}}) {
      s.report.info.map = before + raw + after;
      CHECK(sv::RenderPrometheus(s).find("map=\"" + before + escaped + after + "\"") !=
            std::string::npos);
    }
  }
  s.report.info.map = "maps/a \"quoted\" map.map";

  s.report.durability.enabled = true;
  s.report.durability.stats.log.syncs = 4;
  s.report.durability.stats.log.sync_ns = 2'500'000'000;
  const auto d = ParseExposition(sv::RenderPrometheus(s));
  CHECK(d.at("aftershock_durability_enabled") == 1);
  CHECK(d.at("aftershock_log_syncs_total") == 4);
  CHECK(d.at("aftershock_log_sync_seconds_total") == 2.5);
}

namespace {

// A TCP connection to 127.0.0.1:port, or -1. With rcvbuf > 0 its receive buffer is set to that
// many bytes first.
int ConnectTo(uint16_t port, int rcvbuf = 0) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (rcvbuf > 0) ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Sends `request` and reads the reply until the server closes the connection (30 s at most: a
// deadline for a broken server, not a timing assumption).
std::string Exchange(uint16_t port, const std::string& request) {
  const int fd = ConnectTo(port);
  if (fd < 0) return "";
  ::send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  timeval tv{30, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  std::string reply;
  char buf[4096];
  for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;) {
    reply.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return reply;
}

// The endpoint on a port the system picks, serving `snapshot` (an empty one by default).
struct Endpoint {
  explicit Endpoint(std::shared_ptr<const sv::MetricsSnapshot> snapshot =
                        std::make_shared<sv::MetricsSnapshot>()) {
    REQUIRE(board.TryPublish(std::move(snapshot)));
    REQUIRE(sv::MetricsServer::Start("127.0.0.1", 0, &board, &http).ok());
  }
  sv::MetricsBoard board;
  std::unique_ptr<sv::MetricsServer> http;  // destroyed before the board it reads
};

}  // namespace

// The library's 5 s keep-alive let a scraper that kept its connection (as Prometheus does) hold
// the one HTTP worker, and every other scrape waited. The server now answers one request per
// connection and says so, whatever the client asks for.
TEST_CASE("/metrics answers one request per connection, with Connection: close") {
  auto snapshot = std::make_shared<sv::MetricsSnapshot>();
  snapshot->report.info.map = "maps/dm_arena.map";
  Endpoint endpoint(snapshot);
  std::unique_ptr<sv::MetricsServer>& http = endpoint.http;
  // Exchange returns once the server closed the connection after its one reply.
  const std::string reply = Exchange(
      http->port(), "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n");
  CHECK(reply.rfind("HTTP/1.1 200", 0) == 0);
  CHECK(reply.find("Connection: close\r\n") != std::string::npos);
  CHECK(reply.find("aftershock_server_info{map=\"maps/dm_arena.map\"") != std::string::npos);
  httplib::Client c("127.0.0.1", http->port());  // and the next scrape is served
  const auto res = c.Get("/metrics");
  REQUIRE(res);
  CHECK(res->status == 200);
  http->Stop();
}

TEST_CASE("tsan: scraping /metrics while clients play never races the frame loop") {
  spdlog::set_level(spdlog::level::warn);
  sv::ServerOptions o = svtest::TestOptions(sv::LockingScheme::kAreanodeOpt, 2);
  o.metrics = true;  // the master publishes; this test's HTTP server binds a port the system picks
  const testing_util::ScratchDir scratch("aftershock_metrics_test");  // goes after the server
  o.data_dir = scratch.Path("data");
  o.sync_mode = recovery::SyncMode::kSync;
  const uint64_t start_ms = core::SteadyMs();
  std::unique_ptr<sv::Server> server;
  REQUIRE(sv::Server::Create(o, &server).ok());
  std::unique_ptr<sv::MetricsServer> http;
  REQUIRE(sv::MetricsServer::Start("127.0.0.1", 0, &server->metrics_board(), &http).ok());
  server->Start();
  std::atomic<bool> done{false}, saw_requests{false};
  std::atomic<int> scrapes{0};
  std::string last;  // the scraper's until joined
  std::thread scraper([&] {
    httplib::Client c("127.0.0.1", http->port());
    while (!done.load()) {
      const auto res = c.Get("/metrics");
      if (res && res->status == 200) {
        last = res->body;
        scrapes.fetch_add(1);
        if (SumOf(last, "aftershock_requests_total{") > 0) saw_requests.store(true);
      }
    }
  });
  svtest::PlayResult r = svtest::Play(server->lobby_port(), 6, "m", 1500, 4000, 3);
  // Publication runs every 250 ms: wait (up to 30 s) until a scrape saw the play's requests.
  for (int i = 0; i < 3000 && !saw_requests.load(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  done.store(true);
  scraper.join();
  server->RequestStop();
  server->Wait();
  http->Stop();
  REQUIRE(r.joined == 6);
  CHECK(scrapes.load() > 10);
  const auto v = ParseExposition(last);
  CHECK(v.at("aftershock_requests_total{thread=\"0\"}") + v.at("aftershock_requests_total{thread=\"1\"}") > 0);
  CHECK(v.at("aftershock_frames_total") > 0);
  // Every frame logs a record, synced in sync mode: the syncs were counted and timed. One writer
  // syncs at a time, so their summed time cannot exceed the time the server ran.
  CHECK(v.at("aftershock_durability_enabled") == 1);
  CHECK(v.at("aftershock_log_syncs_total") > 0);
  const double sync_s = v.at("aftershock_log_sync_seconds_total");
  CHECK(sync_s > 0);
  CHECK(sync_s <= (core::SteadyMs() - start_ms) / 1000.0);
  const recovery::LogWriter::Stats log = server->Report().durability.stats.log;
  CHECK(sync_s <= static_cast<double>(log.sync_ns) / 1e9 * (1 + 1e-8));  // a counter: it only grows
}

// The library buffered a request body of any size (a POST of 6 GiB grew the server to 3.5 GB).
// A request with a body is now refused with 413 as soon as its headers are in: here the body is
// never sent, so a server that waited for it would answer only on its read timeout, and with 400.
TEST_CASE("/metrics refuses a request body unread") {
  Endpoint endpoint;
  std::unique_ptr<sv::MetricsServer>& http = endpoint.http;
  std::string head;
  SECTION("announced by Content-Length") {
    head = "POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 6442450944\r\n\r\n";
  }
  SECTION("chunked (0.11's payload limit does not apply to it)") {
    head = "POST /metrics HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n40000000\r\n";
  }
  CHECK(Exchange(http->port(), head).rfind("HTTP/1.1 413 ", 0) == 0);
  httplib::Client c("127.0.0.1", http->port());  // and scrapes are served as before
  const auto res = c.Get("/metrics");
  REQUIRE(res);
  CHECK(res->status == 200);
  http->Stop();
}

namespace {

// A client that connects to /metrics and drips a request line that never ends, one byte every
// 100 ms, until the server closes the connection or Finish() is called.
class Dripper {
 public:
  explicit Dripper(uint16_t port) : fd_(ConnectTo(port)) {
    thread_ = std::thread([this] {
      const std::string line = "GET /metrics?drip=";
      for (size_t i = 0; !finish_.load(); ++i) {
        const char c = i < line.size() ? line[i] : 'x';
        if (::send(fd_, &c, 1, MSG_NOSIGNAL) != 1) break;  // the server closed it
        sent_.fetch_add(1);
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
      closed_by_server_.store(!finish_.load());
    });
  }
  ~Dripper() {
    Finish();
    ::close(fd_);
  }
  void Finish() {
    finish_.store(true);
    if (thread_.joinable()) thread_.join();
  }
  int sent() const { return sent_.load(); }
  bool closed_by_server() const { return closed_by_server_.load(); }

 private:
  const int fd_;
  std::atomic<bool> finish_{false}, closed_by_server_{false};
  std::atomic<int> sent_{0};
  std::thread thread_;
};


}  // namespace

// Stop() closed the listening socket and joined the worker, which went on reading a client's
// dripping request: shutdown waited as long as the client dripped (36 s in the audit). Stop() now
// shuts the connection being served and returns at once; 10 s is a generous deadline. Without
// the fix the dripper is finished once the deadline passed, so the test fails rather than hangs.
TEST_CASE("/metrics: Stop returns while a client drips its request") {
  Endpoint endpoint;
  std::unique_ptr<sv::MetricsServer>& http = endpoint.http;
  Dripper dripper(http->port());
  REQUIRE(PollUntil([&] { return dripper.sent() >= 3; }, 30000));  // the worker is reading it
  CHECK(ReturnsWithin([&] { http->Stop(); }, 10000, [&] { dripper.Finish(); }));
}

// A dripping client held the one worker for as long as it dripped, so every scrape waited. Each
// connection now has kMetricsExchangeMs to be answered: the dripper is cut off and a scrape that
// queued behind it is served (the deadline here is generous: 30 s, the drip would go on for
// 60 s).
TEST_CASE("/metrics: a client that drips its request holds the endpoint a few seconds at most") {
  Endpoint endpoint;
  std::unique_ptr<sv::MetricsServer>& http = endpoint.http;
  Dripper dripper(http->port());
  REQUIRE(PollUntil([&] { return dripper.sent() >= 3; }, 30000));
  std::atomic<bool> served{false};
  std::thread scraper([&] {
    const std::string reply = Exchange(http->port(), "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
    served.store(reply.rfind("HTTP/1.1 200 ", 0) == 0);
  });
  const bool in_time = PollUntil([&] { return served.load(); }, 30000);
  CHECK(PollUntil([&] { return dripper.closed_by_server(); }, 10000));
  dripper.Finish();  // without the fix, lets the scrape through so the test ends
  scraper.join();
  CHECK(in_time);
  http->Stop();
}

namespace {

int OpenDescriptors() {
  int n = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    (void)entry;
    ++n;
  }
  return n;
}

// The accept backlog of this process's listening TCP socket on `port` (the kernel's, from
// TCP_INFO: a listener reports its backlog in tcpi_sacked), or -1 if no such socket is open.
int ListenBacklogOfPort(uint16_t port) {
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    const int fd = std::stoi(entry.path().filename().string());
    sockaddr_in a{};
    socklen_t len = sizeof a;
    int listening = 0;
    socklen_t flag_len = sizeof listening;
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0 || a.sin_family != AF_INET ||
        ntohs(a.sin_port) != port ||
        ::getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &flag_len) != 0 || !listening) {
      continue;
    }
    tcp_info info{};
    socklen_t info_len = sizeof info;
    if (::getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &info_len) != 0) return -1;
    return static_cast<int>(info.tcpi_sacked);
  }
  return -1;
}

}  // namespace

// cpp-httplib listens with a compiled-in backlog of 5: a burst of connections past it waited for
// the kernel to resend its SYN-ACK, a second or more, before the listen thread saw them. The
// endpoint listens again on the same socket with kMetricsListenBacklog.
TEST_CASE("/metrics: the listening socket queues kMetricsListenBacklog connections for accept") {
  Endpoint endpoint;
  CHECK(ListenBacklogOfPort(endpoint.http->port()) == sv::kMetricsListenBacklog);
  endpoint.http->Stop();
  CHECK(ListenBacklogOfPort(endpoint.http->port()) == -1);  // and Stop closes it
}

// The library queued every accepted connection without a bound, each holding a descriptor until
// the one worker took it up and gave it kMetricsIdleMs: 252 connections that sent nothing took
// every descriptor of a server limited to 256, and its next checkpoint failed to open its file,
// stopping the server. At most kMetricsMaxConnections are now held; the rest are answered 503
// at once and closed, and the endpoint's descriptors stay bounded. Without the fix no connection
// is ever answered 503, and the first poll fails at its deadline.
TEST_CASE("/metrics: a flood of connections is refused past its places and holds few descriptors") {
  Endpoint endpoint;
  std::unique_ptr<sv::MetricsServer>& http = endpoint.http;
  const int before = OpenDescriptors();
  constexpr int kFlood = 200;
  std::vector<int> flood;
  for (int i = 0; i < kFlood; ++i) {
    const int fd = ConnectTo(http->port());
    REQUIRE(fd >= 0);
    // The start of a head that never ends: a held connection keeps its place for
    // kMetricsExchangeMs instead of kMetricsIdleMs, so the places stay taken while the listen
    // thread takes up the rest of the flood, however slowly it runs (TSan).
    const std::string start = "GET /metrics HTTP/1.1\r\n";
    REQUIRE(::send(fd, start.data(), start.size(), MSG_NOSIGNAL) ==
            static_cast<ssize_t>(start.size()));
    flood.push_back(fd);
  }
  // A refused connection reads a 503, then the server's close.
  std::vector<bool> refused(kFlood, false);
  auto count_refused = [&] {
    int n = 0;
    for (int i = 0; i < kFlood; ++i) {
      if (!refused[i]) {
        char buf[256];
        const ssize_t got = ::recv(flood[i], buf, sizeof buf - 1, MSG_DONTWAIT);
        refused[i] = got > 0 && std::string(buf, static_cast<size_t>(got))
                                        .rfind("HTTP/1.1 503 Service Unavailable\r\n", 0) == 0;
      }
      n += refused[i];
    }
    return n;
  };
  // The endpoint holds at most kMetricsMaxConnections connections besides its listening socket
  // and its eventfd (both counted in `before`); the test holds its kFlood client sockets.
  // (Without the fix all kFlood stay held, and the worker lets one go per kMetricsExchangeMs.)
  const int places = sv::kMetricsMaxConnections;
  CHECK(PollUntil([&] { return OpenDescriptors() - before - kFlood <= places; }, 30000));
  // Connections beyond the places were refused with a 503. (How many depends on how fast the
  // listen thread takes the flood up: a held connection is let go after kMetricsExchangeMs, and a
  // later one takes its place.)
  CHECK(PollUntil([&] { return count_refused() >= 1; }, 30000));
  for (int fd : flood) ::close(fd);
  // Once the flood is gone, a scrape is served.
  // The reader lets the closed connections go as it sees them; until then a scrape may still
  // find the places taken and get a 503.
  const std::string scrape = "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";
  CHECK(PollUntil(
      [&] { return Exchange(http->port(), scrape).rfind("HTTP/1.1 200 ", 0) == 0; }, 30000));
  http->Stop();
}

// With one worker taking connections in turn, a scrape waited behind every connection accepted
// before it: kMetricsIdleMs for each that sent nothing, kMetricsExchangeMs for each that dripped
// its request, so it could not be answered before the drippers ahead of it were cut off. The
// request heads of all held connections are now read together, so the scrape is answered while
// the drippers and the silent connections are still held; the drippers are cut off afterwards.
TEST_CASE("/metrics: a scrape is answered beside clients that drip or send nothing") {
  Endpoint endpoint;
  std::unique_ptr<sv::MetricsServer>& http = endpoint.http;
  std::vector<int> silent;
  for (int i = 0; i < 8; ++i) silent.push_back(ConnectTo(http->port()));
  std::vector<std::unique_ptr<Dripper>> drippers;
  for (int i = 0; i < 2; ++i) drippers.push_back(std::make_unique<Dripper>(http->port()));
  REQUIRE(PollUntil([&] { return drippers[0]->sent() >= 3 && drippers[1]->sent() >= 3; }, 30000));
  const std::string reply = Exchange(http->port(), "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
  const bool drippers_still_held =
      !drippers[0]->closed_by_server() && !drippers[1]->closed_by_server();
  CHECK(reply.rfind("HTTP/1.1 200 ", 0) == 0);
  CHECK(drippers_still_held);
  for (auto& d : drippers) CHECK(PollUntil([&] { return d->closed_by_server(); }, 30000));
  for (int fd : silent) ::close(fd);
  http->Stop();
}

// The library read a request's header lines without a size limit. A head longer than
// kMetricsMaxHeadBytes is now refused with 431 once that much has come, and the connection
// closed; the library never sees it. (Without the fix this head, which never ends, got no answer
// until the connection's deadline.)
TEST_CASE("/metrics: a request head longer than 8 KiB is refused with 431") {
  Endpoint endpoint;
  std::unique_ptr<sv::MetricsServer>& http = endpoint.http;
  std::string head =
      "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Pad: " + std::string(sv::kMetricsMaxHeadBytes, 'p');
  SECTION("a head that never ends") {}
  SECTION("a complete head, arriving at once") { head += "\r\n\r\n"; }
  CHECK(Exchange(http->port(), head).rfind("HTTP/1.1 431 ", 0) == 0);
  http->Stop();
}

// A reply the client does not read holds the one thread while it writes: up to kMetricsStallMs
// once the client's window is full. Two defects made a scrape that arrived meanwhile go
// unanswered: the sweep for idle connections ran before the thread read what had come, so the
// scrape, accepted more than kMetricsIdleMs before and its bytes still unread, was closed as
// idle; and a blocking send waited out the 5 s send timeout the library sets on accepted
// sockets, past the scrape's own kMetricsExchangeMs. Here the reply is 4 MB (a long map name in
// the labels) and the first client's receive buffer is 4 KiB; the scrape must still be
// answered.
TEST_CASE("/metrics: a scrape is answered after a client that does not read its reply") {
  auto snapshot = std::make_shared<sv::MetricsSnapshot>();
  snapshot->report.info.map = std::string(4 << 20, 'm');
  Endpoint endpoint(snapshot);
  std::unique_ptr<sv::MetricsServer>& http = endpoint.http;
  const int stuck = ConnectTo(http->port(), /*rcvbuf=*/4096);
  REQUIRE(stuck >= 0);
  const std::string scrape = "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";
  REQUIRE(::send(stuck, scrape.data(), scrape.size(), MSG_NOSIGNAL) ==
          static_cast<ssize_t>(scrape.size()));
  const std::string reply = Exchange(http->port(), scrape);
  CHECK(reply.rfind("HTTP/1.1 200 ", 0) == 0);
  CHECK(reply.size() > (4u << 20));
  ::close(stuck);
  http->Stop();
}
