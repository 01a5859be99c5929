#!/usr/bin/python3
"""aftershock-mapcheck --vis builds the PVS as the server does and says how far it has come on
stderr (vis::DescribeProgress), and --vis-cache none means no cache, as the server's flag does,
not a directory named "none". Runs in a temporary directory, so that such a directory would show.

Usage: vis_progress_test.py MAPCHECK_BINARY MAP
"""
import os
import re
import subprocess
import sys
import tempfile


def main():
    mapcheck, map_path = sys.argv[1], os.path.abspath(sys.argv[2])
    with tempfile.TemporaryDirectory() as tmp:
        run = subprocess.run([mapcheck, "--vis", "--vis-cache", "none", map_path], cwd=tmp,
                             capture_output=True, text=True, timeout=120)
        left = os.listdir(tmp)
    print(run.stdout, run.stderr)
    if run.returncode != 0:
        sys.exit("expected exit 0, got %d" % run.returncode)
    if left:
        sys.exit("--vis-cache none wrote into the working directory: %s" % left)
    start = re.search(r"pvs: not cached: building, (\d+) rows to trace", run.stderr)
    end = re.search(r"pvs: all (\d+) rows traced in [0-9.]+ s", run.stderr)
    if not start or not end or start.group(1) != end.group(1) or start.start() > end.start():
        sys.exit("expected the build's first and last progress lines, in order, with one row count")
    if "pvs: built in " not in run.stdout or "pvs cache:" in run.stdout:
        sys.exit("expected a build with no cache file on stdout")
    print("ok")


if __name__ == "__main__":
    main()
