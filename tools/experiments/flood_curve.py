#!/usr/bin/python3
"""Junk rate against honest players' response time: the curve of issue 15, part 3.

For every junk rate (0 = the baseline without a flood) and repetition it starts aftershock-server,
starts aftershock-bots (the honest players: --ramp 1) and, 2 s later when they play, aftershock-flood
at that rate against the lobby and every worker port until the bots stop (--flood-start before:
the flood starts 1 s before the bots, so they also join under it), and collects: the bots' response p50/p99, kicks, lost connections and join failures;
the server's CPU seconds over the run and its junk counters; what the flood sent and got back.
Repetitions alternate the rates (rate order 0,5k,10k,... then again), so slow drift of the
machine (other builds) spreads over every rate. It writes one CSV row per run and a summary of
medians per rate.

Example (the figures in the report):
  /usr/bin/python3 tools/experiments/flood_curve.py --rates 0,5000,10000,20000,40000 --reps 3 \
      --bots 16 --threads 2 --out out/flood
"""
import argparse
import csv
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import time

# One copy of the child-process handling and the start-up poll, shared with the sweep runner.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from experiment import _kill_children, _spawn, _wait_server_up  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.path.join(ROOT, "build", "bin")
FLOOD_AFTER_S = 2.0  # --flood-start after: seconds after the bots start (their ramp is 1 s)


def _cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def run_one(args, rate, rep, port):
    tag = os.path.join(args.out, f"r{rate}_{rep}")
    stats = tag + ".server.json"
    server = _spawn([args.server_bin, "--port", str(port), "--bind", "127.0.0.1",
                     "--threads", str(args.threads), "--max-players", str(args.max_players),
                     "--data-dir", "", "--log-level", "warn", "--stats-out", stats,
                     "--stats-interval", "1"], tag + ".server.log")
    if not _wait_server_up(port, 120):
        raise RuntimeError("server did not come up; see " + tag + ".server.log")
    flood_argv = [os.path.join(BIN, "aftershock-flood"), "--server", f"127.0.0.1:{port}",
                  "--workers", str(args.threads), "--rate", str(rate), "--seed", str(rep + 1),
                  "--mix", args.mix, "--out", tag + ".flood.json"]
    flood = None
    if rate > 0 and args.flood_start == "before":  # the bots join under the flood
        flood = _spawn(flood_argv + ["--duration", str(args.duration + 2.5)], tag + ".flood.log")
        time.sleep(1.0)
    cpu0 = _cpu_seconds(server.pid)
    t0 = time.time()
    bots = _spawn([os.path.join(BIN, "aftershock-bots"), "--server", f"127.0.0.1:{port}",
                   "--bots", str(args.bots), "--duration", str(args.duration), "--ramp", "1",
                   "--quiet", "--out", tag + ".bots.json", "--series", tag + ".bots.csv"],
                  tag + ".bots.log")
    if rate > 0 and args.flood_start == "after":  # the bots joined; the flood hits them playing
        time.sleep(FLOOD_AFTER_S)
        flood = _spawn(flood_argv + ["--duration", str(args.duration - FLOOD_AFTER_S + 0.5)],
                       tag + ".flood.log")
    bots.wait(timeout=args.duration + 60)
    cpu = _cpu_seconds(server.pid) - cpu0
    wall = time.time() - t0
    if flood is not None:
        flood.wait(timeout=60)
    time.sleep(1.2)  # one more stats write
    server.send_signal(signal.SIGTERM)
    server.wait(timeout=20)
    _kill_children()  # all have exited: this only forgets them
    b, s, f = _load(tag + ".bots.json"), _load(stats), _load(tag + ".flood.json")
    junk = s.get("junk", {})
    return {
        "rate": rate, "rep": rep, "achieved_rate": round(f.get("achieved_rate", 0)),
        "junk_sent": f.get("sent_total", 0),
        "p50_ms": b.get("response_ms", {}).get("p50"), "p99_ms": b.get("response_ms", {}).get("p99"),
        "connected": b.get("connected"), "kicks": b.get("kicks"),
        "connections_lost": b.get("connections_lost"), "join_failures": b.get("join_failures"),
        "join_p50_ms": b.get("join_ms", {}).get("p50"), "join_max_ms": b.get("join_ms", {}).get("max"),
        "server_kicked": s.get("kicked"), "server_cpu_s": round(cpu, 3),
        "server_cpu_pct": round(100 * cpu / wall, 1),
        "junk_dropped": junk.get("dropped"), "half_open_max": junk.get("half_open_max"),
        "flood_replies": f.get("replies"), "verify_connects": f.get("verify_connects"),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rates", default="0,5000,10000,20000,40000")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--bots", type=int, default=16)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--max-players", type=int, default=64)
    ap.add_argument("--duration", type=float, default=12)
    ap.add_argument("--port", type=int, default=27700)
    ap.add_argument("--flood-start", choices=["after", "before"], default="after",
                    help="after: the flood starts 2 s after the bots (they play under it); "
                         "before: 1 s before them (they also join under it)")
    ap.add_argument("--mix", default="random,truncated,oversize,connectionless,enet-connect",
                    help="aftershock-flood --mix")
    ap.add_argument("--server-bin", default=os.path.join(BIN, "aftershock-server"),
                    help="the server binary (another build, to compare before and after a change)")
    ap.add_argument("--out", default="out/flood")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    rates = [int(r) for r in args.rates.split(",")]
    rows = []
    try:
        for rep in range(args.reps):
            for i, rate in enumerate(rates):
                port = args.port + 10 * ((rep * len(rates) + i) % 20)  # no TIME_WAIT-like reuse
                row = run_one(args, rate, rep, port)
                print(json.dumps(row), flush=True)
                rows.append(row)
    finally:
        _kill_children()
    with open(os.path.join(args.out, "runs.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    base_cpu = statistics.median([r["server_cpu_s"] for r in rows if r["rate"] == 0] or [0])
    summary = []
    for rate in rates:
        rs = [r for r in rows if r["rate"] == rate]
        med = lambda k: statistics.median([r[k] for r in rs if r[k] is not None] or [float("nan")])
        summary.append({
            "rate": rate, "runs": len(rs), "p50_ms": med("p50_ms"), "p99_ms": med("p99_ms"),
            "kicks": sum(r["kicks"] or 0 for r in rs), "connections_lost": sum(r["connections_lost"] or 0 for r in rs),
            "join_failures": sum(r["join_failures"] or 0 for r in rs), "join_p50_ms": med("join_p50_ms"),
            "join_max_ms": max([r["join_max_ms"] or 0 for r in rs] or [0]), "server_cpu_pct": med("server_cpu_pct"),
            "cpu_us_per_junk": round(1e6 * (med("server_cpu_s") - base_cpu) / med("junk_sent"), 2) if rate else 0,
            "half_open_max": med("half_open_max"),
        })
    with open(os.path.join(args.out, "curve.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(summary[0].keys()))
        w.writeheader()
        w.writerows(summary)
    for s in summary:
        print(s)
    return 0


if __name__ == "__main__":
    sys.exit(main())
