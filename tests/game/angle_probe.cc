// game_angle_probe: a world played with angles on which glibc's sincosf variants disagree, for
// game_libm_test to run under both variants and compare.
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

// Prints, for each block of 2^20 float bit patterns, a hash of sin and cos over the block's
// finite floats (4096 lines, under a minute): the diff of two runs names the blocks where the
// variants differ (docs/game.md, "Determinism").
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

// Without arguments it prints three lines and exits 0 (1 if a command was refused or the
// teleporter was missed):
//   libm 0x418a3adb: SIN COS   the libm's own sin and cos of 17.278738 rad, where Debian 12's
//                              variants differ: whether two runs used two variants at all
//   turns HASH                 World::StateHash of a world where a player walked on a floor
//                              facing such angles (World::ExecuteCommand takes any finite angle;
//                              the wire admits +-360 yaw, +-90 pitch and roll)
//   teleport HASH              of another, right after a player walked into a teleporter whose
//                              destination faces 989.998718 degrees (17.278738 rad; the map
//                              loader accepts angles up to +-1e6)
// With --sweep, Sweep's output instead.
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

  // Degrees whose product with the game's degrees-to-radians factor is a float on which the
  // variants differ (17.278738, 17.2787399, 23.5580311, 32.7297783 rad).
  const float degrees[] = {989.998718f, 989.99884f, 1349.77576f, 1875.27808f};
  for (const bool teleporter : {false, true}) {
    game::testing::TestMap map;
    map.Floor(4096).Spawn({0, 0, 24});
    if (teleporter) map.Teleporter({64, -32, 0}, {128, 32, 64}, {-2000, 0, 24}, degrees[0]);
    game::testing::TestWorld t = game::testing::MakeWorld(map.Finish());
    game::World* w = t.world.get();
    const game::EntityId player = game::testing::JoinOrDie(w, "walker");  // at the spawn
    for (uint32_t tick = 0; tick < 32; ++tick) {
      w->RunWorldPhase();
      game::UserCmd cmd;
      cmd.sequence = tick + 1;
      cmd.duration_ms = 33;
      cmd.forward_move = 400;
      if (!teleporter) {  // each angle of either sign, as yaw, then as pitch and roll
        const float a = degrees[tick % 4] * (tick % 8 < 4 ? 1.0f : -1.0f);
        cmd.view_angles = tick < 16 ? core::Vec3{0, a, 0} : core::Vec3{a, 30.0f, a};
        cmd.side_move = tick % 3 == 0 ? 200 : 0;
      }
      if (!w->ExecuteCommand(player, cmd).ok()) return 1;
      // Its exit velocity is the destination's forward: hashed before anything moves it on.
      if (teleporter && w->Get(player).origin.x < -1000) break;
    }
    if (teleporter && w->Get(player).origin.x >= -1000) return 1;
    std::printf("%s %016" PRIx64 "\n", teleporter ? "teleport" : "turns", w->StateHash());
  }
  return 0;
}
