#!/usr/bin/python3
"""Draws the paper's figures from an experiment table (tools/experiments/experiment.py's results.csv).

  plot.py sweep out/experiment/results.csv --out out/figs
      breakdown.png      stacked time breakdown per (threads, players)   (paper Fig. 5a/6a)
      response_rate.png  replies/s against players, one line per thread count   (Fig. 5b)
      response_time.png  mean and p99 response ms against players              (Fig. 5c)
      lock_wait.png      lock and wait share of thread time against players
      capacity.png       p50 and p99 response and the share of commands answered against players
  plot.py ckpt ckpt.csv [old.csv ...] --out out/figs
      ckpt_figure2.png   per Zipf skew: overhead per tick (with the baseline tick), worst boundary
                         pause and checkpoint time against updates per tick, one line per
                         (build, algorithm) (ckpt.csv: aftershock-ckpt-bench --csv > ckpt.csv);
                         also prints the numbers as a Markdown table
  plot.py recovery recovery.csv --out out/figs
      recovery_time.png  recovery time (restore + replay) against checkpoint interval and against
                         players, one colour per checkpoint algorithm, solid serial replay, dashed
                         parallel (recovery.csv: tools/experiments/recovery_curve.py)

  plot.py replay out/replay/replay.csv --out out/figs   (tools/experiments/replay_sweep.py's table)
      replay_scaling.png        one trace replayed at 1, 2, 4, 8 threads: speed (x real time) and
                                conflicts (leaves shared by 2+ threads per frame, commands that
                                waited for a lock), one line per scheme, titled with nproc
      replay_scheme_lock.png    lock share of thread time against threads, one line per scheme
      replay_scheme_wait.png    barrier wait share of thread time against threads, one line per scheme
      replay_scheme_shared.png  leaves shared by 2+ threads per frame against threads, one line per scheme
  plot.py schemes out/experiment/results.csv --out out/figs   (live runs, --locking a,b,c,d)
      schemes_MODE_MAP_{p99,lock,wait}.png   response p99, lock share and barrier wait share
                         against players, one line per (locking scheme, threads)
  plot.py fig7 depth4.csv depths.csv ... --out out/figs   (experiment tables, docs/architecture.md)
      fig7_locking.png   the areanode paper's Figure 7: (a) leaf and parent lock time against
                         players, (b) leaves locked per request against areanode depth 1-8,
                         (c) leaves shared by 2+ threads per frame against players
  plot.py assign out/assign/results.csv [more.csv ...] --out out/figs   (experiment.py --assign a,b,c)
      assign_MAP_BEHAVIOR.png   the paper's figures per assignment policy: (a) stacked time
                         breakdown, one bar group per player count with one bar per policy;
                         (b) leaves shared by 2+ threads per frame against players; (c) lock
                         plus barrier wait share and the per-thread command imbalance; (d) p99
                         response; also prints the numbers as a Markdown table
  plot.py replay-assign out/replay_assign/replay.csv --out out/figs   (replay_sweep.py --assign ...)
      replay_assign.png  one trace replayed at 2-8 threads per assignment policy: leaves shared,
                         commands that waited, per-thread imbalance, lock + wait; prints a table

One figure set per (locking, frame mode, map) found in the sweep table. Runs under Debian's python3
(python3-matplotlib), hence the /usr/bin/python3 shebang.
"""
import argparse
import collections
import csv
import os
import statistics
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


def _ckpt_rows(paths):
    """Rows of one or more aftershock-ckpt-bench --csv tables ('#' lines are comments). A table
    without a 'build' value takes its file name, so old and new binaries can be drawn together.
    Rows of the same (build, algorithm, updates, skew) from several invocations (alternated runs,
    tools/ckpt_bench/compare.sh) merge into one: medians, the widest range, the worst maxima."""
    groups = collections.OrderedDict()
    for path in paths:
        with open(path, newline="") as f:
            for r in csv.DictReader(line for line in f if not line.startswith("#")):
                r["build"] = r.get("build") or os.path.splitext(os.path.basename(path))[0]
                groups.setdefault((r["build"], r["algorithm"], r["updates"], r["skew"]), []).append(r)
    rows = []
    for same in groups.values():
        merged = dict(same[0])
        for key in same[0]:
            vals = [_num(r, key) for r in same]
            if any(v is None for v in vals) or key in ("updates", "skew"):
                continue
            if key.endswith("_min_ms"):
                merged[key] = str(min(vals))
            elif key.endswith("_max_ms") or key in ("max_tick_ms", "max_pause_ms", "max_pause_cpu_ms"):
                merged[key] = str(max(vals))
            else:
                merged[key] = str(statistics.median(vals))
        merged["verified"] = "yes" if all(r.get("verified") == "yes" for r in same) else "NO"
        merged["invocations"] = str(len(same))
        rows.append(merged)
    return rows


def cmd_ckpt(args):
    """The checkpoint paper's Figure 2 as far as it applies (VLDB'09: overhead, checkpoint time
    against updates per tick), with the worst boundary pause in place of recovery time: one row of
    panels per Zipf skew, one line per (build, algorithm), error bars = min..max over the runs."""
    all_rows = _ckpt_rows(args.table)
    # 2nd-store is no algorithm but ping-pong's defining store alone (the bench's header comment):
    # drawn on the overhead panel as the least a ping-pong with a separate copy adds.
    rows = [r for r in all_rows if r["algorithm"] not in ("none", "2nd-store")]
    second = [r for r in all_rows if r["algorithm"] == "2nd-store"]
    # The baseline's boundary returns at once: its worst boundary call is the floor of the pause
    # measurement on the machine at that moment (tables of an older bench lack the column).
    floor = {(r["build"], r["updates"], r["skew"]): r.get("boundary_max_ms") for r in all_rows
             if r["algorithm"] == "none"}
    if not rows:
        sys.exit(f"plot.py: {' '.join(args.table)} has no checkpoint rows")
    os.makedirs(args.out, exist_ok=True)
    skews = sorted({float(r["skew"]) for r in rows})
    panels = (("overhead_ms", "overhead per tick (ms)", False), ("max_pause_ms", "worst boundary pause (ms)", True),
              ("ckpt_ms", "checkpoint time (ms)", True))
    fig, axes = plt.subplots(len(skews), len(panels), figsize=(13, 3.8 * len(skews)), squeeze=False)
    for row_axes, skew in zip(axes, skews):
        at = [r for r in rows if float(r["skew"]) == skew]
        series = collections.defaultdict(list)
        for r in at:
            series[(r["build"], r["algorithm"])].append(r)
        builds = sorted({b for b, _ in series})
        algs = sorted({a for _, a in series})
        for ax, (key, ylabel, log_y) in zip(row_axes, panels):
            for (build, alg), pts in sorted(series.items()):
                # One colour per algorithm, one line style per build (old dashed beside new solid).
                style = dict(color=f"C{algs.index(alg)}", linestyle=["-", "--", ":", "-."][builds.index(build) % 4])
                pts.sort(key=lambda r: int(r["updates"]))
                xs = [int(r["updates"]) for r in pts]
                ys = [float(r[key]) for r in pts]
                label = f"{alg} ({build})" if build else alg
                if key == "overhead_ms":
                    lo = [y - float(r["overhead_min_ms"]) for y, r in zip(ys, pts)]
                    hi = [float(r["overhead_max_ms"]) - y for y, r in zip(ys, pts)]
                    ax.errorbar(xs, ys, yerr=[lo, hi], marker="o", capsize=3, label=label, **style)
                else:
                    ax.plot(xs, ys, marker="o", label=label, **style)
            if key == "overhead_ms":  # the baseline tick the overheads are added to
                base = {}
                for r in at:
                    base.setdefault(int(r["updates"]), float(r["base_tick_ms"]))
                bx = sorted(base)
                ax.plot(bx, [base[x] for x in bx], color="gray", linestyle="--", label="baseline tick")
                for build in builds:
                    pts = sorted((int(r["updates"]), float(r["overhead_ms"])) for r in second
                                 if r["build"] == build and float(r["skew"]) == skew)
                    if pts:
                        ax.plot([x for x, _ in pts], [y for _, y in pts], color="black", marker="x",
                                linestyle=":", label=f"2nd store alone: ping-pong's floor ({build})")
            if key == "max_pause_ms":  # the floor: the baseline's worst boundary call, per build
                for build in builds:
                    pts = sorted((int(u), float(v)) for (b, u, sk), v in floor.items()
                                 if b == build and float(sk) == skew and v not in (None, ""))
                    if pts:
                        ax.plot([x for x, _ in pts], [y for _, y in pts], color="gray", marker=".",
                                linestyle=["-", "--", ":", "-."][builds.index(build) % 4],
                                label=f"baseline's worst boundary call ({build})")
            ax.set_xscale("log")
            if log_y:
                ax.set_yscale("log")
            ax.set_xlabel("updates per tick")
            ax.set_ylabel(ylabel)
            ax.set_title(f"Zipf skew {skew:g}")
            ax.grid(alpha=0.3)
        row_axes[0].legend(fontsize=7)
        floor_lines = [h for h in row_axes[1].get_lines() if h.get_label().startswith("baseline's")]
        if floor_lines:
            row_axes[1].legend(handles=floor_lines, fontsize=7)
    fig.tight_layout()
    path = os.path.join(args.out, "ckpt_figure2.png")
    fig.savefig(path, dpi=120)
    print(f"wrote {path}")
    # The same numbers as a Markdown table (docs/recovery-measurements.md quotes it). "-" where a
    # column is missing (tables of an older bench).
    def col(r, key, fmt):
        v = _num(r, key)
        return "-" if v is None else fmt.format(v)

    print("| build | algorithm | updates | skew | base tick ms | overhead ms [min..max] | cpu overhead ms "
          "| worst pause ms (cpu) | boundary p99 / worst ms (baseline's worst) | checkpoint ms |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in sorted(rows + second, key=lambda r: (float(r["skew"]), int(r["updates"]), r["algorithm"], r["build"])):
        print(f"| {r['build']} | {r['algorithm']} | {r['updates']} | {r['skew']} | {col(r, 'base_tick_ms', '{:.3f}')} "
              f"| {col(r, 'overhead_ms', '{:.3f}')} [{col(r, 'overhead_min_ms', '{:.3f}')}.."
              f"{col(r, 'overhead_max_ms', '{:.3f}')}] | {col(r, 'cpu_overhead_ms', '{:.3f}')} "
              f"| {col(r, 'max_pause_ms', '{:.3f}')} ({col(r, 'max_pause_cpu_ms', '{:.3f}')}) "
              f"| {col(r, 'boundary_p99_ms', '{:.3f}')} / {col(r, 'boundary_max_ms', '{:.3f}')} "
              f"({col({'v': floor.get((r['build'], r['updates'], r['skew']))}, 'v', '{:.3f}')}) "
              f"| {col(r, 'ckpt_ms', '{:.2f}')} |")


SCHEME_STYLE = {"sequential": ("k", "s"), "global": ("#d62728", "o"), "areanode": ("#1f77b4", "^"),
                "areanode-opt": ("#2ca02c", "D")}


def _replay_rows(path):
    """Replay rows with per-point means over repetitions: {(locking, threads): {key: mean}}."""
    rows = _load(path)
    if any(r.get("assign") for r in rows):  # a policy sweep: these figures are block's
        rows = [r for r in rows if r.get("assign") == "block"]
    if not rows:
        sys.exit(f"{path}: no successful replay rows (with --assign block)")
    points = collections.defaultdict(list)
    for r in rows:
        lock = sum(_num(r, f"replay.breakdown_pct.{k}") or 0 for k in ("lock_leaf", "lock_parent"))
        wait = sum(_num(r, f"replay.breakdown_pct.{k}") or 0 for k in ("intra_wait", "inter_wait"))
        r["_lock"], r["_wait"] = lock, wait
        points[(r["locking"], int(r["threads"]))].append(r)
    keys = ("loadavg_1m", "replay.speed_x_realtime", "replay.wall_s", "replay.lock.shared_leaves_pct",
            "replay.lock.waited_commands_pct", "replay.lock.relock_pct", "_lock", "_wait")
    means = {}
    for p, rs in points.items():
        means[p] = {k: statistics.mean(v for v in (_num(r, k) for r in rs) if v is not None) for k in keys
                    if any(_num(r, k) is not None for r in rs)}
        means[p]["reps"] = len(rs)
    first = rows[0]
    loads = [_num(r, "loadavg_1m") for r in rows if _num(r, "loadavg_1m") is not None]
    load = f", load avg {min(loads):.1f}-{max(loads):.1f}" if loads else ""
    trace = (f"{os.path.basename(first.get('replay.map', '?'))}, "
             f"{int(_num(first, 'replay.max_players_online') or _num(first, 'replay.max_players') or 0)} players max, "
             f"{int(_num(first, 'replay.ticks') or 0)} ticks{load}")
    return means, int(first.get("nproc") or os.cpu_count()), trace


def _scheme_lines(ax, means, key, ylabel, nproc, skip=()):
    for scheme in SCHEME_STYLE:
        if scheme in skip:
            continue
        pts = sorted((t, m[key]) for (lk, t), m in means.items() if lk == scheme and key in m)
        if key == "replay.lock.shared_leaves_pct":
            pts = [p for p in pts if p[0] >= 2]  # defined only for frames with two locking threads
        if not pts:
            continue
        color, marker = SCHEME_STYLE[scheme]
        ax.plot([p[0] for p in pts], [p[1] for p in pts], "-", color=color, marker=marker, label=scheme)
    _thread_axis(ax, sorted({t for (_, t) in means}), nproc, ylabel)
    ax.legend(fontsize=8)


def _save(fig, path, dpi=120):
    """Lays out, writes and closes `fig`, and says so."""
    fig.tight_layout()
    fig.savefig(path, dpi=dpi)
    plt.close(fig)
    print(f"wrote {path}")


def _thread_axis(ax, threads, nproc, ylabel):
    """A replay-threads x axis (log 2, the machine's cores dotted) and the y label."""
    ax.set_xscale("log", base=2)
    ax.set_xticks(threads)
    ax.set_xticklabels([str(t) for t in threads])
    ax.axvline(nproc, color="gray", linestyle=":", linewidth=1)
    ax.set_xlabel(f"replay threads (dotted: this machine's {nproc} cores)")
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)


def cmd_replay(args):
    means, nproc, trace = _replay_rows(args.table)
    os.makedirs(args.out, exist_ok=True)
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.2))
    _scheme_lines(a, means, "replay.speed_x_realtime", "replay speed (x real time)", nproc)
    a.set_ylim(bottom=0)
    a.set_title("Speed", fontsize=10)
    no_leaves = ("sequential", "global")  # no leaf locks: nothing to share
    _scheme_lines(b, means, "replay.lock.shared_leaves_pct", "% (solid: leaves shared per frame)", nproc,
                  skip=no_leaves)
    for scheme in SCHEME_STYLE:
        pts = sorted((t, m["replay.lock.waited_commands_pct"]) for (lk, t), m in means.items()
                     if lk == scheme and "replay.lock.waited_commands_pct" in m and lk != "sequential")
        if pts:
            color, marker = SCHEME_STYLE[scheme]
            b.plot([p[0] for p in pts], [p[1] for p in pts], "--", color=color, marker=marker,
                   label=f"{scheme}: commands that waited")
    b.set_ylim(0, 105)
    b.legend(fontsize=7)
    b.set_title("Conflicts (dashed: % of commands that waited for a lock)", fontsize=10)
    fig.suptitle(f"One trace replayed at 1-{max(t for _, t in means)} threads on {nproc} cores "
                 f"(nproc): {trace}", fontsize=10)
    fig.tight_layout()
    fig.savefig(os.path.join(args.out, "replay_scaling.png"), dpi=120)
    plt.close(fig)
    for name, key, ylabel, title in (
            ("lock", "_lock", "% of thread time", "Lock share (leaf + parent lock waits)"),
            ("wait", "_wait", "% of thread time", "Wait share (barriers between phases)"),
            ("shared", "replay.lock.shared_leaves_pct", "% of leaves",
             "Leaves shared by 2+ threads per frame (areanode schemes)")):
        fig, ax = plt.subplots(figsize=(6.2, 4.2))
        _scheme_lines(ax, means, key, ylabel, nproc,
                      skip=("sequential", "global") if name == "shared" else ())
        ax.set_ylim(0, 105 if name == "shared" else None)
        ax.set_title(f"{title}\nreplays of one trace ({trace}), {nproc} cores", fontsize=9)
        fig.tight_layout()
        fig.savefig(os.path.join(args.out, f"replay_scheme_{name}.png"), dpi=120)
        plt.close(fig)
    print("| locking | threads | reps | speed x real time | lock % | wait % | shared leaves % | waited commands % |")
    print("|---|---|---|---|---|---|---|---|")
    for (lk, t), m in sorted(means.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        print(f"| {lk} | {t} | {m['reps']} | {m.get('replay.speed_x_realtime', 0):.1f} | {m.get('_lock', 0):.2f} "
              f"| {m.get('_wait', 0):.1f} | {m.get('replay.lock.shared_leaves_pct', 0):.1f} "
              f"| {m.get('replay.lock.waited_commands_pct', 0):.2f} |")
    print(f"wrote {args.out}/replay_scaling.png and replay_scheme_{{lock,wait,shared}}.png")


def _most_common(values):
    return collections.Counter(values).most_common(1)[0][0]


def cmd_recovery(args):
    """The recovery-time panel of the checkpoint paper's Figure 2 for our server: recovery time
    against checkpoint interval (at the most common player count) and against players (at the most
    common interval), one colour per algorithm, one line style per replay thread count."""
    rows = [r for r in _load(args.table) if r.get("replay_threads")]
    if not rows:
        sys.exit(f"plot.py: {args.table} has no recovery rows")
    os.makedirs(args.out, exist_ok=True)
    at_players = _most_common(int(r["players"]) for r in rows)
    at_interval = _most_common(int(r["interval_ms"]) for r in rows)
    algs = sorted({r["algorithm"] for r in rows})
    threads = sorted({int(r["replay_threads"]) for r in rows})
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    for ax, (xkey, fixed_key, fixed, xlabel) in zip(axes, (
            ("interval_ms", "players", at_players, "checkpoint interval (ms)"),
            ("players", "interval_ms", at_interval, "players"))):
        for alg in algs:
            for t in threads:
                pts = sorted((int(r[xkey]), float(r["recovery_ms"]), int(r["ticks_replayed"])) for r in rows
                             if r["algorithm"] == alg and int(r["replay_threads"]) == t
                             and int(r[fixed_key]) == fixed)
                if not pts:
                    continue
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", color=f"C{algs.index(alg)}",
                        linestyle=["-", "--", ":", "-."][threads.index(t) % 4],
                        label=f"{alg}, {'serial' if t == 1 else f'{t} replay threads'}")
                if t == threads[0]:  # how many ticks the crash left to replay (the same for every t)
                    for x, y, ticks in pts:
                        ax.annotate(f"{ticks}t", (x, y), textcoords="offset points", xytext=(4, 4),
                                    fontsize=6, color=f"C{algs.index(alg)}")
        ax.set_xlabel(xlabel)
        ax.set_ylabel("recovery time: restore + replay (ms)")
        ax.set_title(f"at {fixed} {'players' if fixed_key == 'players' else 'ms checkpoint interval'}")
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=7)
    fig.suptitle("Recovery time per checkpoint algorithm, serial vs parallel replay "
                 f"({os.cpu_count()} cores; kill -9 at a random point of the checkpoint cycle; "
                 "labels: ticks replayed)", fontsize=10)
    fig.tight_layout()
    path = os.path.join(args.out, "recovery_time.png")
    fig.savefig(path, dpi=120)
    print(f"wrote {path}")



def cmd_fig7(args):
    """The areanode paper's Figure 7 from live runs: (a) leaf and parent lock time against players,
    (b) leaves locked per request against areanode depth, (c) leaves shared by two or more threads
    per frame against players. Reads one or more experiment tables: the rows at the default depth
    (4) give (a) and (c), one line per locking scheme; rows at other depths give (b)."""
    rows = []
    for path in args.table:
        rows += _load(path)
    if not rows:
        sys.exit(f"plot.py: no successful rows in {' '.join(args.table)}")
    os.makedirs(args.out, exist_ok=True)
    depth_of = lambda r: int(_num(r, "server.areanode_depth") or 4)
    fig, (a, b, c) = plt.subplots(1, 3, figsize=(15, 4.2))
    by_scheme = collections.defaultdict(list)
    for r in rows:
        if depth_of(r) == 4 and r["locking"] in ("areanode", "areanode-opt"):
            by_scheme[(r["locking"], int(r["threads"]))].append(r)
    for (scheme, threads), rs in sorted(by_scheme.items()):
        rs.sort(key=lambda r: int(r["players"]))
        xs = [int(r["players"]) for r in rs]
        label = f"{scheme}, {threads} threads"
        a.plot(xs, [_num(r, "server.breakdown_pct.lock_leaf") or 0 for r in rs], "-", marker="o",
               label=label + ": leaf")
        a.plot(xs, [_num(r, "server.breakdown_pct.lock_parent") or 0 for r in rs], "--", marker="s",
               label=label + ": parent")
        c.plot(xs, [_num(r, "server.lock.shared_leaves_pct") or 0 for r in rs], "-", marker="o",
               label=label)
    a.set_xlabel("players")
    a.set_ylabel("% of thread time")
    a.set_title("(a) leaf and parent lock time", fontsize=10)
    c.set_xlabel("players")
    c.set_ylabel("% of leaves locked by 2+ threads in a frame")
    c.set_ylim(0, 105)
    c.set_title("(c) leaves shared per frame", fontsize=10)
    by_players = collections.defaultdict(list)
    for r in rows:
        if r["locking"] in ("areanode", "areanode-opt"):
            by_players[(r["locking"], int(r["players"]))].append(r)
    for (scheme, players), rs in sorted(by_players.items()):
        depths = sorted({depth_of(r) for r in rs})
        if len(depths) < 2:
            continue
        rs.sort(key=depth_of)
        b.plot([depth_of(r) for r in rs], [_num(r, "server.lock.leaves_per_request") or 0 for r in rs],
               "-", marker="o", label=f"{scheme}, {players} players: leaves")
        b.plot([depth_of(r) for r in rs], [(_num(r, "server.lock.leaves_per_request_pct") or 0) for r in rs],
               ":", marker="s", label=f"{scheme}, {players} players: % of all leaves")
    b.set_xlabel("areanode depth (2^depth leaves)")
    b.set_ylabel("leaves locked per request (and % of all leaves)")
    b.set_yscale("log")
    b.set_title("(b) leaves locked per request", fontsize=10)
    maps = sorted({r["map"] for r in rows})
    for ax in (a, b, c):
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle(f"Figure 7 on {', '.join(maps)} (fixed frames, {os.cpu_count()}-core machine)", fontsize=11)
    _save(fig, os.path.join(args.out, "fig7_locking.png"))



def cmd_schemes(args):
    """Locking schemes side by side from live runs: one figure per metric (response p99, lock share
    of thread time, barrier wait share), one line per (scheme, threads), against players; one set
    per (frame mode, map) in the table (experiment.py --locking a,b,c ...; `sequential` runs on
    one thread, the reference the others are compared with)."""
    rows = _load(args.table)
    if not rows:
        sys.exit(f"plot.py: no successful rows in {args.table}")
    os.makedirs(args.out, exist_ok=True)
    for r in rows:
        r["_lock"] = sum(_num(r, f"server.breakdown_pct.{k}") or 0 for k in ("lock_leaf", "lock_parent"))
        r["_wait"] = sum(_num(r, f"server.breakdown_pct.{k}") or 0 for k in ("intra_wait", "inter_wait"))
    groups = collections.defaultdict(lambda: collections.defaultdict(list))
    for r in rows:
        groups[(r["frame_mode"], r["map"])][(r["locking"], int(r["threads"]))].append(r)
    metrics = (("bots.response_ms.p99", "response p99 (ms)", "p99"),
               ("_lock", "lock share of thread time (%)", "lock"),
               ("_wait", "barrier wait share of thread time (%)", "wait"))
    for (frame, mp), by_scheme in sorted(groups.items()):
        stem = os.path.join(args.out, f"schemes_{frame}_{os.path.splitext(mp)[0]}")
        for key, ylabel, name in metrics:
            fig, ax = plt.subplots(figsize=(6.5, 4.2))
            for (scheme, threads) in sorted(by_scheme, key=lambda k: (list(SCHEME_STYLE).index(k[0])
                                                                      if k[0] in SCHEME_STYLE else 99, k[1])):
                rs = sorted(by_scheme[(scheme, threads)], key=lambda r: int(r["players"]))
                pts = [(int(r["players"]), _num(r, key)) for r in rs if _num(r, key) is not None]
                color, marker = SCHEME_STYLE.get(scheme, ("gray", "x"))
                ax.plot([p[0] for p in pts], [p[1] for p in pts], "-", color=color, marker=marker,
                        label=f"{scheme}, {threads} thread{'s' if threads > 1 else ''}")
            if key == "bots.response_ms.p99":
                ax.axhline(50, color="red", linewidth=0.8, alpha=0.6)
            ax.set_xlabel("players (bots)")
            ax.set_ylabel(ylabel)
            ax.set_ylim(bottom=0)
            ax.set_title(f"{ylabel.split(' (')[0]}: {frame} frames, {mp}", fontsize=10)
            ax.grid(alpha=0.3)
            ax.legend(fontsize=8)
            fig.tight_layout()
            fig.savefig(f"{stem}_{name}.png", dpi=120)
            plt.close(fig)
        print(f"wrote {stem}_{{p99,lock,wait}}.png")


ASSIGN_STYLE = {"block": "#1f77b4", "round-robin": "#ff7f0e", "locality": "#2ca02c"}


def cmd_replay_assign(args):
    """Assignment policies on one trace (replay_sweep.py --assign block,round-robin,locality):
    conflicts against replay threads, one line per policy (means over repetitions)."""
    rows = _load(args.table)
    if not rows or not any(r.get("assign") for r in rows):
        sys.exit(f"{args.table}: no successful rows with an assign column (replay_sweep.py --assign ...)")
    os.makedirs(args.out, exist_ok=True)
    points = collections.defaultdict(list)
    for r in rows:
        r["_lockwait"] = sum(_num(r, f"replay.breakdown_pct.{k}") or 0
                             for k in ("lock_leaf", "lock_parent", "intra_wait", "inter_wait"))
        # Per second of the recorded game (ticks at the trace's rate), not of the replay's wall time.
        game_s = (_num(r, "replay.ticks") or 0) / (_num(r, "replay.tick_hz") or 30)
        r["_migrations_per_game_s"] = (_num(r, "replay.assignment.migrations") or 0) / game_s if game_s else None
        points[(r["assign"], r["locking"], int(r["threads"]))].append(r)
    keys = ("replay.lock.shared_leaves_pct", "replay.lock.waited_commands_pct", "_lockwait",
            "replay.assignment.exec_imbalance_pct", "_migrations_per_game_s",
            "replay.speed_x_realtime")
    means = {p: {k: statistics.mean(_num(r, k) for r in rs) for k in keys
                 if all(_num(r, k) is not None for r in rs)} for p, rs in points.items()}
    nproc = int(rows[0].get("nproc") or os.cpu_count())
    first = rows[0]
    trace = (f"{os.path.basename(first.get('replay.map', '?'))}, "
             f"{int(_num(first, 'replay.max_players') or 0)} player slots, "
             f"{int(_num(first, 'replay.ticks') or 0)} ticks")
    panels = (("replay.lock.shared_leaves_pct", "% of leaves", "(a) leaves shared by 2+ threads per frame"),
              ("replay.lock.waited_commands_pct", "% of commands", "(b) commands that waited for a lock"),
              ("replay.assignment.exec_imbalance_pct", "% of the mean", "(c) per-thread command imbalance"),
              ("_lockwait", "% of thread time", "(d) lock + barrier wait"))
    fig, axes = plt.subplots(1, 4, figsize=(18, 4.3))
    for ax, (key, ylabel, title) in zip(axes, panels):
        for (assign, locking) in sorted({(a, lk) for a, lk, _ in means}):
            pts = sorted((t, m[key]) for (a, lk, t), m in means.items()
                         if a == assign and lk == locking and key in m and t >= 2)
            ax.plot([p[0] for p in pts], [p[1] for p in pts], "-o", color=ASSIGN_STYLE.get(assign, "gray"),
                    label=f"{assign} ({locking})")
        if key == "replay.lock.shared_leaves_pct":
            ax.axhline(20, color="red", linewidth=0.8, alpha=0.6)
        _thread_axis(ax, sorted({t for (_, _, t) in means if t >= 2}), nproc, ylabel)
        ax.set_ylim(bottom=0)
        ax.set_title(title, fontsize=9)
        ax.legend(fontsize=7)
    fig.suptitle(f"Assignment policies on one trace ({trace}), replayed on {nproc} cores", fontsize=10)
    _save(fig, os.path.join(args.out, "replay_assign.png"), dpi=110)
    print("| assign | locking | threads | shared leaves % | waited commands % | imbalance % | lock + wait % | migrations per game second |")
    print("|---|---|---|---|---|---|---|---|")
    for (a, lk, t), m in sorted(means.items(), key=lambda kv: (kv[0][2], kv[0][0])):
        print(f"| {a} | {lk} | {t} | {m.get('replay.lock.shared_leaves_pct', 0):.1f} "
              f"| {m.get('replay.lock.waited_commands_pct', 0):.2f} "
              f"| {m.get('replay.assignment.exec_imbalance_pct', 0):.1f} | {m.get('_lockwait', 0):.1f} "
              f"| {m.get('_migrations_per_game_s', 0):.1f} |")


def cmd_assign(args):
    """Assignment policies side by side (experiment.py --assign block,round-robin,locality): one
    figure per (map, bots' behaviour) with the stacked breakdown per (players, policy), the shared
    leaves, lock + wait and imbalance, and p99 against players."""
    rows = []
    for table in args.table:
        rows += _load(table)
    if not rows:
        sys.exit("plot.py: no successful rows")
    os.makedirs(args.out, exist_ok=True)
    groups = collections.defaultdict(list)
    for r in rows:
        r["_lockwait"] = sum(_num(r, f"server.breakdown_pct.{k}") or 0
                             for k in ("lock_leaf", "lock_parent", "intra_wait", "inter_wait"))
        groups[(r["map"], r.get("behavior") or r.get("bots.behavior") or "mixed")].append(r)
    print("| map | players | assign | p50 / p99 ms | shared leaves % | lock % | intra / inter wait % "
          "| imbalance % | routed % | migrations/s | longest reply gap ms |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for (mp, behavior), rs in sorted(groups.items()):
        policies = [a for a in ASSIGN_STYLE if any(r.get("assign", "block") == a for r in rs)]
        players = sorted({int(r["players"]) for r in rs})
        fig, axes = plt.subplots(1, 4, figsize=(19, 4.6), gridspec_kw={"width_ratios": [2.2, 1, 1, 1]})
        ax = axes[0]
        width = 0.8 / max(1, len(policies))
        for pi, policy in enumerate(policies):
            for xi, pl in enumerate(players):
                match = [r for r in rs if r.get("assign", "block") == policy and int(r["players"]) == pl]
                if not match:
                    continue
                r = match[0]
                bottom = 0.0
                for comp, color in zip(COMPONENTS, COLORS):
                    v = _num(r, f"server.breakdown_pct.{comp}") or 0.0
                    ax.bar(xi + (pi - (len(policies) - 1) / 2) * width, v, width * 0.95, bottom=bottom,
                           color=color, label=comp if (pi, xi) == (0, 0) else None,
                           edgecolor=ASSIGN_STYLE[policy], linewidth=1.2)
                    bottom += v
                ax.text(xi + (pi - (len(policies) - 1) / 2) * width, 101, policy[0].upper(),
                        ha="center", fontsize=7, color=ASSIGN_STYLE[policy])
        ax.set_xticks(range(len(players)))
        ax.set_xticklabels([f"{p} players" for p in players])
        ax.set_ylim(0, 106)
        ax.set_ylabel("% of thread time")
        ax.set_title("(a) time breakdown (B block, R round-robin, L locality)", fontsize=9)
        ax.legend(fontsize=6, loc="center left", bbox_to_anchor=(1.0, 0.5))
        for ax, key, ylabel, title in (
                (axes[1], "server.lock.shared_leaves_pct", "% of leaves", "(b) leaves shared by 2+ threads per frame"),
                (axes[2], "_lockwait", "% of thread time", "(c) lock + barrier wait (solid), imbalance (dashed)"),
                (axes[3], "bots.response_ms.p99", "ms", "(d) response p99")):
            for policy in policies:
                pts = sorted((int(r["players"]), _num(r, key)) for r in rs
                             if r.get("assign", "block") == policy and _num(r, key) is not None)
                ax.plot([p[0] for p in pts], [p[1] for p in pts], "-o", color=ASSIGN_STYLE[policy], label=policy)
                if key == "_lockwait":
                    imb = sorted((int(r["players"]), _num(r, "server.assignment.exec_imbalance_pct")) for r in rs
                                 if r.get("assign", "block") == policy
                                 and _num(r, "server.assignment.exec_imbalance_pct") is not None)
                    ax.plot([p[0] for p in imb], [p[1] for p in imb], "--", color=ASSIGN_STYLE[policy])
            if key == "server.lock.shared_leaves_pct":
                ax.axhline(20, color="red", linewidth=0.8, alpha=0.6)
            if key == "bots.response_ms.p99":
                ax.axhline(50, color="red", linewidth=0.8, alpha=0.6)
            ax.set_xlabel("players (bots)")
            ax.set_ylabel(ylabel)
            ax.set_ylim(bottom=0)
            ax.set_title(title, fontsize=9)
            ax.grid(alpha=0.3)
            ax.legend(fontsize=7)
        threads = sorted({r["threads"] for r in rs})
        fig.suptitle(f"Assignment policies: {mp}, {behavior} bots, {'/'.join(threads)} threads, "
                     f"{rs[0]['locking']}, {rs[0]['frame_mode']} frames", fontsize=10)
        _save(fig, os.path.join(args.out, f"assign_{os.path.splitext(mp)[0]}_{behavior}.png"), dpi=110)
        for pl in players:
            for policy in policies:
                for r in rs:
                    if r.get("assign", "block") != policy or int(r["players"]) != pl:
                        continue
                    f = lambda k: _num(r, k)
                    print(f"| {mp} {behavior} | {pl} | {policy} | {f('bots.response_ms.p50'):.1f} / "
                          f"{f('bots.response_ms.p99'):.1f} | {f('server.lock.shared_leaves_pct'):.1f} | "
                          f"{(f('server.breakdown_pct.lock_leaf') or 0) + (f('server.breakdown_pct.lock_parent') or 0):.2f} | "
                          f"{f('server.breakdown_pct.intra_wait'):.1f} / {f('server.breakdown_pct.inter_wait'):.1f} | "
                          f"{f('server.assignment.exec_imbalance_pct'):.1f} | {f('server.assignment.routed_commands_pct'):.1f} | "
                          f"{f('server.assignment.migrations_per_s'):.1f} | {f('bots.outage_ms'):.1f} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name, fn, nargs in (("sweep", cmd_sweep, None), ("ckpt", cmd_ckpt, "+"), ("replay", cmd_replay, None),
                            ("recovery", cmd_recovery, None), ("fig7", cmd_fig7, "+"),
                            ("schemes", cmd_schemes, None), ("assign", cmd_assign, "+"),
                            ("replay-assign", cmd_replay_assign, None)):
        p = sub.add_parser(name)
        p.add_argument("table", nargs=nargs)
        p.add_argument("--out", default="out/figs")
        p.set_defaults(fn=fn)
    args = ap.parse_args()
    for table in args.table if isinstance(args.table, list) else [args.table]:
        if not os.path.exists(table):
            ap.error(f"{table} does not exist")
        if not os.path.isfile(table):
            ap.error(f"{table} is not a file (give the table, e.g. results.csv)")
        problem = _table_problem(table)
        if problem:
            sys.exit(f"plot.py: {table}: {problem}")
    if os.path.exists(args.out) and not os.path.isdir(args.out):
        ap.error(f"--out {args.out}: exists and is not a directory")
    try:
        args.fn(args)
    except KeyError as e:  # a table another tool wrote (a results.json, a live table for a replay figure)
        sys.exit(f"plot.py {args.cmd}: the table has no column {e}: is it the table this figure is drawn "
                 f"from? (plot.py --help names each one's source)")


def _table_problem(path):
    """Why `path` is not a whole CSV table ('#' lines are comments), or None: a row with fewer or
    more fields than the header is a file cut short or not a table; drawing from it gave partial
    figures or a traceback."""
    try:
        with open(path, newline="") as f:
            rows = [r for r in csv.reader(line for line in f if not line.startswith("#")) if r]
    except (UnicodeDecodeError, csv.Error) as e:
        return f"not a CSV table ({e})"
    if not rows:
        return None  # empty: each command says it has no rows
    for n, r in enumerate(rows[1:], start=2):
        if len(r) != len(rows[0]):
            return f"row {n} has {len(r)} fields against the header's {len(rows[0])}: cut short, or not a table"
    return None


if __name__ == "__main__":
    main()
