#!/usr/bin/python3
"""Draws the paper's figures from an experiment table (tools/experiments/experiment.py's results.csv).

  plot.py sweep out/experiment/results.csv --out out/figs
      breakdown.png      stacked time breakdown per (threads, players)   (paper Fig. 5a/6a)
      response_rate.png  replies/s against players, one line per thread count   (Fig. 5b)
      response_time.png  mean and p99 response ms against players              (Fig. 5c)
      lock_wait.png      lock and wait share of thread time against players
      capacity.png       p50 and p99 response and the share of commands answered against players
  plot.py ckpt ckpt.csv --out out/figs
      ckpt_overhead.png  checkpoint overhead per tick against updates per tick and against skew,
                         per algorithm (ckpt.csv: aftershock-ckpt-bench --csv > ckpt.csv)

One figure set per (locking, frame mode, map) found in the table. Runs under Debian's python3
(python3-matplotlib), hence the /usr/bin/python3 shebang.
"""
import argparse
import collections
import csv
import os
import sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

COMPONENTS = ["world", "receive", "exec", "lock_leaf", "lock_parent", "reply", "checkpoint", "log_sync",
              "intra_wait", "inter_wait", "idle"]
COLORS = ["#8c564b", "#1f77b4", "#2ca02c", "#d62728", "#ff9896", "#9467bd", "#17becf",
          "#bcbd22", "#ff7f0e", "#ffbb78", "#c7c7c7"]


def _num(row, key):
    try:
        return float(row[key])
    except (KeyError, TypeError, ValueError):
        return None


def _load(path):
    with open(path, newline="") as f:
        return [r for r in csv.DictReader(f) if r.get("status", "ok").startswith("ok")]


def plot_breakdown(rows, title, path):
    rows = sorted(rows, key=lambda r: (int(r["threads"]), int(r["players"])))
    labels, bottoms = [], [0.0] * len(rows)
    fig, ax = plt.subplots(figsize=(max(6, 0.55 * len(rows) + 2), 4.5))
    xs = range(len(rows))
    for comp, color in zip(COMPONENTS, COLORS):
        vals = [_num(r, f"server.breakdown_pct.{comp}") or 0.0 for r in rows]
        if not any(vals):
            continue
        ax.bar(xs, vals, bottom=bottoms, color=color, label=comp, width=0.8)
        bottoms = [b + v for b, v in zip(bottoms, vals)]
    for r in rows:
        labels.append(f"{r['threads']}t\n{r['players']}p")
    ax.set_xticks(list(xs))
    ax.set_xticklabels(labels, fontsize=7)
    ax.set_ylabel("% of thread time")
    ax.set_ylim(0, 100)
    ax.set_title(f"Time breakdown: {title}")
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5))
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _by_threads(rows):
    groups = collections.defaultdict(list)
    for r in rows:
        groups[int(r["threads"])].append(r)
    for t in groups:
        groups[t].sort(key=lambda r: int(r["players"]))
    return dict(sorted(groups.items()))


def plot_lines(rows, title, path, series, ylabel):
    fig, ax = plt.subplots(figsize=(6, 4.2))
    for threads, rs in _by_threads(rows).items():
        xs = [int(r["players"]) for r in rs]
        for key, style, name in series:
            ys = [_num(r, key) for r in rs]
            pts = [(x, y) for x, y in zip(xs, ys) if y is not None]
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], style, marker="o",
                        label=f"{threads} thread{'s' if threads > 1 else ''}{name}")
    ax.set_xlabel("players")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def plot_lock_wait(rows, title, path):
    for r in rows:
        lock = sum(_num(r, f"server.breakdown_pct.{k}") or 0 for k in ("lock_leaf", "lock_parent"))
        wait = sum(_num(r, f"server.breakdown_pct.{k}") or 0 for k in ("intra_wait", "inter_wait"))
        r["_lock"], r["_wait"] = lock, wait
    plot_lines(rows, f"Lock and wait share: {title}", path,
               [("_lock", "-", " lock"), ("_wait", "--", " wait")], "% of thread time")


def plot_capacity(rows, title, path):
    """Capacity: p50 and p99 response against players (left), share of commands answered (right),
    with the 50 ms p99 target drawn in."""
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    ax2 = ax.twinx()
    for threads, rs in _by_threads(rows).items():
        xs = [int(r["players"]) for r in rs]
        label = f"{threads} thread{'s' if threads > 1 else ''}"
        for key, style, name in (("bots.response_ms.p50", "-", " p50"), ("bots.response_ms.p99", "--", " p99")):
            pts = [(x, _num(r, key)) for x, r in zip(xs, rs) if _num(r, key) is not None]
            ax.plot([p[0] for p in pts], [p[1] for p in pts], style, marker="o", label=label + name)
        share = [(x, 100.0 * _num(r, "bots.commands_answered") / _num(r, "bots.requests_sent"))
                 for x, r in zip(xs, rs) if _num(r, "bots.requests_sent")]
        ax2.plot([p[0] for p in share], [p[1] for p in share], ":", marker="s", color="gray",
                 label=label + " answered %")
    ax.axhline(50, color="red", linewidth=0.8, alpha=0.6)
    ax.set_xlabel("players (bots)")
    ax.set_ylabel("response time (ms)")
    ax2.set_ylabel("commands answered (%)")
    ax2.set_ylim(0, 105)
    ax.set_title(f"Capacity: {title}", fontsize=10)
    ax.grid(alpha=0.3)
    lines = ax.get_legend_handles_labels()
    lines2 = ax2.get_legend_handles_labels()
    ax.legend(lines[0] + lines2[0], lines[1] + lines2[1], fontsize=8, loc="upper left")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def cmd_sweep(args):
    rows = _load(args.table)
    if not rows:
        sys.exit(f"plot.py: no successful rows in {args.table}")
    os.makedirs(args.out, exist_ok=True)
    groups = collections.defaultdict(list)
    for r in rows:
        groups[(r["locking"], r["frame_mode"], r["map"])].append(r)
    for (locking, frame, mp), rs in sorted(groups.items()):
        title = f"{locking}, {frame} frames, {mp}"
        stem = os.path.join(args.out, f"{locking}_{frame}_{os.path.splitext(mp)[0]}")
        plot_breakdown(rs, title, stem + "_breakdown.png")
        plot_lines(rs, f"Response rate: {title}", stem + "_response_rate.png",
                   [("bots.response_rate", "-", "")], "replies / s")
        plot_lines(rs, f"Response time: {title}", stem + "_response_time.png",
                   [("bots.response_ms.mean", "-", " mean"), ("bots.response_ms.p99", "--", " p99")],
                   "response time (ms)")
        plot_lock_wait(rs, title, stem + "_lock_wait.png")
        plot_capacity(rs, title, stem + "_capacity.png")
        print(f"wrote {stem}_*.png")


def cmd_ckpt(args):
    """aftershock-ckpt-bench --csv output: its first line is a '# state ...' comment; its rows are
    an updates sweep at one skew, then a skew sweep at one updates count."""
    with open(args.table, newline="") as f:
        rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
    if not rows:
        sys.exit(f"plot.py: {args.table} has no rows")
    os.makedirs(args.out, exist_ok=True)

    def sweep_of(fixed, varying):
        # The value of `fixed` shared by the most distinct values of `varying`: that sweep's rows.
        spread = collections.defaultdict(set)
        for r in rows:
            spread[r[fixed]].add(r[varying])
        at = max(spread, key=lambda k: len(spread[k]))
        return at, [r for r in rows if r[fixed] == at]

    fig, axes = plt.subplots(1, 2, figsize=(10, 4), squeeze=False)
    panels = (("skew", "updates", "updates per tick", True), ("updates", "skew", "Zipf skew", False))
    for ax, (fixed, varying, xlabel, log_x) in zip(axes[0], panels):
        at, sweep = sweep_of(fixed, varying)
        by_alg = collections.defaultdict(list)
        for r in sweep:
            by_alg[r["algorithm"]].append((float(r[varying]), float(r["overhead_ms"])))
        for alg, pts in sorted(by_alg.items()):
            pts.sort()
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=alg)
        if log_x:
            ax.set_xscale("log", base=2)
        ax.set_xlabel(xlabel)
        ax.set_ylabel("overhead per tick (ms)")
        ax.set_title(f"{fixed} {at}")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    path = os.path.join(args.out, "ckpt_overhead.png")
    fig.savefig(path, dpi=120)
    print(f"wrote {path}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name, fn in (("sweep", cmd_sweep), ("ckpt", cmd_ckpt)):
        p = sub.add_parser(name)
        p.add_argument("table")
        p.add_argument("--out", default="out/figs")
        p.set_defaults(fn=fn)
    args = ap.parse_args()
    if not os.path.exists(args.table):
        ap.error(f"{args.table} does not exist")
    args.fn(args)


if __name__ == "__main__":
    main()
