// Tests for Status.
#include <catch2/catch.hpp>

#include "server/core/status.h"

TEST_CASE("Status carries code and message", "[core]") {
  REQUIRE(core::Status::OK().ok());
  core::Status s = core::Status::Corruption("log.000001 offset 40: bad CRC");
  REQUIRE_FALSE(s.ok());
  REQUIRE(s.code() == core::Status::Code::kCorruption);
  REQUIRE(s.ToString() == "corruption: log.000001 offset 40: bad CRC");
}
