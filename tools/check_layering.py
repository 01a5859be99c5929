#!/usr/bin/python3
"""Checks that link lines limit includes. Every library makes the source root its include path
(headers are spelled "server/game/world.h"), so the compiler alone would let any file include any
header; this check makes the CMake link graph the rule instead.

Each project header belongs to a target: the one that compiles the header's own .cc (x.h and
x.cc in one directory), or else the library of the header's directory. A quoted #include in a
target's source, or in a header that belongs to the target, is allowed if that header belongs to
the target itself or to a target it links, directly or through PUBLIC/INTERFACE links (CMake's
own transitive dependency list). Angle-bracket includes (system and Debian packages) are not
checked. The graph comes from CMake's file API (codemodel-v2) of a configured build directory.

Prints every violation as "file: includes header (of target T), but target U does not link T"
and exits 1 if there is one.

Usage: tools/check_layering.py [--build-dir build]
"""
import argparse
import json
import os
import re
import subprocess
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
HEADER_EXT = (".h", ".hpp")


def load_codemodel(build_dir, root):
    """Returns {target name: {"type", "sources" (repo-relative), "deps" (target names)}}."""
    query = os.path.join(build_dir, ".cmake", "api", "v1", "query", "codemodel-v2")
    if not os.path.exists(query):
        os.makedirs(os.path.dirname(query), exist_ok=True)
        open(query, "w").close()
    # Re-running the configure step writes the reply (it is quick once configured).
    subprocess.run(["cmake", "-S", root, "-B", build_dir], check=True, stdout=subprocess.DEVNULL)
    reply = os.path.join(build_dir, ".cmake", "api", "v1", "reply")
    index = sorted(f for f in os.listdir(reply) if f.startswith("index-"))[-1]
    with open(os.path.join(reply, index)) as f:
        index_json = json.load(f)
    codemodel_file = index_json["reply"]["codemodel-v2"]["jsonFile"]
    with open(os.path.join(reply, codemodel_file)) as f:
        codemodel = json.load(f)
    config = codemodel["configurations"][0]
    by_id = {}
    targets = {}
    for t in config["targets"]:
        with open(os.path.join(reply, t["jsonFile"])) as f:
            tj = json.load(f)
        by_id[tj["id"]] = tj["name"]
        targets[tj["name"]] = tj
    out = {}
    for name, tj in targets.items():
        sources = []
        for s in tj.get("sources", []):
            path = s["path"]
            if os.path.isabs(path):
                path = os.path.relpath(path, root)
            if not path.startswith(".."):
                sources.append(path)
        deps = {by_id[d["id"]] for d in tj.get("dependencies", []) if d["id"] in by_id}
        out[name] = {"type": tj["type"], "sources": sources, "deps": deps}
    return out


def link_closure(targets, name, memo):
    if name in memo:
        return memo[name]
    memo[name] = set()
    closure = set()
    for d in targets[name]["deps"]:
        closure.add(d)
        closure |= link_closure(targets, d, memo)
    memo[name] = closure
    return closure


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build-dir", default="build")
    args = parser.parse_args()
    root = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
    build_dir = os.path.abspath(args.build_dir)
    targets = load_codemodel(build_dir, root)

    # Who compiles each .cc, and each directory's libraries (a header without a .cc belongs to
    # its directory's library; a directory with several libraries must give each header a .cc).
    compilers = {}
    dir_libraries = {}
    for name, t in targets.items():
        for s in t["sources"]:
            if s.endswith(".cc"):
                compilers.setdefault(s, set()).add(name)
                if t["type"] in ("STATIC_LIBRARY", "SHARED_LIBRARY", "OBJECT_LIBRARY"):
                    dir_libraries.setdefault(os.path.dirname(s), set()).add(name)

    def owners(header):
        """The targets a project header belongs to (any of them will do), or None if unknown."""
        cc = os.path.splitext(header)[0] + ".cc"
        if cc in compilers:
            return compilers[cc]
        libs = dir_libraries.get(os.path.dirname(header))
        if libs is None:
            return None
        # Test-support libraries share a directory with their library; a header without its
        # own .cc belongs to the directory's main library.
        main_libs = {lib for lib in libs if not lib.endswith("_test_util")}
        return main_libs or libs

    memo = {}

    def allowed_for(owner_targets):
        allowed = set()
        for o in owner_targets:
            allowed |= {o} | link_closure(targets, o, memo)
        return allowed

    # Every file to check, with the targets whose rules it follows: a .cc those that compile it,
    # a header its owners (so headers without a .cc, such as server/core/mutex.h, count too).
    files = {}
    for name, t in targets.items():
        if t["type"] == "UTILITY":
            continue
        for s in t["sources"]:
            if s.endswith(".cc"):
                files.setdefault(s, set()).add(name)
    for directory in dir_libraries:
        for entry in os.listdir(os.path.join(root, directory)):
            header = os.path.join(directory, entry)
            if header.endswith(HEADER_EXT) and owners(header):
                files[header] = owners(header)

    violations = []
    for path, file_targets in sorted(files.items()):
        try:
            text = open(os.path.join(root, path), errors="replace").read()
        except OSError:
            continue
        allowed = allowed_for(file_targets)
        for inc in INCLUDE.findall(text):
            if not inc.endswith(HEADER_EXT) or not os.path.exists(os.path.join(root, inc)):
                continue
            own = owners(inc)
            if own is None:
                violations.append(f"{path}: includes {inc}, which no target owns")
            elif not own & allowed:
                violations.append(f"{path}: includes {inc} (of {', '.join(sorted(own))}), "
                                  f"but {', '.join(sorted(file_targets))} link none of them")
    checked = len(files)
    for v in sorted(set(violations)):
        print(v)
    print(f"layering: {checked} files of {len(targets)} targets checked, "
          f"{len(set(violations))} violations")
    return 1 if violations else 0


if __name__ == "__main__":
    sys.exit(main())
