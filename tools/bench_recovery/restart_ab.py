#!/usr/bin/python3
"""Times server restarts on one data directory: two or more aftershock-server binaries (say, an
older commit's and this tree's), alternated in one session, each run on a fresh copy of the
directory, and prints each one's medians against the first.

A run copies --data-dir to a temporary directory, starts `BIN --data-dir COPY --map MAP --port 0
--duration 0.3 --stats-out F` plus any --server-arg, and reads:
  serving_ms  from starting the process to its "serving" log line (recovered, ports open);
  total_ms, restore_ms and check_ms  the stats file's recovery.total_ms, recovery.restore_ms and
              recovery.replay_check.duration_ms (docs/stats.md).
Every round runs each binary once, in an order rotated by one each round. Every run must recover
the same state, and no replay check may differ: else the script exits 1.

  tools/bench_recovery/restart_ab.py --data-dir D --map maps/dm_arena.map --rounds 8 \\
      old=/tmp/old/build/bin/aftershock-server new=build/bin/aftershock-server
  (a directory written with more players than the default 64: --server-arg=--max-players=256)
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

from compare import ab_parser, check_ab_args, summarize

KEYS = ["serving_ms", "total_ms", "restore_ms", "check_ms"]


def run_once(path, args, scratch):
    """One restart of `path` on a fresh copy of --data-dir; returns a dict, or raises RuntimeError."""
    copy = os.path.join(scratch, "data")
    stats = os.path.join(scratch, "stats.json")
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(args.data_dir, copy)
    if os.path.exists(stats):
        os.remove(stats)
    cmd = [path, "--data-dir", copy, "--map", args.map, "--port", "0", "--duration", "0.3",
           "--stats-out", stats] + args.server_arg
    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    # A server that hangs (in recovery, or after --duration) is killed, which ends the read loop.
    timed_out = threading.Event()
    def kill():
        timed_out.set()
        proc.kill()
    timer = threading.Timer(args.timeout_s, kill)
    timer.start()
    try:
        serving_ms, lines = None, []
        for line in proc.stdout:
            lines.append(line)
            if serving_ms is None and "] serving " in line:
                serving_ms = (time.monotonic() - start) * 1e3
        status = proc.wait()
    finally:
        timer.cancel()
    if timed_out.is_set():
        raise RuntimeError(f"{' '.join(cmd)} did not exit within {args.timeout_s:g} s (killed):\n"
                           f"{''.join(lines[-20:])}")
    if status != 0 or serving_ms is None or not os.path.exists(stats):
        raise RuntimeError(f"{' '.join(cmd)} exited {status}"
                           f"{'' if serving_ms else ' without a serving line'}:\n{''.join(lines[-20:])}")
    with open(stats) as f:
        recovery = json.load(f)["recovery"]
    check = recovery["replay_check"]
    return {"serving_ms": serving_ms, "total_ms": recovery["total_ms"], "restore_ms": recovery["restore_ms"],
            "check_ms": check["duration_ms"], "check": check["outcome"],
            "beside": check.get("beside_recovery", False), "state_hash": recovery["state_hash"]}


def main():
    p = ab_parser(__doc__, "aftershock-server", "a data directory a server wrote (copied, never changed)")
    p.add_argument("--rounds", type=int, default=8, help="rounds; each restarts every binary once (default 8)")
    p.add_argument("--server-arg", action="append", default=[],
                   help="one more argument for every server, e.g. --server-arg=--max-players=256 (repeatable)")
    p.add_argument("--timeout-s", type=float, default=120,
                   help="kill a server that has not exited this long after its start, and stop (default 120)")
    args = p.parse_args()
    labels = check_ab_args(p, args)
    if args.rounds < 1:
        p.error("--rounds must be at least 1")
    if not 0 < args.timeout_s < 86400:
        p.error("--timeout-s must be more than 0 and less than a day")
    if not os.path.isfile(os.path.join(args.data_dir, "world.id")):
        # A server starts a new world in a directory without one: that would time no restart.
        p.error(f"--data-dir {args.data_dir}: no world.id, so no server wrote it")

    rounds, rows = [], []
    n = len(args.binaries)
    with tempfile.TemporaryDirectory(prefix="aftershock-restart-ab-") as scratch:
        for i in range(args.rounds):
            result = {}
            for k in range(n):
                label, path = args.binaries[(i + k) % n]
                try:
                    row = run_once(path, args, scratch)
                except RuntimeError as e:
                    print(f"error: {e}", file=sys.stderr)
                    return 1
                result[label] = row
                rows.append(row)
                print(f"round {i + 1} {label}: " + " ".join(f"{key} {row[key]:.1f}" for key in KEYS) +
                      f" check {row['check']}{' beside' if row['beside'] else ''} state {row['state_hash']}",
                      flush=True)
            rounds.append(result)

    print(f"\n{args.data_dir}")
    for key in KEYS:
        summarize(key, rounds, labels, key)
    hashes = {row["state_hash"] for row in rows}
    if len(hashes) != 1:
        print(f"error: the runs recovered different states: {sorted(hashes)}", file=sys.stderr)
        return 1
    if any(row["check"] == "differs" for row in rows):
        print("error: a replay check differs", file=sys.stderr)
        return 1
    print(f"every run recovered state {hashes.pop()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
