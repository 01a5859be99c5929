#!/usr/bin/python3
"""Times two or more aftershock-bench-recovery binaries (say, an older commit's and this tree's)
on one data directory, alternated in one session, and prints each one's median against the first.

On a shared 2-core host a single replay's wall time swings 20-40% from run to run, so a
difference of a few percent shows only as a ratio within a round, over many rounds. Every round
runs each binary once (--runs 1), in an order rotated by one each round, so that none always runs
first. The ratios are per round (binary / the first binary given); the summary gives their
median, range and how many rounds each binary was faster in.

Each run also reports handoff_ns, the bench's round trip between two pinned threads timed just
before it (75-140 ns normally, 370-500 ns when the host's two vCPUs sit far apart, which slows
every 2-thread replay: docs/recovery-measurements.md, "The slow mode, measured"). The summary is
given for all rounds and, apart, for the rounds whose runs all stayed under --slow-handoff-ns and
for the others.

Every run must recover the same state: the script exits 1 if two runs report different hashes.

  git worktree add /tmp/old COMMIT && cmake -S /tmp/old -B /tmp/old/build -DCMAKE_BUILD_TYPE=RelWithDebInfo \\
      && cmake --build /tmp/old/build --target aftershock-bench-recovery
  tools/bench_recovery/compare.py --data-dir D --map maps/dm_arena.map --threads 2 --rounds 30 \\
      old=/tmp/old/build/bin/aftershock-bench-recovery new=build/bin/aftershock-bench-recovery \\
      --csv out/replay_ab.csv
"""
import argparse
import csv
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "experiments"))
from recovery_curve import RUN_LINE  # noqa: E402  (the bench's run line, parsed once for every tool)

FIELDS = ["round", "label", "replay_ms", "cpu_ms", "handoff_ns", "speed_x_realtime", "state_hash"]


def parse_binary(spec):
    if "=" not in spec:
        raise argparse.ArgumentTypeError(f"binary {spec!r}: expected LABEL=PATH")
    label, path = spec.split("=", 1)
    if not label or "," in label:
        raise argparse.ArgumentTypeError(f"binary {spec!r}: the label must be non-empty, without commas")
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        raise argparse.ArgumentTypeError(f"binary {spec!r}: {path} is not an executable file")
    return label, path


def ab_parser(doc, what, data_dir_help):
    """An argument parser with what every A/B tool here takes: LABEL=PATH binaries of `what` (ratios
    are to the first), --data-dir and --map. check_ab_args checks them once parsed."""
    p = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("binaries", nargs="+", type=parse_binary, metavar="LABEL=PATH",
                   help=f"{what} binaries; ratios are to the first")
    p.add_argument("--data-dir", required=True, help=data_dir_help)
    p.add_argument("--map", required=True, help="the map that server ran")
    return p


def check_ab_args(p, args):
    """Refuses (p.error, exit 2) fewer than two binaries, a repeated label, a --data-dir that is not
    a directory and a --map that is not a file. Returns the labels in order."""
    labels = [label for label, _ in args.binaries]
    if len(args.binaries) < 2:
        p.error("give at least two binaries")
    if len(set(labels)) != len(labels):
        p.error("the labels must differ")
    if not os.path.isdir(args.data_dir):
        p.error(f"--data-dir {args.data_dir}: not a directory")
    if not os.path.isfile(args.map):
        p.error(f"--map {args.map}: not a file")
    return labels


def run_once(path, args):
    """One recovery with `path`; returns the parsed run line as a dict, or raises RuntimeError."""
    cmd = [path, "--data-dir", args.data_dir, "--map", args.map, "--replay-threads", str(args.threads),
           "--runs", "1", "--adaptive", args.adaptive]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    for line in proc.stdout.splitlines():
        m = RUN_LINE.match(line)
        if m and int(m.group(2)) == args.threads and m.group(10) is not None:
            return {"replay_ms": float(m.group(6)), "speed_x_realtime": float(m.group(7)),
                    "state_hash": m.group(8), "cpu_ms": float(m.group(9)), "handoff_ns": float(m.group(10))}
    raise RuntimeError(f"{' '.join(cmd)} exited {proc.returncode} without a run line:\n"
                       f"{proc.stdout[-2000:]}{proc.stderr[-2000:]}")


def summarize(title, rounds, labels, key="replay_ms"):
    """rounds: list of {label: row}. Prints row[key]'s medians and per-round ratios to labels[0]."""
    print(f"-- {title}: {len(rounds)} rounds")
    if not rounds:
        return
    base = labels[0]
    for label in labels:
        times = [r[label][key] for r in rounds]
        line = f"{label:16s} {key} median {statistics.median(times):9.1f} [{min(times):.1f}..{max(times):.1f}]"
        if label != base and all(r[base][key] > 0 for r in rounds):  # else no ratio (0 ticks replayed)
            ratios = [r[label][key] / r[base][key] for r in rounds]
            faster = sum(x < 1 for x in ratios)
            line += (f"   {label}/{base} median {statistics.median(ratios):.3f} "
                     f"[{min(ratios):.2f}..{max(ratios):.2f}], faster in {faster} of {len(ratios)}")
        print(line)


def main():
    p = ab_parser(__doc__, "aftershock-bench-recovery", "a data directory a server wrote")
    p.add_argument("--threads", type=int, default=2, help="--replay-threads of every run (default 2)")
    p.add_argument("--rounds", type=int, default=10, help="rounds; each runs every binary once (default 10)")
    p.add_argument("--adaptive", choices=["on", "off"], default="off",
                   help="the bench's --adaptive (default off: every tick on the pool)")
    p.add_argument("--slow-handoff-ns", type=float, default=200,
                   help="a round counts as slow if any of its runs' handoff_ns reached this (default 200)")
    p.add_argument("--csv", help="also write every run to this CSV file")
    args = p.parse_args()
    labels = check_ab_args(p, args)
    if args.threads < 1 or args.rounds < 1:
        p.error("--threads and --rounds must be at least 1")
    if args.csv:  # checked now: it is written only after every round has run
        parent = os.path.dirname(os.path.abspath(args.csv))
        if os.path.isdir(args.csv) or (os.path.exists(parent) and not os.path.isdir(parent)):
            p.error(f"--csv {args.csv}: cannot be written (a directory, or under a file)")

    rows, rounds = [], []
    n = len(args.binaries)
    for i in range(args.rounds):
        result = {}
        for k in range(n):
            label, path = args.binaries[(i + k) % n]
            try:
                row = run_once(path, args)
            except RuntimeError as e:
                print(f"error: {e}", file=sys.stderr)
                return 1
            row.update(round=i + 1, label=label)
            result[label] = row
            rows.append(row)
            print(f"round {i + 1} {label}: replay_ms {row['replay_ms']:.1f} cpu_ms {row['cpu_ms']:.0f} "
                  f"handoff_ns {row['handoff_ns']:.0f} state {row['state_hash']}", flush=True)
        rounds.append(result)

    if args.csv:
        os.makedirs(os.path.dirname(os.path.abspath(args.csv)), exist_ok=True)
        with open(args.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=FIELDS, extrasaction="ignore")
            w.writeheader()
            w.writerows(rows)

    print(f"\n{args.data_dir}, {args.threads} threads, --adaptive {args.adaptive}")
    summarize("all", rounds, labels)
    quick = [r for r in rounds if max(x["handoff_ns"] for x in r.values()) < args.slow_handoff_ns]
    slow = [r for r in rounds if max(x["handoff_ns"] for x in r.values()) >= args.slow_handoff_ns]
    summarize(f"handoff_ns under {args.slow_handoff_ns:.0f} in every run", quick, labels)
    summarize(f"handoff_ns {args.slow_handoff_ns:.0f} or more in some run", slow, labels)

    hashes = {row["state_hash"] for row in rows}
    if len(hashes) != 1:
        print(f"error: the runs recovered different states: {sorted(hashes)}", file=sys.stderr)
        return 1
    print(f"every run recovered state {hashes.pop()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
