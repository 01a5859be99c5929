// aftershock-bench-interest: times the server's snapshot interest (sv::InterestIndex) and the
// whole snapshot a reply carries (sv::BuildSnapshot + proto::SnapshotEncoder, interest included)
// per player-frame on one thread. N scripted players spread over the map for --warmup simulated
// seconds (armed, shooting: rockets and explosions count as candidates). Then every frame the
// world advances one tick (untimed), the index is built (as each worker does once per reply
// phase; its cost is shared out per player), every player's interest is selected, and every
// player's snapshot is built and encoded as a delta against the previous frame's (the client
// acknowledged it). The first 32 frames are untimed (the encoders' rings fill, as in a server's
// first second); --frames frames after them are timed. Prints median and p99 per player-frame in microseconds, the build's share,
// the entities kept and the snapshot bytes; with --decode also the client's side: the median
// time a proto::SnapshotDecoder (the bots' decoder) takes for each of those snapshots, decoded
// after the frame's encodes (keeping the packets costs the encodes a little cache).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <cxxopts.hpp>

#include "maps/map_loader.h"
#include "server/game/cmd_script.h"
#include "server/game/game_test_util.h"
#include "server/protocol/protocol_format.h"
#include "server/protocol/snapshot_codec.h"
#include "server/sv/interest.h"
#include "server/sv/snapshot_builder.h"
#include "server/vis/pvs_cache.h"

namespace {

std::vector<std::string> Split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) out.push_back(item);
  return out;
}

struct Timing {
  double median_us = 0, p99_us = 0, build_us_per_player = 0, mean_kept = 0;
  double snapshot_median_us = 0, snapshot_p99_us = 0, mean_bytes = 0;
  double decode_median_us = 0;
};

double Percentile(std::vector<double>* v, double q) {
  std::sort(v->begin(), v->end());
  return (*v)[static_cast<size_t>(static_cast<double>(v->size() - 1) * q)];
}

double MicrosSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
}

Timing TimeInterest(game::World* world, std::vector<game::testing::ScriptedPlayer>* bots,
                    const vis::Pvs& pvs, int frames, float radius, bool decode) {
  const size_t players = bots->size();
  std::vector<double> us, snapshot_us, decode_us;
  us.reserve(players * static_cast<size_t>(frames));
  snapshot_us.reserve(us.capacity());
  std::vector<game::EntityId> out;
  double kept = 0, build_us = 0, bytes = 0;
  sv::InterestIndex index;
  sv::ShownStates shown;
  std::vector<proto::SnapshotEncoder> encoders(players);
  std::vector<proto::SnapshotDecoder> decoders(players);
  std::vector<std::vector<uint8_t>> packets(players);
  proto::Snapshot decoded;
  std::vector<uint32_t> acked(players, 0);
  proto::Snapshot snap;
  proto::EncodedSnapshot encoded;
  // The first kSnapshotRing frames are untimed: each encoder's ring fills (its buffers are
  // allocated once, as in a server's first second) and the interest hints settle.
  const int warm = static_cast<int>(proto::kSnapshotRing);
  for (int f = 0; f < warm + frames; ++f) {
    const bool timed = f >= warm;
    world->RunWorldPhase();
    for (auto& b : *bots) (void)world->ExecuteCommand(b.player(), b.Next(*world));
    const auto b0 = std::chrono::steady_clock::now();
    index.Build(*world, pvs);
    shown.Build(*world);
    if (timed) build_us += MicrosSince(b0);
    for (const auto& b : *bots) {
      const auto t0 = std::chrono::steady_clock::now();
      index.Select(*world, b.player(), radius, proto::kMaxSnapshotEntities, &out);  // as BuildSnapshot asks
      if (!timed) continue;
      us.push_back(MicrosSince(t0));
      kept += static_cast<double>(out.size());
    }
    const uint32_t snapshot_id = static_cast<uint32_t>(f + 1);
    for (size_t i = 0; i < players; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      sv::BuildSnapshot(*world, index, shown, (*bots)[i].player(), radius, snapshot_id, &out, &snap);
      const core::Status s = encoders[i].Encode(snap, acked[i], &encoded);
      if (timed) snapshot_us.push_back(MicrosSince(t0));
      if (!s.ok()) {
        std::fprintf(stderr, "encode: %s\n", s.ToString().c_str());
        std::exit(1);
      }
      if (decode) {
        packets[i].assign(encoded.bytes.begin(), encoded.bytes.end());
      } else {
        acked[i] = snapshot_id;
      }
      if (timed) bytes += static_cast<double>(encoded.bytes.size());
    }
    // The clients' side, after all the encodes (a bot thread decodes a frame's snapshots in a
    // row too): each decoder takes its packet, and what it acknowledges is the next baseline.
    for (size_t i = 0; decode && i < players; ++i) {
      const auto d0 = std::chrono::steady_clock::now();
      const core::Status d = decoders[i].Decode(packets[i], &decoded);
      if (timed) decode_us.push_back(MicrosSince(d0));
      if (!d.ok()) {
        std::fprintf(stderr, "decode: %s\n", d.ToString().c_str());
        std::exit(1);
      }
      acked[i] = decoders[i].ack_id();
    }
  }
  const double per_build = build_us / frames / static_cast<double>(players);
  const double n = static_cast<double>(us.size());
  return {Percentile(&us, 0.5) + per_build, Percentile(&us, 0.99) + per_build, per_build, kept / n,
          Percentile(&snapshot_us, 0.5) + per_build, Percentile(&snapshot_us, 0.99) + per_build,
          bytes / n, decode ? Percentile(&decode_us, 0.5) : 0.0};
}

}  // namespace

int main(int argc, char** argv) {
  cxxopts::Options options("aftershock-bench-interest",
                           "Cost of snapshot interest (PVS cell test + distance + partial selection) "
                           "per player-frame, on one thread.");
  options.add_options()
      ("maps", "comma-separated .map files", cxxopts::value<std::string>()->default_value(
          "maps/dm_arena.map,maps/metropolis.map,maps/librequake/lqdm6.map"))
      ("players", "comma-separated player counts", cxxopts::value<std::string>()->default_value("256,1000,2000"))
      ("frames", "frames timed per run", cxxopts::value<int>()->default_value("20"))
      ("warmup", "simulated seconds of scripted play before timing", cxxopts::value<int>()->default_value("3"))
      ("radius", "interest radius, units", cxxopts::value<float>()->default_value("2048"))
      ("decode", "also time the clients' decoding of every snapshot (decode_med_us)")
      ("vis-cache", "PVS cache directory (\"\": build every time)", cxxopts::value<std::string>()->default_value(""))
      ("h,help", "print usage");
  cxxopts::ParseResult args;
  try {
    args = options.parse(argc, argv);
  } catch (const cxxopts::exceptions::exception& e) {
    std::cerr << e.what() << "\n" << options.help() << "\n";
    return 2;
  }
  if (args.count("help")) {
    std::cout << options.help() << "\n";
    return 0;
  }
  std::vector<int> counts;
  try {
    for (const std::string& c : Split(args["players"].as<std::string>())) counts.push_back(std::stoi(c));
  } catch (const std::exception& e) {
    std::cerr << "bad --players: " << e.what() << "\n";
    return 2;
  }
  const int frames = args["frames"].as<int>(), warmup_ticks = args["warmup"].as<int>() * 30;
  const float radius = args["radius"].as<float>();
  if (frames < 1 || frames > 10000 || warmup_ticks < 0 || !(radius > 0 && radius <= 65536)) {
    std::cerr << "--frames 1..10000, --warmup >= 0, --radius in (0, 65536]\n";
    return 2;
  }
  std::printf("%-34s %7s %10s %10s %10s %8s %12s %12s %8s %13s\n", "map", "players", "median_us",
              "p99_us", "build_us", "kept", "snap_med_us", "snap_p99_us", "bytes", "decode_med_us");
  for (const std::string& path : Split(args["maps"].as<std::string>())) {
    maps::Map map;
    core::Status s = maps::LoadMap(path, &map);
    if (!s.ok()) {
      std::fprintf(stderr, "%s\n", s.ToString().c_str());
      return 1;
    }
    auto collision = collision::CollisionWorld::Build(map);
    vis::PvsParams params;
    params.range_units = radius;
    vis::Pvs pvs;
    vis::PvsCacheReport report;
    s = vis::LoadOrBuildPvs(map, *collision, params, args["vis-cache"].as<std::string>(), &pvs, &report);
    if (!s.ok()) {
      std::fprintf(stderr, "%s\n", s.ToString().c_str());
      return 1;
    }
    for (int n : counts) {
      if (n < 1 || n > 4096) {
        std::fprintf(stderr, "player count %d outside 1..4096\n", n);
        return 2;
      }
      game::WorldConfig config;
      config.max_players = n;
      std::unique_ptr<game::World> world;
      s = game::World::Create(map, *collision, config, &world);
      if (!s.ok()) {
        std::fprintf(stderr, "%s\n", s.ToString().c_str());
        return 1;
      }
      std::vector<game::testing::ScriptedPlayer> bots;
      for (int i = 0; i < n; ++i) {
        const game::JoinResult j = world->Join("bot" + std::to_string(i), 1 + i);
        if (!j.status.ok()) return 1;
        bots.emplace_back(j.player, 1 + i, game::testing::ScriptOptions{});
      }
      for (int tick = 0; tick < warmup_ticks; ++tick) {
        world->RunWorldPhase();
        for (auto& b : bots) (void)world->ExecuteCommand(b.player(), b.Next(*world));
      }
      const Timing t = TimeInterest(world.get(), &bots, pvs, frames, radius, args.count("decode") > 0);
      std::printf("%-34s %7d %10.2f %10.2f %10.3f %8.1f %12.2f %12.2f %8.0f %13.2f\n", path.c_str(), n,
                  t.median_us, t.p99_us, t.build_us_per_player, t.mean_kept, t.snapshot_median_us,
                  t.snapshot_p99_us, t.mean_bytes, t.decode_median_us);
      std::fflush(stdout);
    }
  }
  return 0;
}
