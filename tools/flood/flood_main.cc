// aftershock-flood: sends junk datagrams (tools/flood/junk_datagrams.h) at a fixed rate to an
// Aftershock server's lobby port and its worker ports, for a bounded time, and reports what it
// sent and what came back, as JSON. A load tool for this machine only: it refuses any target
// outside 127.0.0.0/8, and its rate and duration are capped.
//
// Example: aftershock-flood --server 127.0.0.1:27500 --workers 2 --rate 20000 --duration 10
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <cxxopts.hpp>

#include "server/core/int_range.h"
#include "tools/flood/junk_datagrams.h"

namespace {

constexpr int kMaxRate = 200'000;        // datagrams per second
constexpr double kMinDurationS = 0.1;    // seconds
constexpr double kMaxDurationS = 300;    // seconds
constexpr int kMaxSockets = 64;
constexpr int kMaxTargets = 65;          // the lobby and up to 64 workers

std::string FormatSeconds(double s) {
  std::ostringstream out;
  out << s;
  return out.str();
}

struct Options {
  uint32_t host = 0;               // host byte order, inside 127.0.0.0/8
  std::vector<uint16_t> ports;     // lobby first, then workers
  int rate = 1000;
  double duration_s = 5;
  std::vector<flood::JunkKind> mix;
  int sockets = 4;
  uint64_t seed = 1;
  std::string out;
};

struct Counts {
  std::array<uint64_t, flood::kJunkKindCount> sent{};
  uint64_t send_failures = 0;  // the kernel refused (buffer full)
  uint64_t replies = 0, reply_bytes = 0, verify_connects = 0;
};

// "127.0.0.1:27500" -> host and port; only loopback addresses are accepted.
bool ParseTarget(const std::string& text, uint32_t* host, uint16_t* port, std::string* error) {
  const size_t colon = text.rfind(':');
  in_addr a{};
  if (colon == std::string::npos || inet_pton(AF_INET, text.substr(0, colon).c_str(), &a) != 1) {
    *error = "--server must be IPV4:PORT, got '" + text + "'";
    return false;
  }
  const int p = std::atoi(text.c_str() + colon + 1);
  if (p < 1 || p > 65535) {
    *error = "--server port out of range in '" + text + "'";
    return false;
  }
  *host = ntohl(a.s_addr);
  if ((*host >> 24) != 127) {
    *error = "--server must be a loopback address (127.0.0.0/8): this tool never floods another host";
    return false;
  }
  *port = static_cast<uint16_t>(p);
  return true;
}

std::vector<std::string> SplitCommas(const std::string& s) {
  std::vector<std::string> parts;
  std::stringstream in(s);
  for (std::string part; std::getline(in, part, ',');) {
    if (!part.empty()) parts.push_back(part);
  }
  return parts;
}

int OpenSocket() {
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
  if (fd < 0) return -1;
  const int buf = 4 << 20;
  ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof buf);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Reads whatever the server sent back to `fd` (replies to status, VERIFY_CONNECTs...).
void ReadReplies(int fd, Counts* c) {
  static thread_local std::vector<uint8_t> buf(65536);
  for (;;) {
    const ssize_t r = ::recv(fd, buf.data(), buf.size(), MSG_DONTWAIT);
    if (r < 0) return;
    ++c->replies;
    c->reply_bytes += static_cast<uint64_t>(r);
    if (flood::IsVerifyConnect(buf.data(), static_cast<size_t>(r))) ++c->verify_connects;
  }
}

std::string ToJson(const Options& o, const Counts& c, double wall_s) {
  std::ostringstream j;
  j << "{\"rate\": " << o.rate << ", \"duration_s\": " << wall_s << ", \"sockets\": " << o.sockets
    << ", \"seed\": " << o.seed << ",\n \"ports\": [";
  for (size_t i = 0; i < o.ports.size(); ++i) j << (i ? ", " : "") << o.ports[i];
  uint64_t total = 0;
  j << "],\n \"sent\": {";
  for (int k = 0; k < flood::kJunkKindCount; ++k) {
    j << (k ? ", " : "") << '"' << flood::JunkKindName(static_cast<flood::JunkKind>(k)) << "\": " << c.sent[k];
    total += c.sent[k];
  }
  j << "},\n \"sent_total\": " << total << ", \"achieved_rate\": " << (wall_s > 0 ? total / wall_s : 0)
    << ", \"send_failures\": " << c.send_failures << ",\n \"replies\": " << c.replies
    << ", \"reply_bytes\": " << c.reply_bytes << ", \"verify_connects\": " << c.verify_connects << "}\n";
  return j.str();
}

int Run(const Options& o) {
  std::vector<int> fds;
  for (int i = 0; i < o.sockets; ++i) {
    const int fd = OpenSocket();
    if (fd < 0) {
      std::fprintf(stderr, "aftershock-flood: cannot open a UDP socket: %s\n", std::strerror(errno));
      return 1;
    }
    fds.push_back(fd);
  }
  std::vector<sockaddr_in> targets;
  for (uint16_t p : o.ports) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(o.host);
    a.sin_port = htons(p);
    targets.push_back(a);
  }
  std::mt19937_64 rng(o.seed);
  std::vector<uint8_t> datagram;
  Counts c;
  uint64_t sent = 0;
  const uint64_t total = static_cast<uint64_t>(o.rate * o.duration_s);
  const auto start = std::chrono::steady_clock::now();
  for (int64_t ms = 1; sent < total; ++ms) {
    std::this_thread::sleep_until(start + std::chrono::milliseconds(ms));
    const uint64_t due = std::min(total, static_cast<uint64_t>(o.rate * (ms / 1000.0)));
    for (; sent < due; ++sent) {
      const flood::JunkKind kind = o.mix[rng() % o.mix.size()];
      flood::MakeJunk(kind, rng, &datagram);
      const int fd = fds[sent % fds.size()];
      const sockaddr_in& to = targets[(sent / fds.size()) % targets.size()];
      if (::sendto(fd, datagram.data(), datagram.size(), 0, reinterpret_cast<const sockaddr*>(&to),
                   sizeof to) < 0) {
        ++c.send_failures;
      } else {
        ++c.sent[static_cast<int>(kind)];
      }
    }
    for (int fd : fds) ReadReplies(fd, &c);
  }
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // late replies
  for (int fd : fds) {
    ReadReplies(fd, &c);
    ::close(fd);
  }
  const std::string json = ToJson(o, c, wall_s);
  std::fputs(json.c_str(), stdout);
  if (!o.out.empty()) {
    std::ofstream f(o.out);
    f << json;
    if (!f) {
      std::fprintf(stderr, "aftershock-flood: cannot write %s\n", o.out.c_str());
      return 1;
    }
  }
  return 0;
}

cxxopts::Options MakeParser() {
  cxxopts::Options p("aftershock-flood",
                     "Sends junk UDP datagrams at an Aftershock server on this machine (127.0.0.0/8 only),\n"
                     "at a fixed rate for a bounded time, and prints what it sent as JSON.");
  // clang-format off
  p.add_options()
    ("server", "The server's lobby as IPV4:PORT; must be in 127.0.0.0/8",
     cxxopts::value<std::string>()->default_value("127.0.0.1:27500"))
    ("workers", "Also flood the worker ports PORT+1..PORT+N (the server's --threads)",
     cxxopts::value<int>()->default_value("1"))
    ("ports", "Flood exactly these ports of the server's address instead (comma list)",
     cxxopts::value<std::string>()->default_value(""))
    ("rate", "Datagrams per second over all ports (1..200000)", cxxopts::value<int>()->default_value("1000"))
    ("duration", "Seconds to send (0.1..300)", cxxopts::value<double>()->default_value("5"))
    ("mix", "Kinds of junk, drawn evenly: random, truncated, oversize, connectionless, enet-connect",
     cxxopts::value<std::string>()->default_value("random,truncated,oversize,connectionless,enet-connect"))
    ("sockets", "Source sockets (source ports) to send from, round-robin (1..64)",
     cxxopts::value<int>()->default_value("4"))
    ("seed", "Seed of the junk generator", cxxopts::value<uint64_t>()->default_value("1"))
    ("out", "Also write the JSON summary to this file", cxxopts::value<std::string>()->default_value(""))
    ("h,help", "Print this help");
  // clang-format on
  return p;
}

// Fills *o from the parsed flags; "" or the error text.
std::string FillOptions(const cxxopts::ParseResult& r, Options* o) {
  uint16_t base = 0;
  std::string error;
  if (!ParseTarget(r["server"].as<std::string>(), &o->host, &base, &error)) return error;
  const int workers = r["workers"].as<int>();
  const core::IntRange worker_range{"--workers", 0, kMaxTargets - 1};
  if (!worker_range.Contains(workers) || base + workers > 65535) return worker_range.Describe();
  const std::vector<std::string> ports = SplitCommas(r["ports"].as<std::string>());
  if (ports.empty()) {
    for (int i = 0; i <= workers; ++i) o->ports.push_back(static_cast<uint16_t>(base + i));
  }
  for (const std::string& p : ports) {
    const int v = std::atoi(p.c_str());
    if (v < 1 || v > 65535 || std::to_string(v) != p) return "--ports: bad port '" + p + "'";
    o->ports.push_back(static_cast<uint16_t>(v));
  }
  if (o->ports.size() > kMaxTargets) return "--ports: at most " + std::to_string(kMaxTargets) + " ports";
  o->rate = r["rate"].as<int>();
  if (core::Status s = core::IntRange{"--rate", 1, kMaxRate}.Check(o->rate); !s.ok()) return s.message();
  o->duration_s = r["duration"].as<double>();
  if (!(o->duration_s >= kMinDurationS && o->duration_s <= kMaxDurationS)) {
    return "--duration must be " + FormatSeconds(kMinDurationS) + ".." + FormatSeconds(kMaxDurationS);
  }
  for (const std::string& name : SplitCommas(r["mix"].as<std::string>())) {
    const std::optional<flood::JunkKind> k = flood::ParseJunkKind(name);
    if (!k) return "--mix: unknown kind '" + name + "'";
    o->mix.push_back(*k);
  }
  if (o->mix.empty()) return "--mix: name at least one kind";
  o->sockets = r["sockets"].as<int>();
  if (core::Status s = core::IntRange{"--sockets", 1, kMaxSockets}.Check(o->sockets); !s.ok()) return s.message();
  o->seed = r["seed"].as<uint64_t>();
  o->out = r["out"].as<std::string>();
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  cxxopts::Options parser = MakeParser();
  Options o;
  try {
    const cxxopts::ParseResult r = parser.parse(argc, argv);
    if (r.count("help")) {
      std::printf("%s\n", parser.help().c_str());
      return 0;
    }
    const std::string error = FillOptions(r, &o);
    if (!error.empty()) {
      std::fprintf(stderr, "aftershock-flood: error: %s\n\n%s\n", error.c_str(), parser.help().c_str());
      return 2;
    }
  } catch (const cxxopts::exceptions::exception& e) {
    std::fprintf(stderr, "aftershock-flood: error: %s\n\n%s\n", e.what(), parser.help().c_str());
    return 2;
  }
  return Run(o);
}
