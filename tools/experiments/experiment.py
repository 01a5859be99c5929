#!/usr/bin/python3
"""Sweeps a grid of server configurations under bot load and writes one table (CSV and JSON).

For every point of players x threads x locking x frame mode x map x assignment it starts aftershock-server with
--duration and --stats-out, runs aftershock-bots against it, waits for both, and joins the two
JSON summaries into one row. Every child runs in its own process group and is killed on any exit
path (including Ctrl-C), so no process is left behind. The flags are checked before any point
runs; a point whose server exits before serving ends at once, its row saying so; results.csv and
results.json are rewritten after every point, so an interrupted sweep keeps its finished points.
An --out that holds an earlier sweep's table is overwritten. Its recorded games are not: with
--durable, a point whose data directory an earlier run left in --out is refused before any point
runs, unless --replace-data (a 5-minute log is a trace that replays and benchmarks keep using).

Example:
  tools/experiments/experiment.py --players 32,64,128 --threads 1,2 --locking areanode,areanode-opt \
      --duration 10 --out out/sweep
"""
import argparse
import csv
import itertools
import json
import math
import os
import shutil
import signal
import socket
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_children = []


def _kill_children():
    for p in _children:
        if p.poll() is None:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    for p in _children:
        try:
            p.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
    _children.clear()


def _spawn(cmd, log_path):
    log = open(log_path, "w")
    p = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT, start_new_session=True)
    _children.append(p)
    return p


def _wait_server_up(port, deadline_s, server):
    """Polls the lobby with the connectionless status query until it answers (a first start on a
    map builds the map's PVS before opening the ports). True if it answered before the deadline;
    False at once if the server process has exited (a bad flag or map: its log says why)."""
    end = time.time() + deadline_s
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.settimeout(0.2)
        while time.time() < end:
            if server.poll() is not None:
                return False
            try:
                s.sendto(b"\xff\xff\xff\xffstatus", ("127.0.0.1", port))
                if s.recv(4096).startswith(b"\xff\xff\xff\xff"):
                    return True
            except OSError:
                pass
    return False


def _csv_list(text, conv=str):
    return [conv(x) for x in text.split(",") if x]


def _flatten(prefix, obj, out):
    """Flattens nested dicts into 'a.b.c' keys; lists are skipped (per-thread detail stays in JSON)."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            _flatten(f"{prefix}.{k}" if prefix else k, v, out)
    elif not isinstance(obj, list):
        out[prefix] = obj


def run_dir_of(out, point):
    """The directory of one point's server and bot files (and, with --durable, its data dir)."""
    players, threads, locking, frame_mode, map_path, assign = point
    tag = f"p{players}_t{threads}_{locking}_{frame_mode}_{os.path.splitext(os.path.basename(map_path))[0]}"
    if assign != "block":
        tag += f"_{assign}"
    return os.path.join(out, "runs", tag)


def run_point(args, point, index, port):
    players, threads, locking, frame_mode, map_path, assign = point
    run_dir = run_dir_of(args.out, point)
    os.makedirs(run_dir, exist_ok=True)
    server_stats = os.path.join(run_dir, "server.json")
    bots_out = os.path.join(run_dir, "bots.json")
    for f in (server_stats, bots_out):
        if os.path.exists(f):
            os.remove(f)
    server_duration = args.duration + args.ramp + args.warmup + 3  # counted from when it serves
    server_cmd = [os.path.join(args.bin, "aftershock-server"), "--map", map_path, "--port", str(port),
                  "--threads", str(threads), "--max-players", str(max(players, 1)),
                  "--new-identity-burst", str(max(players, 256)),  # all bots come from one address
                  "--locking", locking, "--frame-mode", frame_mode, "--tick-hz", str(args.tick_hz),
                  "--assign", assign,
                  "--duration", str(server_duration), "--stats-out", server_stats,
                  "--stats-interval", "1"]
    # Durability is off unless asked for: a shared data dir would be refused by (or recover) the
    # next point's server. With --durable, each point gets a fresh data dir of its own (main()
    # refused an earlier one unless --replace-data).
    if args.durable:
        data_dir = os.path.join(run_dir, "data")
        if os.path.isdir(data_dir) and not os.path.islink(data_dir):
            shutil.rmtree(data_dir)
        elif os.path.lexists(data_dir):
            os.unlink(data_dir)
        server_cmd += ["--data-dir", data_dir]
    else:
        server_cmd += ["--data-dir", ""]
    server_cmd += args.server_arg
    bots_cmd = [os.path.join(args.bin, "aftershock-bots"), "--server", f"127.0.0.1:{port}",
                "--bots", str(players), "--rate", str(args.rate), "--duration", str(args.duration + args.ramp),
                "--ramp", str(args.ramp), "--seed", str(args.seed + index), "--behavior", args.behavior,
                "--identity-prefix", f"exp{index}", "--out", bots_out,
                "--series", os.path.join(run_dir, "bots_series.csv")] + args.bots_arg
    server = _spawn(server_cmd, os.path.join(run_dir, "server.log"))
    if not _wait_server_up(port, 120, server):
        rc = server.poll()
        _kill_children()
        return {"players": players, "threads": threads, "locking": locking, "frame_mode": frame_mode,
                "map": os.path.basename(map_path), "assign": assign,
                "status": (f"server exited {rc} before serving (see {run_dir}/server.log)" if rc is not None
                           else "server did not come up in 120 s")}
    time.sleep(args.warmup)
    bots = _spawn(bots_cmd, os.path.join(run_dir, "bots.log"))
    deadline = time.time() + server_duration + 60
    status = "ok"
    for p, name in ((bots, "bots"), (server, "server")):
        try:
            rc = p.wait(timeout=max(1, deadline - time.time()))
            if rc != 0:
                status = f"{name} exited {rc}"
        except subprocess.TimeoutExpired:
            status = f"{name} timed out"
    _kill_children()
    row = {"players": players, "threads": threads, "locking": locking, "frame_mode": frame_mode,
           "map": os.path.basename(map_path), "assign": assign, "behavior": args.behavior, "status": status}
    for name, path in (("server", server_stats), ("bots", bots_out)):
        try:
            with open(path) as f:
                data = json.load(f)
        except (OSError, ValueError) as e:
            row["status"] = f"{status}; no {name} summary ({e.__class__.__name__})"
            continue
        flat = {}
        _flatten("", data, flat)
        for k, v in flat.items():
            row[f"{name}.{k}"] = v
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--players", default="16,32,64", help="comma list of bot counts")
    ap.add_argument("--threads", default="1,2", help="comma list of server worker thread counts")
    ap.add_argument("--locking", default="areanode-opt", help="comma list: sequential,global,areanode,areanode-opt")
    ap.add_argument("--frame-mode", default="fixed", help="comma list: request,fixed")
    ap.add_argument("--map", default="maps/dm_arena.map", help="comma list of map files")
    ap.add_argument("--assign", default="block", help="comma list: block,round-robin,locality")
    ap.add_argument("--duration", type=int, default=10, help="measured seconds per point")
    ap.add_argument("--ramp", type=int, default=2, help="seconds over which bots join")
    ap.add_argument("--warmup", type=float, default=1.0, help="seconds between server start and bots start")
    ap.add_argument("--rate", type=int, default=30, help="commands per second per bot")
    ap.add_argument("--tick-hz", type=int, default=30)
    ap.add_argument("--behavior", default="mixed")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--port", type=int, default=28000, help="first base port; each point uses its own")
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"))
    ap.add_argument("--out", default=os.path.join(ROOT, "out", "experiment"), help="output prefix directory")
    ap.add_argument("--durable", action="store_true",
                    help="run each server with a fresh --data-dir (default checkpoint/durability flags)")
    ap.add_argument("--replace-data", action="store_true",
                    help="with --durable: delete the data directories an earlier run into the same --out "
                         "left (default: refuse to start)")
    ap.add_argument("--server-arg", action="append", default=[], help="extra server flag (repeatable)")
    ap.add_argument("--bots-arg", action="append", default=[], help="extra bots flag (repeatable)")
    args = ap.parse_args()

    lockings = _csv_list(args.locking)
    for lk in lockings:
        if lk not in ("sequential", "global", "areanode", "areanode-opt"):
            ap.error(f"unknown locking scheme '{lk}'")
    for fm in _csv_list(args.frame_mode):
        if fm not in ("request", "fixed"):
            ap.error(f"unknown frame mode '{fm}'")
    for a in _csv_list(args.assign):
        if a not in ("block", "round-robin", "locality"):
            ap.error(f"unknown assignment '{a}'")
    for exe in ("aftershock-server", "aftershock-bots"):
        if not os.access(os.path.join(args.bin, exe), os.X_OK):
            ap.error(f"{exe} not found in {args.bin}; build first (cmake --build build)")
    try:
        players = _csv_list(args.players, int)
    except ValueError as e:
        ap.error(f"--players: {e}")
    try:
        threads = _csv_list(args.threads, int)
    except ValueError as e:
        ap.error(f"--threads: {e}")
    for flag, values in (("--players", players), ("--threads", threads), ("--locking", lockings),
                         ("--frame-mode", _csv_list(args.frame_mode)), ("--map", _csv_list(args.map)),
                         ("--assign", _csv_list(args.assign))):
        if not values:
            ap.error(f"{flag} lists nothing")
    if any(n < 1 for n in players):
        ap.error("--players must all be at least 1")
    if any(not 1 <= n <= 64 for n in threads):
        ap.error("--threads must all be in 1..64")
    for m in _csv_list(args.map):
        if not os.path.isfile(m if os.path.isabs(m) else os.path.join(ROOT, m)):
            ap.error(f"--map {m}: not a file")
    if args.duration < 1:
        ap.error("--duration must be at least 1 s")
    if args.ramp < 0 or not math.isfinite(args.warmup) or args.warmup < 0:
        ap.error("--ramp and --warmup must not be negative")
    if args.rate < 1:
        ap.error("--rate must be at least 1")
    if os.path.exists(args.out) and not os.path.isdir(args.out):
        ap.error(f"--out {args.out}: exists and is not a directory")

    # 'sequential' runs one thread by definition, so its points collapse to threads=1.
    grid = {(pl, 1 if lk == "sequential" else th, lk, fm, mp, a)
            for pl, th, lk, fm, mp, a in itertools.product(players, threads, lockings,
                                                           _csv_list(args.frame_mode), _csv_list(args.map),
                                                           _csv_list(args.assign))}
    grid = sorted(grid, key=lambda p: (p[4], p[3], p[2], p[5], p[1], p[0]))
    # Point i's server takes --port + 10 i and one port per thread after it; the tool polls it, so 0
    # (the system's pick) will not do.
    last_port = args.port + 10 * (len(grid) - 1) + max(threads)
    if args.port < 1 or last_port > 65535:
        ap.error(f"--port {args.port}: the {len(grid)} points need ports {args.port}..{last_port}, within 1..65535")
    if args.durable and not args.replace_data:
        for point in grid:
            data_dir = os.path.join(run_dir_of(args.out, point), "data")
            if os.path.lexists(data_dir):
                ap.error(f"--out {args.out}: {data_dir} holds the game an earlier run recorded; "
                         "pass --replace-data to delete it, or choose another --out")
    os.makedirs(args.out, exist_ok=True)

    def on_signal(signum, _frame):
        _kill_children()
        sys.exit(128 + signum)

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)

    rows = []
    try:
        for i, point in enumerate(grid):
            print(f"[{i + 1}/{len(grid)}] players={point[0]} threads={point[1]} locking={point[2]} "
                  f"frame={point[3]} map={point[4]} assign={point[5]}", flush=True)
            row = run_point(args, point, i, args.port + 10 * i)
            rows.append(row)
            # After every point, so that an interrupted sweep keeps the points it finished.
            _write_results(args.out, rows)
            print(f"    {row['status']}: response_rate={row.get('bots.response_rate', '?')} "
                  f"p99_ms={row.get('bots.response_ms.p99', '?')} "
                  f"frame_p99_ms={row.get('server.frame_ms.p99', '?')}", flush=True)
    finally:
        _kill_children()

    print(f"wrote {args.out}/results.csv and results.json ({len(rows)} points)")
    return 0 if all(r["status"] == "ok" for r in rows) else 1


def _write_results(out, rows):
    """results.csv and results.json for the points run so far, each replaced whole (temp + rename)."""
    keys = []
    for r in rows:
        for k in r:
            if k not in keys:
                keys.append(k)
    for name, write in (("results.csv", lambda f: _write_csv(f, keys, rows)),
                        ("results.json", lambda f: json.dump(rows, f, indent=1))):
        tmp = os.path.join(out, name + ".tmp")
        with open(tmp, "w", newline="") as f:
            write(f)
        os.replace(tmp, os.path.join(out, name))


def _write_csv(f, keys, rows):
    w = csv.DictWriter(f, fieldnames=keys)
    w.writeheader()
    w.writerows(rows)


if __name__ == "__main__":
    sys.exit(main())
