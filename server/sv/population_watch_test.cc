// PopulationWatch: a frame is steady once a whole window of ticks, this one included, had no
// join or leave; the start counts as a change.
#include <catch2/catch.hpp>

#include "server/sv/frame_executor.h"

TEST_CASE("a population is steady after a full window of ticks without joins or leaves") {
  sv::PopulationWatch watch(3);
  CHECK_FALSE(watch.NoteTick(false));  // the start: nothing known before it
  CHECK_FALSE(watch.NoteTick(false));
  CHECK(watch.NoteTick(false));        // three calm ticks
  CHECK(watch.NoteTick(false));
  CHECK_FALSE(watch.NoteTick(true));   // a join or leave ends it at once
  CHECK_FALSE(watch.NoteTick(false));
  CHECK_FALSE(watch.NoteTick(false));
  CHECK(watch.NoteTick(false));
}

TEST_CASE("a ramp with a join every other tick is never steady") {
  sv::PopulationWatch watch(30);
  for (int tick = 0; tick < 300; ++tick) CHECK_FALSE(watch.NoteTick(tick % 2 == 0));
}
