#!/usr/bin/python3
"""experiment.py and plot.py against the real server and bots: a 2-bot point must run and give a
table that plot.py draws; bad flags must be refused before anything runs; a server that cannot
start must end its point with its exit status (it used to be polled for 120 s and reported as
"did not come up"), and every finished point must be in the table; a --durable rerun must not
delete a recorded game without --replace-data; plot.py must refuse a table cut short, and a table
of another kind, with a message instead of a traceback or partial figures.

  experiment_test.py BIN_DIR
"""
import csv
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
EXPERIMENT = os.path.join(HERE, "experiment.py")
PLOT = os.path.join(HERE, "plot.py")


def run(args, timeout=120):
    return subprocess.run([sys.executable, EXPERIMENT] + args, capture_output=True, text=True, timeout=timeout)


def main():
    bin_dir = sys.argv[1]
    with tempfile.TemporaryDirectory(prefix="aftershock-experiment-test-") as tmp:
        a_file = os.path.join(tmp, "a_file")
        open(a_file, "w").close()
        for flags, says in ((["--players", ","], "--players lists nothing"),
                            (["--players", "abc"], "--players: invalid literal"),
                            (["--threads", "0"], "--threads must all be in 1..64"),
                            (["--duration", "-5"], "--duration must be at least 1 s"),
                            (["--port", "0"], "--port 0: the"),
                            (["--map", os.path.join(tmp, "none.map")], "not a file"),
                            (["--out", a_file], "exists and is not a directory")):
            out = run(["--bin", bin_dir, "--out", os.path.join(tmp, "never")] + flags)
            assert out.returncode == 2 and says in out.stderr, (flags, out.returncode, out.stderr)
        assert not os.path.exists(os.path.join(tmp, "never"))

        # Two points, the first of which cannot start: it ends at once; the second runs.
        sweep = os.path.join(tmp, "sweep")
        out = run(["--bin", bin_dir, "--out", sweep, "--players", "2", "--threads", "1,2", "--duration", "2",
                   "--ramp", "1", "--warmup", "0.5", "--port", "28900",
                   "--server-arg=--max-records=0"])  # refused by the server: exit 2
        print(out.stdout, out.stderr)
        assert out.returncode == 1, out.returncode
        with open(os.path.join(sweep, "results.csv")) as f:
            rows = list(csv.DictReader(f))
        assert len(rows) == 2 and all(r["status"].startswith("server exited 2 before serving") for r in rows), rows

        good = os.path.join(tmp, "good")
        out = run(["--bin", bin_dir, "--out", good, "--players", "2", "--threads", "1", "--duration", "2",
                   "--ramp", "1", "--warmup", "0.5", "--port", "28950"])
        print(out.stdout, out.stderr)
        assert out.returncode == 0, out.returncode
        with open(os.path.join(good, "results.csv")) as f:
            rows = list(csv.DictReader(f))
        assert len(rows) == 1 and rows[0]["status"] == "ok", rows
        assert int(rows[0]["bots.connected"]) == 2 and int(rows[0]["bots.replies_received"]) > 0, rows[0]
        assert not os.path.exists(os.path.join(good, "results.csv.tmp"))

        # A rerun with --durable into an --out that holds a recorded game refuses to start, so
        # the log is kept (it used to be deleted); with --replace-data the point records anew.
        durable = os.path.join(tmp, "durable")
        segment = os.path.join(durable, "runs", "p2_t1_areanode-opt_fixed_dm_arena", "data", "log-000001.aslog")
        os.makedirs(os.path.dirname(segment))
        with open(segment, "w") as f:
            f.write("an earlier run's game")
        point = ["--bin", bin_dir, "--out", durable, "--players", "2", "--threads", "1", "--duration", "2",
                 "--ramp", "1", "--warmup", "0.5", "--port", "28970", "--durable"]
        out = run(point)
        assert out.returncode == 2 and "pass --replace-data to delete it" in out.stderr, (out.returncode, out.stderr)
        with open(segment) as f:
            assert f.read() == "an earlier run's game"
        assert not os.path.exists(os.path.join(durable, "results.csv"))
        out = run(point + ["--replace-data"])
        print(out.stdout, out.stderr)
        assert out.returncode == 0, out.returncode
        with open(segment, "rb") as f:
            assert f.read(4) == b"ASLG", "the server's own log segment"

        figs = os.path.join(tmp, "figs")
        plot = subprocess.run(["/usr/bin/python3", PLOT, "sweep", os.path.join(good, "results.csv"), "--out", figs],
                              capture_output=True, text=True, timeout=120)
        print(plot.stdout, plot.stderr)
        assert plot.returncode == 0, plot.returncode
        for png in ("breakdown.png", "response_rate.png", "response_time.png", "lock_wait.png", "capacity.png"):
            # one figure of each kind per (locking, frame mode, map)
            name = os.path.join(figs, "areanode-opt_fixed_dm_arena_" + png)
            assert os.path.getsize(name) > 1000, name
        # A table cut short drew partial figures (or a traceback) and exited 0.
        with open(os.path.join(good, "results.csv")) as f:
            text = f.read()
        cut = os.path.join(tmp, "cut.csv")
        with open(cut, "w") as f:
            f.write(text[: text.index("\n") + 1 + (len(text) - text.index("\n")) // 2])
        plot = subprocess.run(["/usr/bin/python3", PLOT, "sweep", cut, "--out", figs],
                              capture_output=True, text=True, timeout=120)
        assert plot.returncode == 1 and "cut short, or not a table" in plot.stderr, (plot.returncode, plot.stderr)
        plot = subprocess.run(["/usr/bin/python3", PLOT, "ckpt", os.path.join(good, "results.csv"), "--out", figs],
                              capture_output=True, text=True, timeout=120)
        assert plot.returncode == 1 and "the table has no column" in plot.stderr, (plot.returncode, plot.stderr)
    print("experiment_test: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
