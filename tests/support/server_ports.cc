// WaitForServerPorts: see server_ports.h.
#include "tests/support/server_ports.h"

#include <chrono>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "tests/support/mini_json.h"

namespace svtest {

bool WaitForServerPorts(const std::string& stats_path, int timeout_ms, ServerPorts* out) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  do {
    std::ifstream in(stats_path);
    std::stringstream text;
    text << in.rdbuf();
    if (!text.str().empty()) {
      try {  // the file is replaced atomically, so a parse error means a broken server
        const Json j = ParseJson(text.str());
        if (j.Has("ports") && j["ports"]["lobby"].number > 0) {
          out->lobby = static_cast<uint16_t>(j["ports"]["lobby"].number);
          out->workers.clear();
          for (const Json& w : j["ports"]["workers"].array) {
            out->workers.push_back(static_cast<uint16_t>(w.number));
          }
          out->metrics = j["ports"].Has("metrics") ? static_cast<uint16_t>(j["ports"]["metrics"].number) : 0;
          return true;
        }
      } catch (const std::runtime_error&) {
        return false;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  } while (std::chrono::steady_clock::now() < deadline);
  return false;
}

}  // namespace svtest
