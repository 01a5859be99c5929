// The build keeps floats unfused (cmake/AftershockOptions.cmake): the probe, compiled with the
// target's fused multiply-add enabled, must round each product on its own.
#include <catch2/catch.hpp>

#include <sstream>
#include <string>

#include "server/core/fp_contract_probe.h"

namespace {
std::string Hex(float f) {
  std::ostringstream out;
  out << std::hexfloat << f;
  return out.str();
}
}  // namespace

TEST_CASE("floats are not contracted into fused multiply-adds, even where the target has them",
          "[core]") {
#if defined(__x86_64__)
  if (!__builtin_cpu_supports("fma")) {
    WARN("this CPU has no FMA, so the probe compiled with -mfma cannot run here");
    return;
  }
#endif
  // e * e = 1 + 2^-11 + 2^-24 exactly, half an ulp above 1 + 2^-11, which it rounds to (ties to
  // even). Rounded on its own, e * e - (1 + 2^-11) is 0; fused, it is the lost 2^-24.
  const float e = 1.0f + 0x1p-12f;
  const float rounded = 1.0f + 0x1p-11f;
  REQUIRE(e * e == rounded);  // constant-folded here, with one rounding as the language says
  {
    const float multiply_add = core::ProbeMultiplyAdd(e, e, -rounded);
    INFO("e * e - (1 + 2^-11) = " << Hex(multiply_add));
    CHECK(multiply_add == 0.0f);
  }
  {
    // Dot's two products cancel when each is rounded; fused, either way round, 2^-24 is left.
    const float dot = core::ProbeDot(core::Vec3{e, e, 0}, core::Vec3{e, -e, 0});
    INFO("Dot = " << Hex(dot));
    CHECK(dot == 0.0f);
  }
}
