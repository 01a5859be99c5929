// The game's state must not depend on which sincosf variant glibc picks for the CPU: a data
// directory written on one machine is recovered on another (docs/game.md, "Determinism").
#include <catch2/catch.hpp>

#include <sstream>
#include <string>
#include <vector>

#include "tests/support/scratch_dir.h"
#include "tests/support/subprocess.h"

namespace {

// game_angle_probe's lines, run with GLIBC_TUNABLES=`tunables` ("" for the host's choice).
std::vector<std::string> RunProbe(const testing_util::ScratchDir& scratch, const std::string& name,
                                  const std::string& tunables) {
  const std::string out = scratch.Path(name + ".out"), err = scratch.Path(name + ".err");
  testing_util::Subprocess probe({"/usr/bin/env", "GLIBC_TUNABLES=" + tunables, AS_ANGLE_PROBE_BIN},
                                 out, err);
  REQUIRE(probe.started());
  const int status = probe.Wait(60);
  const std::string text = testing_util::ReadFile(out);
  INFO(name << " exited " << status << "; stdout:\n" << text << "stderr:\n" << testing_util::ReadFile(err));
  REQUIRE(status == 0);
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  REQUIRE(lines.size() == 3);
  REQUIRE(lines[0].rfind("libm ", 0) == 0);
  REQUIRE(lines[1].rfind("turns ", 0) == 0);
  REQUIRE(lines[2].rfind("teleport ", 0) == 0);
  return lines;
}

// glibc picks sincosf's FMA or SSE2 code by the CPU, and on Debian 12 they differ in the last
// bit for 17 magnitudes from 17.3 to 116.2 radians. The probe plays two worlds into such angles,
// once as the host picks and once with glibc told to ignore FMA, and the worlds must be equal.
TEST_CASE("a world replays to the same state whichever sincosf variant the host's libm picks") {
  const testing_util::ScratchDir scratch("aftershock_libm_test");
  const std::vector<std::string> host = RunProbe(scratch, "host", "");
  const std::vector<std::string> no_fma = RunProbe(scratch, "no_fma", "glibc.cpu.hwcaps=-AVX2,-FMA");
  INFO("host:   " << host[0] << " / " << host[1] << " / " << host[2]);
  INFO("no FMA: " << no_fma[0] << " / " << no_fma[1] << " / " << no_fma[2]);
  if (host[0] == no_fma[0]) {
    WARN("this host's libm answered alike with and without FMA: only one variant was compared");
  }
  CHECK(host[1] == no_fma[1]);  // commands facing such angles
  CHECK(host[2] == no_fma[2]);  // a teleporter whose destination faces one
}

}  // namespace
