// What the master publishes for readers on other threads: the status board (the lobby's answer
// to a connectionless status query) and the Prometheus metrics snapshot.
#include <algorithm>
#include <string>

#include "server/core/steady_clock.h"
#include "server/protocol/protocol_format.h"
#include "server/sv/server.h"

namespace sv {

namespace {

// The status reply's map name: the file name without its extension, in the status format's
// characters.
std::string MapName(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  const size_t dot = name.rfind('.');
  if (dot != std::string::npos && dot > 0) name.resize(dot);
  for (char& c : name) {
    if (c == ' ' || c == '\\' || c < 0x21 || c > 0x7e) c = '_';
  }
  return name.empty() ? "map" : name.substr(0, proto::kMaxMapNameChars);
}

}  // namespace

std::string ShownHostname(const std::string& hostname) {
  std::string shown = hostname.substr(0, proto::kMaxHostnameChars);
  for (char& c : shown) {
    if (c == '\\' || c < 0x20 || c > 0x7e) c = '_';  // the status format's separator
  }
  return shown;
}

void Server::PublishStatus() {
  proto::ServerStatus st;
  st.hostname = ShownHostname(options_.hostname);
  st.map = MapName(options_.map_path);
  st.players = static_cast<uint32_t>(online_.size());
  st.max_players = static_cast<uint32_t>(options_.max_players);
  st.protocol_version = proto::kProtocolVersion;
  st.tick_rate_hz = static_cast<uint32_t>(options_.tick_hz);
  for (const auto& [id, online] : online_) {
    const game::Edict& e = world_->Get(id);
    proto::StatusPlayer p;
    p.user_id = static_cast<uint32_t>(id);
    p.minutes = static_cast<uint32_t>(std::min<uint64_t>((core::SteadyMs() - online.joined_ms) / 60000, 99999));
    p.name = e.name;
    p.frags = std::clamp<int32_t>(e.frags, -32768, 32767);
    // Never 0: qstat takes a QuakeWorld player with ping 0 for a bot, leaves it out of the player
    // count and cuts its name.
    p.ping_ms = std::clamp<uint32_t>(shared_.ping_ms[id].load(std::memory_order_relaxed), 1, 9999);
    st.player_list.push_back(std::move(p));
  }
  std::sort(st.player_list.begin(), st.player_list.end(),
            [](const proto::StatusPlayer& a, const proto::StatusPlayer& b) { return a.name < b.name; });
  status_board_.Publish(std::move(st));
}


void Server::PublishMetrics() {
  auto snapshot = std::make_shared<MetricsSnapshot>();
  snapshot->report = Report();
  snapshot->frame_hist = stats_.FrameHistogram();
  snapshot->leaf_relocks = Load(stats_.relocks);
  snapshot->shared_leaf_frames = Load(stats_.shared_frames);
  snapshot->protocol_version = proto::kProtocolVersion;
  metrics_board_.TryPublish(std::move(snapshot));
}

}  // namespace sv
