#!/usr/bin/python3
"""Records one trace with the real server and bots, then replays it across a grid and writes a CSV.

1. aftershock-server (--threads 2 --locking areanode-opt, --checkpoint none so the log keeps
   every tick, --hash-log so the replay can compare hashes) plays --players bots for --duration
   seconds into OUT/trace (skipped with --trace DIR: replay an existing data directory).
2. aftershock-replay runs the trace at every --threads x --locking x --assign point (sequential
   only at 1 thread), --reps times each, and OUT/replay.csv gets one row per run: the replay's
   stats JSON flattened ('replay.lock.shared_leaves_pct', 'replay.speed_x_realtime', ...), plus
   threads, locking, assign, rep, nproc (this machine's cores) and loadavg_1m (the 1-minute load
   before the run).

  tools/experiments/replay_sweep.py --players 256 --duration 40 --threads 1,2,4,8 \\
      --locking sequential,global,areanode,areanode-opt --out out/replay
  tools/experiments/plot.py replay out/replay/replay.csv --out out/replay/plots
  tools/experiments/replay_sweep.py --players 512 --threads 2,4,8 --locking areanode-opt \
      --assign block,round-robin,locality --out out/replay_assign   # assignment policies' conflicts

Every child runs in its own process group and is killed on any exit path (experiment.py's).
"""
import argparse
import csv
import json
import os
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import experiment as exp  # noqa: E402  (the child handling and JSON flattening of the sweeps)

SCHEMES = ("sequential", "global", "areanode", "areanode-opt")


def record(args):
    trace = os.path.join(args.out, "trace")
    if os.path.isdir(trace):
        shutil.rmtree(trace)
    os.makedirs(args.out, exist_ok=True)
    served = args.duration + args.ramp + args.warmup + 3
    server_cmd = [os.path.join(args.bin, "aftershock-server"), "--map", args.map, "--port", str(args.port),
                  "--threads", "2", "--locking", "areanode-opt", "--max-players", str(args.players),
                  "--new-identity-burst", str(max(args.players, 256)), "--duration", str(served),
                  "--data-dir", trace, "--checkpoint", "none", "--hash-log",
                  "--stats-out", os.path.join(args.out, "record_server.json")]
    bots_cmd = [os.path.join(args.bin, "aftershock-bots"), "--server", f"127.0.0.1:{args.port}",
                "--bots", str(args.players), "--duration", str(args.duration + args.ramp),
                "--ramp", str(args.ramp), "--seed", str(args.seed), "--identity-prefix", "trace",
                "--behavior", args.behavior,
                "--out", os.path.join(args.out, "record_bots.json")]
    server = exp._spawn(server_cmd, os.path.join(args.out, "record_server.log"))
    if not exp._wait_server_up(args.port, 120):
        exp._kill_children()
        sys.exit("the recording server did not come up in 120 s (see record_server.log)")
    time.sleep(args.warmup)
    bots = exp._spawn(bots_cmd, os.path.join(args.out, "record_bots.log"))
    for p, name in ((bots, "bots"), (server, "server")):
        try:
            rc = p.wait(timeout=served + 60)
        except subprocess.TimeoutExpired:
            exp._kill_children()
            sys.exit(f"the recording {name} timed out")
        if rc != 0:
            exp._kill_children()
            sys.exit(f"the recording {name} exited {rc} (see record_{name}.log)")
    exp._kill_children()
    return trace


def replay(args, trace, threads, locking, assign, rep):
    runs = os.path.join(args.out, "runs")
    os.makedirs(runs, exist_ok=True)
    stats = os.path.join(runs, f"t{threads}_{locking}_{assign}_r{rep}.json")
    if os.path.exists(stats):
        os.remove(stats)
    cmd = [os.path.join(args.bin, "aftershock-replay"), "--data-dir", trace, "--map", args.map,
           "--threads", str(threads), "--locking", locking, "--assign", assign,
           "--stats-out", stats] + args.replay_arg
    load_before = round(os.getloadavg()[0], 2)  # the machine's other work: speed is only comparable at equal load
    p = exp._spawn(cmd, stats[:-5] + ".log")
    rc = p.wait()
    exp._kill_children()
    row = {"threads": threads, "locking": locking, "assign": assign, "rep": rep, "nproc": os.cpu_count(),
           "loadavg_1m": load_before, "status": "ok" if rc == 0 else f"replay exited {rc}"}
    try:
        with open(stats) as f:
            flat = {}
            exp._flatten("", json.load(f), flat)
        row.update({f"replay.{k}": v for k, v in flat.items()})
    except (OSError, ValueError) as e:
        row["status"] += f"; no stats ({e.__class__.__name__})"
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--players", type=int, default=256, help="bots in the recorded game")
    ap.add_argument("--duration", type=int, default=40, help="seconds the bots play")
    ap.add_argument("--ramp", type=int, default=5, help="seconds over which the bots join")
    ap.add_argument("--warmup", type=float, default=1.0)
    ap.add_argument("--map", default="maps/dm_arena.map")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--port", type=int, default=29500)
    ap.add_argument("--trace", default="", help="replay this data directory instead of recording one")
    ap.add_argument("--threads", default="1,2,4,8", help="comma list of replay thread counts")
    ap.add_argument("--locking", default=",".join(SCHEMES), help="comma list of schemes")
    ap.add_argument("--assign", default="block", help="comma list: block,round-robin,locality")
    ap.add_argument("--behavior", default="mixed", help="the recording bots' --behavior")
    ap.add_argument("--reps", type=int, default=1, help="replays per point")
    ap.add_argument("--replay-arg", action="append", default=[], help="extra aftershock-replay flag")
    ap.add_argument("--bin", default=os.path.join(exp.ROOT, "build", "bin"))
    ap.add_argument("--out", default=os.path.join(exp.ROOT, "out", "replay"))
    args = ap.parse_args()
    lockings = exp._csv_list(args.locking)
    for lk in lockings:
        if lk not in SCHEMES:
            ap.error(f"unknown locking scheme '{lk}'")
    try:
        threads = exp._csv_list(args.threads, int)
    except ValueError as e:
        ap.error(str(e))
    for exe in ("aftershock-server", "aftershock-bots", "aftershock-replay"):
        if not os.access(os.path.join(args.bin, exe), os.X_OK):
            ap.error(f"{exe} not found in {args.bin}; build first (cmake --build build)")

    def on_signal(signum, _frame):
        exp._kill_children()
        sys.exit(128 + signum)

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)

    os.makedirs(args.out, exist_ok=True)
    trace = args.trace or record(args)
    assigns = exp._csv_list(args.assign)
    for a in assigns:
        if a not in ("block", "round-robin", "locality"):
            ap.error(f"unknown assignment '{a}'")
    grid = sorted({(1 if lk == "sequential" else t, lk, a) for t in threads for lk in lockings for a in assigns})
    rows = []
    try:
        for rep in range(args.reps):
            for t, lk, a in grid:
                row = replay(args, trace, t, lk, a, rep)
                rows.append(row)
                print(f"threads={t} locking={lk} assign={a} rep={rep}: {row['status']} "
                      f"speed_x_realtime={row.get('replay.speed_x_realtime', '?')} "
                      f"shared_leaves_pct={row.get('replay.lock.shared_leaves_pct', '?')} "
                      f"hash_match={row.get('replay.state_hash_match', '?')}", flush=True)
    finally:
        exp._kill_children()
    keys = []
    for r in rows:
        keys += [k for k in r if k not in keys]
    path = os.path.join(args.out, "replay.csv")
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        w.writerows(rows)
    print(f"wrote {path} ({len(rows)} replays of {trace})")
    return 0 if all(r["status"] == "ok" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
