#!/usr/bin/python3
"""Recovery time against checkpoint interval and against players, per checkpoint algorithm, with
serial and parallel replay: the data of the checkpoint paper's Figure 2(c) recovery panel for
Aftershock (plot.py recovery draws it).

For every point (algorithm, checkpoint interval, players) it starts the real server on a fresh
data dir (--checkpoint, --checkpoint-interval-ms, sync durability) with aftershock-bots, kills
the server with SIGKILL after --duration s of play (bots still playing: a crash under load), then
recovers that data dir read-only with aftershock-bench-recovery at each --replay-threads count
(--runs each, alternating) and writes one CSV row per (point, threads) with the medians:
restore_ms, replay_ms, recovery_ms = restore_ms + replay_ms, and ticks and commands replayed. The
kill falls at a random moment of the checkpoint cycle, so the replayed ticks vary from point to
point (they are in the table); every run of one point must recover the same state (the bench
exits 1 otherwise).

  tools/experiments/recovery_curve.py --out out/recovery_curve \\
      --intervals 500,1000,2000,4000 --players 32,64,128,256 --at-players 128 --at-interval 2000
  tools/experiments/plot.py recovery out/recovery_curve/recovery.csv --out out/figs
"""
import argparse
import csv
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import experiment  # noqa: E402  (its process helpers: _spawn, _wait_server_up, _kill_children)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RUN_LINE = re.compile(r"^run (\d+) threads (\d+): ticks (\d+) commands (\d+) restore_ms ([\d.]+) "
                      r"replay_ms ([\d.]+) speed_x_realtime ([\d.]+) state_hash ([0-9a-f]+) cpu_ms ([\d.]+)"
                      r"(?: handoff_ns ([\d.]+))?")
FIELDS = ["algorithm", "interval_ms", "players", "replay_threads", "ticks_replayed", "commands_replayed",
          "restore_ms", "replay_ms", "recovery_ms", "speed_x_realtime", "state_hash", "handoff_ns", "status"]


def record(args, algorithm, interval_ms, players, index):
    """Plays one point and kills the server with SIGKILL while the bots still play (a crash under
    load, as tools/crashtest.sh does); returns its data dir (or None) and a status."""
    out = os.path.join(args.out, f"{algorithm}_i{interval_ms}_p{players}")
    data_dir = os.path.join(out, "data")
    if os.path.isdir(data_dir):
        shutil.rmtree(data_dir)
    os.makedirs(out, exist_ok=True)
    port = args.port + 20 * index
    server = experiment._spawn(
        [os.path.join(args.bin, "aftershock-server"), "--map", args.map, "--port", str(port),
         "--bind", "127.0.0.1", "--threads", str(args.threads), "--max-players", str(players),
         "--new-identity-burst", str(max(players, 256)), "--max-records", str(args.max_records),
         "--data-dir", data_dir, "--checkpoint", algorithm, "--checkpoint-interval-ms", str(interval_ms),
         "--durability", "sync", "--log-level", "warn"], os.path.join(out, "server.log"))
    if not experiment._wait_server_up(port, 120):
        experiment._kill_children()
        return None, "server did not come up in 120 s"
    bots = experiment._spawn(
        [os.path.join(args.bin, "aftershock-bots"), "--server", f"127.0.0.1:{port}", "--bots", str(players),
         "--duration", str(args.duration + 30), "--ramp", "2", "--seed", str(index + 1), "--quiet",
         "--identity-prefix", f"rc{index}", "--out", os.path.join(out, "bots.json")],
        os.path.join(out, "bots.log"))
    time.sleep(2 + args.duration)
    status = "ok" if server.poll() is None else f"server exited {server.returncode} before the kill"
    server.send_signal(signal.SIGKILL)
    server.wait()
    bots.terminate()
    experiment._kill_children()
    return (data_dir if status == "ok" else None), status


def bench(args, data_dir):
    """aftershock-bench-recovery's runs on data_dir: {threads: [parsed run, ...]} or an error."""
    cmd = [os.path.join(args.bin, "aftershock-bench-recovery"), "--data-dir", data_dir, "--map", args.map,
           "--replay-threads", args.replay_threads, "--runs", str(args.runs),
           "--ceiling", "off"]  # the curve times recovery; the host's ceiling is not on it
    r = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        return None, f"bench failed ({r.returncode}): {r.stdout[-300:]}"
    runs = {}
    for line in r.stdout.splitlines():
        m = RUN_LINE.match(line)
        if m:
            runs.setdefault(int(m.group(2)), []).append(m.groups())
    return runs, "ok"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--algorithms", default="cou,pingpong,naive")
    ap.add_argument("--intervals", default="500,1000,2000,4000", help="checkpoint intervals (ms) at --at-players")
    ap.add_argument("--players", default="32,64,128,256", help="player counts at --at-interval")
    ap.add_argument("--at-players", type=int, default=128)
    ap.add_argument("--at-interval", type=int, default=2000)
    ap.add_argument("--duration", type=int, default=12, help="seconds of play per point")
    ap.add_argument("--threads", type=int, default=2, help="server worker threads while recording")
    ap.add_argument("--replay-threads", default="1,2", help="recovery replay thread counts")
    ap.add_argument("--runs", type=int, default=3, help="recoveries per thread count (medians)")
    ap.add_argument("--map", default="maps/dm_arena.map")
    ap.add_argument("--max-records", type=int, default=2000)
    ap.add_argument("--port", type=int, default=30000)
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"))
    ap.add_argument("--out", default=os.path.join(ROOT, "out", "recovery_curve"))
    args = ap.parse_args()
    for exe in ("aftershock-server", "aftershock-bots", "aftershock-bench-recovery"):
        if not os.path.exists(os.path.join(args.bin, exe)):
            ap.error(f"{exe} not found in {args.bin}; build first (cmake --build build)")
    os.makedirs(args.out, exist_ok=True)
    points = []
    for a in args.algorithms.split(","):
        for i in (int(x) for x in args.intervals.split(",")):
            points.append((a, i, args.at_players))
        for p in (int(x) for x in args.players.split(",")):
            if (a, args.at_interval, p) not in points:
                points.append((a, args.at_interval, p))
    path = os.path.join(args.out, "recovery.csv")
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS)
        w.writeheader()
        for index, (algorithm, interval, players) in enumerate(points):
            print(f"[{index + 1}/{len(points)}] {algorithm} interval {interval} ms, {players} players",
                  flush=True)
            data_dir, status = record(args, algorithm, interval, players, index)
            runs = None
            if data_dir:
                runs, status = bench(args, data_dir)
            if not runs:
                w.writerow({"algorithm": algorithm, "interval_ms": interval, "players": players, "status": status})
                print("  " + status, flush=True)
                continue
            for threads, rs in sorted(runs.items()):
                restore = statistics.median(float(r[4]) for r in rs)
                replay = statistics.median(float(r[5]) for r in rs)
                row = {"algorithm": algorithm, "interval_ms": interval, "players": players,
                       "replay_threads": threads, "ticks_replayed": rs[0][2], "commands_replayed": rs[0][3],
                       "restore_ms": f"{restore:.2f}", "replay_ms": f"{replay:.2f}",
                       "recovery_ms": f"{restore + replay:.2f}",
                       "speed_x_realtime": f"{statistics.median(float(r[6]) for r in rs):.0f}",
                       "state_hash": rs[0][7],
                       # the cross-core round trip before the runs: several times the usual one
                       # means the VM's cores were far apart, and the parallel figure is not
                       # comparable (docs/recovery-measurements.md)
                       "handoff_ns": (f"{statistics.median(float(r[9]) for r in rs):.0f}"
                                      if all(r[9] for r in rs) else ""),  # older binaries: none
                       "status": "ok"}
                w.writerow(row)
                print(f"  {threads} threads: {row['ticks_replayed']} ticks, restore {restore:.1f} ms, "
                      f"replay {replay:.1f} ms", flush=True)
            f.flush()
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
