// Server::PublishMetrics: the master's copy of the figures a Prometheus scrape shows.
#include "server/protocol/protocol_format.h"
#include "server/sv/server.h"

namespace sv {

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
