// game_angle_probe: a world played with angles on which glibc's sincosf variants disagree, for
// game_libm_test to run under both variants and compare.
#include <bit>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "server/core/hash.h"
#include "server/game/game_test_util.h"
#include "server/game/world.h"

namespace {

// Degrees whose product with the game's degrees-to-radians factor is a float on which the
// variants differ (17.278738, 17.2787399, 23.5580311, 32.7297783 rad).
constexpr float kDegrees[] = {989.998718f, 989.99884f, 1349.77576f, 1875.27808f};

// Calls `visit(bits, x)` for each finite float x of block `block` (2^20 bit patterns).
template <typename Visit>
void ForEachFiniteFloat(uint64_t block, Visit visit) {
  for (uint64_t u = block << 20; u < (block + 1) << 20; ++u) {
    const uint32_t bits = static_cast<uint32_t>(u);
    const float x = std::bit_cast<float>(bits);
    if (std::isfinite(x)) visit(bits, x);
  }
}

// Prints, for each block of 2^20 float bit patterns, a hash of sin and cos over the block's
// finite floats (4096 lines, under a minute): the diff of two runs names the blocks where the
// variants differ (docs/game.md, "Determinism").
void Sweep() {
  for (uint64_t block = 0; block < 4096; ++block) {
    uint64_t h = 0;
    ForEachFiniteFloat(block, [&h](uint32_t, float x) {
      h = core::Mix64(h ^ std::bit_cast<uint32_t>(std::sin(x)));
      h = core::Mix64(h ^ std::bit_cast<uint32_t>(std::cos(x)));
    });
    std::printf("block %4" PRIu64 " (from %08" PRIx64 ") %016" PRIx64 "\n", block, block << 20, h);
  }
}

// Prints every finite float of one block with its sin and cos (bits in hex), one per line: the
// diff of two runs names the inputs where the variants differ.
void DumpBlock(uint64_t block) {
  ForEachFiniteFloat(block, [](uint32_t bits, float x) {
    std::printf("%08" PRIx32 " %.9g %08" PRIx32 " %08" PRIx32 "\n", bits, x,
                std::bit_cast<uint32_t>(std::sin(x)), std::bit_cast<uint32_t>(std::cos(x)));
  });
}

game::UserCmd Command(uint32_t tick) {
  game::UserCmd cmd;
  cmd.sequence = tick + 1;
  cmd.duration_ms = 33;
  cmd.forward_move = 400;
  return cmd;
}

// A player on a floor for 32 ticks facing kDegrees, each of either sign, as yaw, then as pitch and
// roll; the world's hash, or 0 if a command was refused.
uint64_t PlayTurns() {
  game::testing::TestWorld t =
      game::testing::MakeWorld(game::testing::TestMap().Floor(4096).Spawn({0, 0, 24}).Finish());
  const game::EntityId player = game::testing::JoinOrDie(t.world.get(), "walker");  // at the spawn
  for (uint32_t tick = 0; tick < 32; ++tick) {
    t.world->RunWorldPhase();
    game::UserCmd cmd = Command(tick);
    const float a = kDegrees[tick % 4] * (tick % 8 < 4 ? 1.0f : -1.0f);
    cmd.view_angles = tick < 16 ? core::Vec3{0, a, 0} : core::Vec3{a, 30.0f, a};
    cmd.side_move = tick % 3 == 0 ? 200 : 0;
    if (!t.world->ExecuteCommand(player, cmd).ok()) return 0;
  }
  return t.world->StateHash();
}

// A player walking east into a teleporter whose destination faces kDegrees[0]; the world's hash
// right after it (the exit velocity is the destination's forward, before anything moves it on),
// or 0 if a command was refused or the teleporter was missed.
uint64_t PlayTeleport() {
  game::testing::TestMap map;
  map.Floor(4096).Spawn({0, 0, 24}).Teleporter({64, -32, 0}, {128, 32, 64}, {-2000, 0, 24}, kDegrees[0]);
  game::testing::TestWorld t = game::testing::MakeWorld(map.Finish());
  const game::EntityId player = game::testing::JoinOrDie(t.world.get(), "walker");  // at the spawn
  for (uint32_t tick = 0; tick < 32; ++tick) {
    t.world->RunWorldPhase();
    if (!t.world->ExecuteCommand(player, Command(tick)).ok()) return 0;
    if (t.world->Get(player).origin.x < -1000) return t.world->StateHash();
  }
  return 0;
}

}  // namespace

// Without arguments it prints three lines and exits 0 (1 if a world could not be played):
//   libm 0x418a3adb: SIN COS   the libm's own sin and cos of 17.278738 rad, where Debian 12's
//                              variants differ: whether two runs used two variants at all
//   turns HASH                 PlayTurns (World::ExecuteCommand takes any finite angle; the wire
//                              admits +-360 yaw, +-90 pitch and roll)
//   teleport HASH              PlayTeleport (the map loader accepts angles up to +-1e6)
// With --sweep, Sweep's output instead; with --block N, DumpBlock(N)'s.
int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "--sweep") {
    Sweep();
    return 0;
  }
  if (mode == "--block" && argc > 2) {
    DumpBlock(std::strtoull(argv[2], nullptr, 0) % 4096);
    return 0;
  }
  volatile uint32_t probe_bits = 0x418a3adb;  // volatile: computed at run time, by the libm
  const float x = std::bit_cast<float>(static_cast<uint32_t>(probe_bits));
  std::printf("libm 0x418a3adb: %08" PRIx32 " %08" PRIx32 "\n", std::bit_cast<uint32_t>(std::sin(x)),
              std::bit_cast<uint32_t>(std::cos(x)));
  const uint64_t turns = PlayTurns(), teleport = PlayTeleport();
  if (turns == 0 || teleport == 0) return 1;
  std::printf("turns %016" PRIx64 "\nteleport %016" PRIx64 "\n", turns, teleport);
  return 0;
}
