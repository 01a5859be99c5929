// The ports a server binary bound, read back from its stats file: tests start the server with
// --port 0 (the system picks every port) and --stats-out, and ask the file where it listens.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace svtest {

struct ServerPorts {
  uint16_t lobby = 0;
  std::vector<uint16_t> workers;  // by worker index
  uint16_t metrics = 0;           // the /metrics endpoint (--metrics-port); 0: none
};

// Polls `stats_path` until it holds the stats JSON's `ports` (the server writes the file once
// before its first frame), or timeout_ms pass. True and *out filled when found. Remove the file
// before starting the server: an old one names an old server's ports.
bool WaitForServerPorts(const std::string& stats_path, int timeout_ms, ServerPorts* out);

}  // namespace svtest
