#!/usr/bin/python3
"""Per-thread CPU and wake-ups of running processes, by thread name, over a window.

  tools/experiments/thread_cpu.py --pids $(pgrep -d, -f 'aftershock-(server|bots)') --seconds 5

Reads /proc/PID/task/*/stat (user + system ticks) and /proc/PID/task/*/status (voluntary and
involuntary context switches) at the start and the end of the window, and prints one line per
thread: its name (the server's and bots' threads name themselves: as-frame-N, as-lobby, as-log,
as-checkpoint, as-bots-N...), its CPU as a percentage of one core, and its context switches per
second. Threads that started or ended inside the window are left out.
"""
import argparse
import os
import time

TICKS = os.sysconf("SC_CLK_TCK")


def sample(pid):
    """{tid: (name, cpu ticks, context switches)} of every thread of pid now."""
    out = {}
    base = f"/proc/{pid}/task"
    for tid in os.listdir(base):
        try:
            with open(f"{base}/{tid}/stat") as f:
                stat = f.read()
            with open(f"{base}/{tid}/status") as f:
                status = f.read()
        except OSError:
            continue  # the thread ended meanwhile
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2:].split()
        ticks = int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of stat)
        switches = 0
        for line in status.splitlines():
            if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")):
                switches += int(line.split()[1])
        out[tid] = (name, ticks, switches)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pids", required=True, help="comma-separated process ids")
    ap.add_argument("--seconds", type=float, default=5.0)
    args = ap.parse_args()
    pids = [p for p in args.pids.split(",") if p]
    before = {p: sample(p) for p in pids}
    t0 = time.monotonic()
    time.sleep(args.seconds)
    after = {p: sample(p) for p in pids}
    elapsed = time.monotonic() - t0
    print(f"{'pid':>8} {'thread':<16} {'cpu % of a core':>16} {'switches/s':>11}")
    for p in pids:
        for tid, (name, ticks, switches) in sorted(after[p].items(), key=lambda kv: int(kv[0])):
            if tid not in before[p]:
                continue
            _, ticks0, switches0 = before[p][tid]
            cpu = 100.0 * (ticks - ticks0) / TICKS / elapsed
            print(f"{p:>8} {name:<16} {cpu:16.1f} {(switches - switches0) / elapsed:11.0f}")


if __name__ == "__main__":
    main()
