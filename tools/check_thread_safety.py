#!/usr/bin/python3
"""Checks the lock annotations (server/core/thread_annotations.h) with clang's thread-safety
analysis: every non-test source that includes the annotations (through any chain of the
project's headers; no other source can touch an annotated lock) is compiled by clang-14 with
-fsyntax-only (no code is generated) and -Wthread-safety -Werror, with the include paths and
defines of a CMake configuration for clang. Prints the diagnostics and exits 1 on any.

Usage: tools/check_thread_safety.py [--build-dir build-clang] [--jobs N] [PATH_PART...]
(with PATH_PARTs, only the sources whose path contains one of them)
"""
import argparse
import concurrent.futures
import json
import os
import re
import shlex
import subprocess
import sys

CLANG = "clang++-14"
CHECK_FLAGS = ["-fsyntax-only", "-Wthread-safety", "-Werror"]
ANNOTATIONS = "server/core/thread_annotations.h"
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def reaches_annotations(path, root, memo):
    """True if `path` includes ANNOTATIONS through the project's own headers (quoted includes,
    spelled from the source root as the project does)."""
    if path in memo:
        return memo[path]
    memo[path] = False  # include cycles end here
    try:
        text = open(path, errors="replace").read()
    except OSError:
        return False
    for inc in INCLUDE.findall(text):
        if inc == ANNOTATIONS or reaches_annotations(os.path.join(root, inc), root, memo):
            memo[path] = True
            break
    return memo[path]


def is_test_source(path):
    name = os.path.basename(path)
    return "/tests/" in path or name.endswith("_test.cc") or "test_util" in name


def check_command(entry, root):
    """The clang command that checks one file: its include paths and defines, our flags."""
    args = shlex.split(entry["command"])
    out = [CLANG]
    skip = False
    for a in args[1:]:
        if skip:
            skip = False
            continue
        if a in ("-o", "-MT", "-MF"):
            skip = True
            continue
        if a in ("-c", "-MD") or a.startswith("-W") or a.startswith("-O") or a == "-g":
            continue
        if a == entry["file"]:
            continue
        out.append(a)
    return out + CHECK_FLAGS + [entry["file"]]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build-dir", default="build-clang")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("only", nargs="*", help="check only sources whose path contains one of these")
    opts = ap.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    build = os.path.join(root, opts.build_dir)
    os.makedirs(build, exist_ok=True)
    log = os.path.join(build, "configure.log")
    with open(log, "w") as f:
        r = subprocess.run(["cmake", "-S", root, "-B", build, f"-DCMAKE_CXX_COMPILER={CLANG}",
                            "-DCMAKE_BUILD_TYPE=Debug", "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON"],
                           stdout=f, stderr=subprocess.STDOUT)
    if r.returncode != 0:
        sys.stdout.write(open(log).read())
        return 1
    with open(os.path.join(build, "compile_commands.json")) as f:
        entries = [e for e in json.load(f) if not is_test_source(e["file"])
                   and (not opts.only or any(o in e["file"] for o in opts.only))]
    # One check per source file (a file built into two targets is checked once), of those that
    # can see an annotation.
    memo = {}
    by_file = {}
    for e in entries:
        if reaches_annotations(e["file"], root, memo):
            by_file.setdefault(e["file"], e)

    def run(entry):
        p = subprocess.run(check_command(entry, root), cwd=entry["directory"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        return entry["file"], p.returncode, p.stdout

    failed = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=opts.jobs) as pool:
        for path, rc, output in pool.map(run, sorted(by_file.values(), key=lambda e: e["file"])):
            if rc != 0 or output.strip():
                failed += rc != 0
                sys.stdout.write(output)
    print(f"thread safety: {len(by_file)} sources checked with {CLANG} -Wthread-safety, "
          f"{failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
