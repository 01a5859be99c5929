// The game's state must not depend on which variant of a libm function the host's CPU selects:
// a data directory written on one machine is recovered on another (docs/game.md, "Determinism").
// glibc picks sincosf's FMA or SSE2 code by the CPU (an ifunc), and on Debian 12 the two differ in
// the last bit for 17 magnitudes from 17.3 to 116.3 radians. The test runs game_angle_probe,
// which walks a player facing such angles, as the host gives it and with glibc told to ignore FMA
// (GLIBC_TUNABLES), and compares the worlds.
#include <catch2/catch.hpp>

#include <string>

#include "tests/support/scratch_dir.h"
#include "tests/support/subprocess.h"

namespace {

struct ProbeOutput {
  std::string libm_line, state_line;
};

ProbeOutput RunProbe(const testing_util::ScratchDir& scratch, const std::string& name,
                     const std::string& tunables) {
  const std::string out = scratch.Path(name + ".out");
  testing_util::Subprocess probe({"/usr/bin/env", "GLIBC_TUNABLES=" + tunables, AS_ANGLE_PROBE_BIN},
                                 out, scratch.Path(name + ".err"));
  REQUIRE(probe.started());
  REQUIRE(probe.Wait(60) == 0);
  const std::string text = testing_util::ReadFile(out);
  const size_t newline = text.find('\n');
  REQUIRE(newline != std::string::npos);
  ProbeOutput o{text.substr(0, newline), text.substr(newline + 1)};
  while (!o.state_line.empty() && o.state_line.back() == '\n') o.state_line.pop_back();
  INFO(name << ": " << text);
  REQUIRE(o.libm_line.rfind("libm ", 0) == 0);
  REQUIRE(o.state_line.rfind("state ", 0) == 0);
  return o;
}

TEST_CASE("a world replays to the same state whichever sincosf variant the host's libm picks") {
  const testing_util::ScratchDir scratch("aftershock_libm_test");
  const ProbeOutput host = RunProbe(scratch, "host", "");
  const ProbeOutput no_fma = RunProbe(scratch, "no_fma", "glibc.cpu.hwcaps=-AVX2,-FMA");
  INFO("host:   " << host.libm_line << " / " << host.state_line);
  INFO("no FMA: " << no_fma.libm_line << " / " << no_fma.state_line);
  if (host.libm_line == no_fma.libm_line) {
    WARN("this host's libm answered alike with and without FMA: only one variant was compared");
  }
  CHECK(host.state_line == no_fma.state_line);
}

}  // namespace
