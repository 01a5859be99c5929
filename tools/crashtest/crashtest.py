#!/usr/bin/python3
"""Kill-and-recover test: runs aftershock-server with aftershock-bots --verify, kills the server
with SIGKILL at random moments, restarts it on the same data directory each time, and checks
every recovery.

Per kill it prints: the time from the kill until the restarted server answers a connectionless
status query ("serving": recovered and listening), the restore and replay times, the ticks
replayed, and whether the recovered state hash equals the live hash the killed server logged
for that tick (--hash-log). At the end: the bots' durability violations (a rejoin that reports
fewer applied commands than the bot had seen acknowledged) and their longest outage (kill to the
first snapshot after the restart, including the bots' own silence timeout and rejoin).

Exit status: 0 if every restart recovered with matching hashes and the bots saw no violation,
1 otherwise, 2 on bad usage or a failure to start.

  tools/crashtest.sh --kills 20 --bots 200 --threads 2 --checkpoint cou --durability sync
"""
import argparse
import atexit
import csv
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

STATUS_QUERY = b"\xff\xff\xff\xffstatus"
children = []  # Popen objects, each the leader of its own process group


def kill_group(p, sig=signal.SIGKILL):
    try:
        os.killpg(p.pid, sig)
    except ProcessLookupError:
        pass


def cleanup():
    for p in children:
        if p.poll() is None:
            kill_group(p)
            p.wait()


def on_signal(signum, _frame):
    sys.exit(f"crashtest: signal {signum}, stopping")


def spawn(cmd, log_path):
    log = open(log_path, "ab")
    p = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                         start_new_session=True)
    log.close()
    children.append(p)
    return p


def status_answered(port, timeout_s, server=None):
    """True once the lobby on 127.0.0.1:port answers the connectionless status query; False at the
    deadline, or at once if `server` (its process, if given) has exited."""
    deadline = time.monotonic() + timeout_s
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.settimeout(0.01)
        while time.monotonic() < deadline:
            if server is not None and server.poll() is not None:
                return False
            try:
                s.sendto(STATUS_QUERY, ("127.0.0.1", port))
                data, _ = s.recvfrom(65536)
                if data.startswith(b"\xff\xff\xff\xffn"):  # QuakeWorld's print reply
                    return True
            except (socket.timeout, ConnectionRefusedError):
                pass
    return False


def wait_for_json(path, key, timeout_s):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            with open(path) as f:
                j = json.load(f)
            if key in j:
                return j
        except (OSError, ValueError):
            pass
        time.sleep(0.02)
    return None


def live_hash(hash_log, size_at_kill, tick):
    """The last hash the killed server logged for `tick` (hash.log lines: "tick hash")."""
    try:
        with open(hash_log, "rb") as f:
            data = f.read(size_at_kill)
    except OSError:
        return None
    found = None
    for line in data.split(b"\n"):
        parts = line.split()
        if len(parts) == 2 and parts[0] == str(tick).encode():
            found = parts[1].decode()
    return found


def bots_back_s(series_path, bots_start, t_kill):
    """Seconds from the kill to the end of the first series second with replies after it (the
    CSV has one row per second, so this is an upper bound with 1 s resolution)."""
    try:
        with open(series_path) as f:
            rows = list(csv.DictReader(f))
    except OSError:
        return None
    kill_rel = t_kill - bots_start
    seen_gap = False
    for r in rows:
        t = float(r["t_s"])
        if t <= kill_rel:
            continue
        if float(r["replies_per_s"]) == 0:
            seen_gap = True
        elif seen_gap or t > kill_rel + 1:
            return t - kill_rel
    return None


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kills", type=int, default=5)
    ap.add_argument("--bots", type=int, default=32)
    ap.add_argument("--threads", type=int, default=2, help="server worker threads")
    ap.add_argument("--checkpoint", default="cou", choices=["cou", "naive", "pingpong", "none"])
    ap.add_argument("--checkpoint-interval-ms", type=int, default=0)
    ap.add_argument("--durability", default="sync", choices=["sync", "async", "off"])
    ap.add_argument("--seed", type=int, default=1, help="kill moments and bot behaviour")
    ap.add_argument("--min-interval", type=float, default=2.0, help="seconds from restart to the next kill")
    ap.add_argument("--max-interval", type=float, default=5.0)
    ap.add_argument("--rate", type=int, default=30, help="commands per second per bot")
    ap.add_argument("--port", type=int, default=27900)
    ap.add_argument("--map", default="maps/dm_arena.map")
    ap.add_argument("--bin", default="build/bin", help="directory of aftershock-server and aftershock-bots")
    ap.add_argument("--dir", default="", help="work directory (default: a new temp dir, removed if all passed)")
    ap.add_argument("--settle", type=float, default=6.0, help="seconds of play after the last restart")
    ap.add_argument("--server-arg", action="append", default=[], help="extra server flag (repeatable)")
    a = ap.parse_args()
    if a.kills < 1 or a.bots < 1 or not (0 < a.min_interval <= a.max_interval):
        ap.error("need --kills >= 1, --bots >= 1 and 0 < --min-interval <= --max-interval")
    return a


def start_server(a, work, data, n):
    stats = os.path.join(work, f"server-{n}.json")
    cmd = [os.path.join(a.bin, "aftershock-server"), "--map", a.map, "--port", str(a.port),
           "--bind", "127.0.0.1", "--threads", str(a.threads), "--max-players", str(a.bots + 16),
           "--new-identity-burst", str(max(a.bots, 256)),  # all bots come from one address
           "--data-dir", data, "--checkpoint", a.checkpoint,
           "--checkpoint-interval-ms", str(a.checkpoint_interval_ms), "--durability", a.durability,
           "--hash-log", "--stats-out", stats, "--stats-interval", "1"] + a.server_arg
    return spawn(cmd, os.path.join(work, f"server-{n}.log")), stats


def row(cells, widths):
    return "  ".join(str(c).rjust(w) for c, w in zip(cells, widths))


def main():
    a = parse_args()
    for exe in ("aftershock-server", "aftershock-bots"):
        if not os.access(os.path.join(a.bin, exe), os.X_OK):
            sys.exit(f"crashtest: {os.path.join(a.bin, exe)} not found (build it, or pass --bin)")
    atexit.register(cleanup)
    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    rng = random.Random(a.seed)
    work = a.dir or tempfile.mkdtemp(prefix="aftershock-crashtest-")
    if os.path.exists(work) and not os.path.isdir(work):
        sys.exit(f"crashtest: --dir {work} exists and is not a directory")
    os.makedirs(work, exist_ok=True)
    data = os.path.join(work, "data")
    hash_log = os.path.join(data, "hash.log")

    server, stats = start_server(a, work, data, 0)
    if not status_answered(a.port, 30, server):
        how = f"exited {server.poll()}" if server.poll() is not None else "did not answer in 30 s"
        sys.exit(f"crashtest: the server did not start ({how}); see {work}/server-0.log")
    bots_json, series = os.path.join(work, "bots.json"), os.path.join(work, "bots.csv")
    bots_duration = a.kills * (a.max_interval + 30) + a.settle + 60
    bots = spawn([os.path.join(a.bin, "aftershock-bots"), "--server", f"127.0.0.1:{a.port}",
                  "--bots", str(a.bots), "--rate", str(a.rate), "--duration", str(bots_duration),
                  "--seed", str(a.seed), "--identity-prefix", "crash", "--threads", "2",
                  "--verify", "--quiet", "--out", bots_json, "--series", series],
                 os.path.join(work, "bots.log"))
    bots_start = time.monotonic()
    print(f"crashtest: {a.kills} kills, {a.bots} bots, {a.threads} server threads, checkpoint "
          f"{a.checkpoint}, durability {a.durability}, seed {a.seed}; work dir {work}")
    widths = [4, 7, 9, 11, 10, 8, 10, 8, 8, 16, 5, 8]
    print(row(["kill", "at_s", "serve_ms", "restore_ms", "replay_ms", "ticks", "total_ms", "ckpt",
               "tick", "state_hash", "match", "check"], widths))
    results = []  # one dict per kill
    for k in range(1, a.kills + 1):
        time.sleep(rng.uniform(a.min_interval, a.max_interval))
        if server.poll() is not None:
            sys.exit(f"crashtest: the server exited by itself (status {server.returncode}); "
                     f"see {work}/server-{k - 1}.log")
        kill_group(server)
        t_kill = time.monotonic()
        server.wait()
        # Everything the killed server logged, and nothing of its successor's.
        size_at_kill = os.path.getsize(hash_log) if os.path.exists(hash_log) else 0
        server, stats = start_server(a, work, data, k)
        serving = status_answered(a.port, 60, server)
        serve_ms = (time.monotonic() - t_kill) * 1000
        j = wait_for_json(stats, "recovery", 10) if serving else None
        if j is None:
            print(f"kill {k}: the server did not come back; see {work}/server-{k}.log")
            results.append({"ok": False})
            break
        r = j["recovery"]
        want = live_hash(hash_log, size_at_kill, r["recovered_tick"])
        match = want is not None and want == r["state_hash"]
        # The server's own replay check (docs/recovery.md, "The replay check"): the log must
        # replay the older backup to the recovered one. It may not run; it must never differ.
        check = r.get("replay_check", {}).get("outcome", "absent")
        results.append({"ok": match and check != "differs", "match": match, "t_kill": t_kill,
                        "serve_ms": serve_ms, "r": r, "check": check})
        print(row([k, f"{t_kill - bots_start:.1f}", f"{serve_ms:.0f}", f"{r['restore_ms']:.1f}",
                   f"{r['replay_ms']:.1f}", r["ticks_replayed"], f"{r['total_ms']:.1f}",
                   r["checkpoint_tick"], r["recovered_tick"], r["state_hash"],
                   "yes" if match else "NO", check], widths), flush=True)
        if check == "differs":
            print(f"kill {k}: the replay check failed: {r['replay_check'].get('detail')}")
    time.sleep(a.settle)
    kill_group(bots, signal.SIGINT)
    try:
        bots.wait(timeout=30)
    except subprocess.TimeoutExpired:
        kill_group(bots)
        bots.wait()
    kill_group(server, signal.SIGTERM)
    try:
        server.wait(timeout=20)
    except subprocess.TimeoutExpired:
        kill_group(server)
        server.wait()
    return summarize(a, work, results, bots_json, series, bots_start)


def summarize(a, work, results, bots_json, series, bots_start):
    ok = len(results) == a.kills and all(x["ok"] for x in results)
    recs = [x for x in results if "r" in x]
    print()
    if recs:
        serve = [x["serve_ms"] for x in recs]
        restore = [x["r"]["restore_ms"] for x in recs]
        replay = [x["r"]["replay_ms"] for x in recs]
        ticks = [x["r"]["ticks_replayed"] for x in recs]
        tick_ms = 1000.0 / 30
        speed = [t * tick_ms / rp for t, rp in zip(ticks, replay) if t > 0 and rp > 0]
        backs = [bots_back_s(series, bots_start, x["t_kill"]) for x in recs]
        print(f"kill -> serving (status answered):  mean {sum(serve) / len(serve):7.0f} ms   max {max(serve):7.0f} ms")
        known = [b for b in backs if b is not None]
        if known:
            print(f"kill -> bots get replies again:     mean {sum(known) / len(known):7.1f} s    max {max(known):7.1f} s"
                  "   (bots' per-second series: 1 s resolution, includes their silence timeout)")
        print(f"restore:                            mean {sum(restore) / len(restore):7.1f} ms   max {max(restore):7.1f} ms")
        print(f"replay:                             mean {sum(replay) / len(replay):7.1f} ms   max {max(replay):7.1f} ms"
              f"   ({sum(ticks) / len(ticks):.0f} ticks on average)")
        if speed:
            print(f"replay speed (30 Hz ticks):         min {min(speed):7.0f} x  mean {sum(speed) / len(speed):7.0f} x real time")
        print(f"state hash matches:                 {sum(1 for x in recs if x['match'])}/{a.kills}")
        checks = {}
        for x in recs:
            checks[x["check"]] = checks.get(x["check"], 0) + 1
        print("server replay checks:               " +
              ", ".join(f"{n} {name}" for name, n in sorted(checks.items())) +
              "   (match: the log replays the older backup to the recovered one)")
    b = None
    try:
        with open(bots_json) as f:
            b = json.load(f)
    except (OSError, ValueError):
        pass
    if b is None:
        print(f"bots: no summary ({bots_json}); see {work}/bots.log")
        ok = False
    else:
        v = b.get("durability_violations", -1)
        print(f"bots durability violations:         {v}   ({b.get('rejoin_checks')} rejoin checks)")
        print(f"bots longest outage:                {b.get('outage_ms', 0):7.0f} ms   reconnects {b.get('reconnects')}")
        # Every bot rejoins after every kill but the last: fewer checks than that means the
        # durability comparison did not really run.
        checks = b.get("rejoin_checks", 0)
        ok = ok and v == 0 and checks >= a.bots * (a.kills - 1)
    print("PASS" if ok else f"FAIL (logs in {work})")
    if ok and not a.dir:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
