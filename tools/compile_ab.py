#!/usr/bin/python3
"""Times the compile of some sources with and without part of their command line: the method
behind the build's figures (gcc's variable tracking, the precompiled Catch2 header; see
cmake/AftershockOptions.cmake and cmake/AftershockTest.cmake).

Each source's command comes from the build directory's compile_commands.json. Variant "as built"
is that command; variant "dropped" is the same with every match of --drop removed. The object
goes to a temporary file, never into the build. Each round compiles every source once in each
variant, alternating which goes first, one compile at a time. Prints per source the mean wall
time of each variant, and the totals.

Examples (this machine's figures are in the commit messages of 9f2d900 and 51e1294):
  tools/compile_ab.py --drop ' -fno-var-tracking' server/sv/server.cc server/sv/worker.cc
  tools/compile_ab.py --drop ' -Winvalid-pch -include \\S+cmake_pch.hxx' server/core/status_test.cc

Exits 2 if a source is not in the build or --drop matches nothing in its command, 1 if a compile
fails.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build-dir", default="build")
    ap.add_argument("--drop", required=True, help="regular expression removed from each command")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("sources", nargs="+", help="paths relative to the repository root")
    args = ap.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    try:
        with open(os.path.join(args.build_dir, "compile_commands.json")) as f:
            entries = json.load(f)
    except (OSError, ValueError) as e:
        print(f"compile_ab: {args.build_dir}/compile_commands.json: {e}", file=sys.stderr)
        return 2
    by_file = {os.path.relpath(e["file"], root): e for e in entries}
    with tempfile.TemporaryDirectory(prefix="compile_ab_") as scratch:
        return run(args, root, by_file, os.path.join(scratch, "out.o"))


def run(args, root, by_file, out):
    jobs = []
    for src in args.sources:
        e = by_file.get(os.path.normpath(src))
        if e is None:
            print(f"compile_ab: {src} is not in {args.build_dir}/compile_commands.json", file=sys.stderr)
            return 2
        built = re.sub(r" -o \S+", " -o " + out, e["command"])
        dropped = re.sub(args.drop, "", built)
        if dropped == built:
            print(f"compile_ab: --drop matches nothing in the command of {src}", file=sys.stderr)
            return 2
        jobs.append((src, e["directory"], {"as built": built, "dropped": dropped}))
    times = {(src, v): [] for src, _, _ in jobs for v in ("as built", "dropped")}
    for r in range(args.rounds):
        for src, cwd, cmds in jobs:
            order = ["as built", "dropped"] if r % 2 == 0 else ["dropped", "as built"]
            for v in order:
                t0 = time.monotonic()
                p = subprocess.run(cmds[v], shell=True, cwd=cwd, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.PIPE, text=True)
                if p.returncode != 0:
                    print(f"compile_ab: {src} ({v}) failed:\n{p.stderr}", file=sys.stderr)
                    return 1
                times[(src, v)].append(time.monotonic() - t0)
    print(f"{'source':48s} {'as built s':>10s} {'dropped s':>10s} {'ratio':>6s}")
    total = {"as built": 0.0, "dropped": 0.0}
    for src, _, _ in jobs:
        m = {v: sum(times[(src, v)]) / len(times[(src, v)]) for v in total}
        for v in total:
            total[v] += m[v]
        print(f"{src:48s} {m['as built']:10.2f} {m['dropped']:10.2f} {m['as built'] / m['dropped']:6.2f}")
    print(f"{'total':48s} {total['as built']:10.2f} {total['dropped']:10.2f} "
          f"{total['as built'] / total['dropped']:6.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
