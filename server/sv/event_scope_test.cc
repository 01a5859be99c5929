// EventReaches: who gets a frag or death event, and that chat still reaches everyone.
#include <catch2/catch.hpp>

#include "server/sv/event_scope.h"

TEST_CASE("a frag reaches the killer, the victim and clients near the victim", "[event_scope]") {
  const sv::FrameEvent frag = sv::ScopedEvent({/*killer=*/3, /*victim=*/7, 2}, {100, 0, 0});
  constexpr float kRadius = 2048;
  CHECK(sv::EventReaches(frag, 3, {90000, 0, 0}, kRadius));  // the killer, however far away
  CHECK(sv::EventReaches(frag, 7, {-90000, 0, 0}, kRadius)); // the victim
  CHECK(sv::EventReaches(frag, 12, {100 + 2048, 0, 0}, kRadius));  // exactly at the radius
  CHECK(sv::EventReaches(frag, 12, {100 + 1000, 1000, 1000}, kRadius));
  CHECK_FALSE(sv::EventReaches(frag, 12, {100 + 2049, 0, 0}, kRadius));
  CHECK_FALSE(sv::EventReaches(frag, 12, {100 + 1500, 1500, 0}, kRadius));  // 2121 away
}

TEST_CASE("a death without killer names nobody else", "[event_scope]") {
  const sv::FrameEvent death =
      sv::ScopedEvent({/*killer=*/proto::kNoPlayer, /*victim=*/5, 3}, {0, 0, 0});
  CHECK(sv::EventReaches(death, 5, {5000, 0, 0}, 100));
  CHECK_FALSE(sv::EventReaches(death, -1, {5000, 0, 0}, 100));  // -1 is "none", not a player
  CHECK_FALSE(sv::EventReaches(death, 4, {5000, 0, 0}, 100));
}

TEST_CASE("an event for everyone reaches every client", "[event_scope]") {
  sv::FrameEvent chat;
  chat.bytes = {0x88};
  CHECK(sv::EventReaches(chat, 1, {1e6f, 1e6f, 0}, 1));
}
