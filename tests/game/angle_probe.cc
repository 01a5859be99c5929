// game_angle_probe: what game_libm_test runs twice, once with the host's default libm and once
// with glibc told to ignore FMA (GLIBC_TUNABLES), and compares. It prints two lines:
//   libm 0x418a3adb: SIN COS   libm's own sin and cos of one float (17.278738 rad) on which
//                              Debian 12's sincosf variants differ: whether the two runs used
//                              two different variants at all
//   state HASH                 World::StateHash after a player walked on a floor for 32 ticks,
//                              facing angles whose radians are such floats
// Exit 0, or 1 if a command was refused.
//
// With --sweep it prints instead, for each block of 2^20 float bit patterns, a hash of sincosf
// over the block's finite floats (4096 lines, about a minute): diffing the output of two runs
// names the blocks where the variants differ (docs/game.md, "Determinism").
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>

#include "server/game/game_test_util.h"
#include "server/game/world.h"

namespace {

uint32_t Bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

void Sweep() {
  for (uint64_t block = 0; block < 4096; ++block) {
    uint64_t h = 1469598103934665603ull;  // FNV-1a over the results' bits
    for (uint64_t u = block << 20; u < (block + 1) << 20; ++u) {
      const uint32_t in = static_cast<uint32_t>(u);
      float x;
      std::memcpy(&x, &in, sizeof x);
      if (!std::isfinite(x)) continue;
      for (uint32_t b : {Bits(std::sin(x)), Bits(std::cos(x))}) h = (h ^ b) * 1099511628211ull;
    }
    std::printf("block %4" PRIu64 " (from %08" PRIx64 ") %016" PRIx64 "\n", block, block << 20, h);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "--sweep") {
    Sweep();
    return 0;
  }
  volatile uint32_t probe_bits = 0x418a3adb;  // volatile: computed at run time, by the libm
  const uint32_t bits = probe_bits;
  float x;
  std::memcpy(&x, &bits, sizeof x);
  std::printf("libm 0x418a3adb: %08" PRIx32 " %08" PRIx32 "\n", Bits(std::sin(x)), Bits(std::cos(x)));

  game::testing::TestWorld t =
      game::testing::MakeWorld(game::testing::TestMap().Floor(4096).Spawn({0, 0, 24}).Finish());
  game::World* w = t.world.get();
  const game::EntityId player = game::testing::JoinOrDie(w, "walker");  // standing at the spawn
  // Degrees whose product with the game's degrees-to-radians factor is a float on which the
  // variants differ (17.278738, 17.2787399, 23.5580311, 32.7297783 rad), of either sign, as yaw
  // and as pitch and roll.
  const float degrees[] = {989.998718f, 989.99884f, 1349.77576f, 1875.27808f};
  uint32_t sequence = 0;
  for (int tick = 0; tick < 32; ++tick) {
    w->RunWorldPhase();
    const float a = degrees[tick % 4] * (tick % 8 < 4 ? 1.0f : -1.0f);
    game::UserCmd cmd;
    cmd.sequence = ++sequence;
    cmd.duration_ms = 33;
    cmd.view_angles = tick % 16 < 8 ? core::Vec3{0, a, 0} : core::Vec3{a, 30.0f, a};
    cmd.forward_move = 400;
    cmd.side_move = tick % 3 == 0 ? 200 : 0;
    if (!w->ExecuteCommand(player, cmd).ok()) return 1;
  }
  std::printf("state %016" PRIx64 "\n", w->StateHash());
  return 0;
}
