#!/usr/bin/python3
"""restart_ab.py against the real server: a directory written by a 1 s game, restarted by the same
binary under two labels for 2 rounds. Every figure must be reported, from each of the 4 runs; the
tool must refuse a binary that is not there, and stop with an error when a server outlives
--timeout-s (a server told to serve for 60 s, against a timeout of 2 s). compare.py, which shares
restart_ab.py's argument checks, must refuse a --csv it could not write before its first round (it
writes the file only after the last).

  restart_ab_test.py BIN_DIR MAP
"""
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    bin_dir, map_path = sys.argv[1], sys.argv[2]
    server = os.path.join(bin_dir, "aftershock-server")
    tool = os.path.join(HERE, "restart_ab.py")
    with tempfile.TemporaryDirectory(prefix="aftershock-restart-ab-test-") as tmp:
        data = os.path.join(tmp, "data")
        subprocess.run([server, "--data-dir", data, "--map", map_path, "--port", "0", "--duration", "1"],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        out = subprocess.run([sys.executable, tool, "--data-dir", data, "--map", map_path, "--rounds", "2",
                              f"a={server}", f"b={server}"], capture_output=True, text=True)
        print(out.stdout, out.stderr)
        assert out.returncode == 0, f"restart_ab.py exited {out.returncode}"
        runs = re.findall(r"^round (\d) ([ab]): serving_ms ([\d.]+) total_ms ([\d.]+) restore_ms ([\d.]+) "
                          r"check_ms ([\d.]+) check (\w+)", out.stdout, re.M)
        assert sorted((r[0], r[1]) for r in runs) == [("1", "a"), ("1", "b"), ("2", "a"), ("2", "b")], runs
        assert all(float(r[2]) > 0 and float(r[3]) > 0 for r in runs), runs  # timed, and recovered
        for key in ("serving_ms", "total_ms", "restore_ms"):
            assert re.search(rf"^b +{key} median .* b/a median", out.stdout, re.M), key
        # The start-up replay check runs only where the directory holds two backups with log
        # between them, which a 1 s server run leaves or not; where a run skipped it (check_ms 0),
        # compare.py gives no ratio for it.
        a_checked = all(float(r[5]) > 0 for r in runs if r[1] == "a")
        check_line = r"^b +check_ms median .* b/a median" if a_checked else r"^b +check_ms median"
        assert re.search(check_line, out.stdout, re.M), ("check_ms", a_checked)
        assert "every run recovered state" in out.stdout
        missing = subprocess.run([sys.executable, tool, "--data-dir", data, "--map", map_path,
                                  f"a={server}", f"b={os.path.join(tmp, 'no-such-server')}"],
                                 capture_output=True, text=True)
        assert missing.returncode == 2 and "is not an executable file" in missing.stderr, missing.stderr
        empty = os.path.join(tmp, "empty")
        os.mkdir(empty)  # it timed a new world's start and said "every run recovered state"
        refused = subprocess.run([sys.executable, tool, "--data-dir", empty, "--map", map_path,
                                  f"a={server}", f"b={server}"], capture_output=True, text=True)
        assert refused.returncode == 2 and "no world.id, so no server wrote it" in refused.stderr, refused.stderr
        refused = subprocess.run([sys.executable, tool, "--data-dir", data, "--map", map_path, "--timeout-s", "inf",
                                  f"a={server}", f"b={server}"], capture_output=True, text=True)
        assert refused.returncode == 2 and "--timeout-s must be" in refused.stderr, refused.stderr
        hung = subprocess.run([sys.executable, tool, "--data-dir", data, "--map", map_path, "--rounds", "1",
                               "--timeout-s", "2", "--server-arg=--duration=60", f"a={server}", f"b={server}"],
                              capture_output=True, text=True, timeout=60)
        assert hung.returncode == 1 and "did not exit within 2 s (killed)" in hung.stderr, hung.stderr
        compare = os.path.join(HERE, "compare.py")
        for csv_path in (tmp, os.path.join(data, "world.id", "runs.csv")):  # a directory; under a file
            bad_csv = subprocess.run([sys.executable, compare, "--data-dir", data, "--map", map_path, "--rounds", "1",
                                      "--csv", csv_path, f"a={server}", f"b={server}"],
                                     capture_output=True, text=True, timeout=60)
            assert bad_csv.returncode == 2 and f"--csv {csv_path}: cannot be written" in bad_csv.stderr, bad_csv.stderr
            assert "round 1" not in bad_csv.stdout, bad_csv.stdout
    print("restart_ab_test: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
