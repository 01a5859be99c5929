#!/usr/bin/python3
# mapgen: deterministic generator of Aftershock's Quake maps (Valve 220 .map, TrenchBroom-ready).
# `mapgen.py all --out-dir maps` rebuilds the committed maps; `mapgen.py check --out-dir maps`
# rebuilds them in a temp dir, runs the self-checks and compares bytes. See docs/maps.md.
import argparse
import filecmp
import io
import os
import sys
import tempfile

sys.dont_write_bytecode = True   # keep __pycache__ out of the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import checks    # noqa: E402
import layouts   # noqa: E402
import reach     # noqa: E402

REACH_GRID = 32              # walk-graph spacing of the reachability check
REACH_MAX_NODES = 200000     # larger maps skip it unless --reach is given

# Parameters of each kind: (option, type, default, help). Defaults make the committed maps.
OPTIONS = {
    "arena": [
        ("rooms_x", int, 3, "rooms along x"),
        ("rooms_y", int, 3, "rooms along y"),
        ("levels", int, 2, "floor levels per room (>= 2 adds balconies, stairs, jump pads)"),
        ("room_size", int, 768, "room side in units (>= 768 with levels >= 2)"),
        ("corridor_len", int, 384, "corridor length between rooms"),
        ("spawns_per_room", int, 2, "info_player_deathmatch per room"),
        ("teleporters", int, 2, "teleporter pairs between corner rooms (0-2)"),
        ("seed", int, 1, "random seed"),
    ],
    "small": [
        ("size", int, 1024, "room side in units (>= 1024)"),
        ("height", int, 448, "room height (>= 448)"),
        ("seed", int, 1, "random seed (unused: the small map is fixed)"),
    ],
    "metropolis": [
        ("blocks", int, 24, "city blocks along each side"),
        ("block_size", int, 640, "block side in units (>= 512)"),
        ("street_width", int, 256, "street width in units (>= 192)"),
        ("squares", float, 0.12, "fraction of blocks left open as squares"),
        ("pads", int, 8, "jump pads onto low roofs"),
        ("teleporters", int, 4, "teleporter pairs between squares"),
        ("roof_stairs", int, 8, "low buildings with stairs up to their roof"),
        ("spawns_per_street", int, 1, "spawn points per street segment and direction"),
        ("seed", int, 1, "random seed"),
    ],
}
BUILD = {"arena": layouts.Arena, "small": layouts.Small, "metropolis": layouts.Metropolis}
COMMITTED = [("arena", "dm_arena.map"), ("small", "dm_small.map"), ("metropolis", "metropolis.map")]


def CanonicalArgs(kind, values):
    """The command line that rebuilds a map, recorded in its worldspawn as _generator."""
    parts = ["mapgen.py", kind]
    for name, typ, _, _ in OPTIONS[kind]:
        parts += ["--" + name.replace("_", "-"), str(values[name])]
    return " ".join(parts)


def Validate(kind, values):
    if kind == "small" and (values["size"] < 1024 or values["size"] % 64 or values["height"] < 448):
        raise ValueError("small: --size must be a multiple of 64 >= 1024, --height >= 448")
    if kind == "arena":
        if min(values["rooms_x"], values["rooms_y"], values["levels"]) < 1 or values["levels"] > 4:
            raise ValueError("arena: --rooms-x/--rooms-y >= 1, 1 <= --levels <= 4")
        if values["room_size"] % 64 or values["room_size"] < 512 or values["corridor_len"] < 64 \
                or values["corridor_len"] % 32:
            raise ValueError("arena: --room-size multiple of 64 >= 512, "
                             "--corridor-len multiple of 32 >= 64")
        if not 1 <= values["spawns_per_room"] <= 4 or not 0 <= values["teleporters"] <= 2:
            raise ValueError("arena: 1 <= --spawns-per-room <= 4, 0 <= --teleporters <= 2")
    if kind == "metropolis":
        if values["blocks"] < 2 or values["block_size"] < 512 or values["block_size"] % 64:
            raise ValueError("metropolis: --blocks >= 2, --block-size multiple of 64 >= 512")
        if values["street_width"] < 192 or values["street_width"] % 32:
            raise ValueError("metropolis: --street-width multiple of 32 >= 192")
        if not 0 <= values["squares"] <= 0.9 or min(values["pads"], values["teleporters"],
                                                    values["roof_stairs"]) < 0:
            raise ValueError("metropolis: 0 <= --squares <= 0.9; --pads, --teleporters, "
                             "--roof-stairs >= 0")
        if not 1 <= values["spawns_per_street"] <= 3:
            raise ValueError("metropolis: 1 <= --spawns-per-street <= 3")


def Generate(kind, values, force_reach=False):
    """Builds and self-checks one map; returns (doc, text, reach_checked)."""
    Validate(kind, values)
    ns = argparse.Namespace(**values)
    doc = BUILD[kind](ns, CanonicalArgs(kind, values))
    errors = checks.CheckDoc(doc)
    o = doc.outer
    nodes = ((o[3] - o[0]) // REACH_GRID) * ((o[4] - o[1]) // REACH_GRID)
    reach_checked = force_reach or nodes <= REACH_MAX_NODES
    if not errors and reach_checked:
        errors = reach.CheckReach(doc, REACH_GRID)
    if errors:
        raise RuntimeError("%s: %d self-check errors:\n  %s" % (kind, len(errors),
                                                                 "\n  ".join(errors[:40])))
    out = io.StringIO()
    doc.Write(out)
    return doc, out.getvalue(), reach_checked


def Defaults(kind):
    return {name: default for name, _, default, _ in OPTIONS[kind]}


def WriteFile(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="ascii", newline="\n") as f:
        f.write(text)
    os.replace(tmp, path)


def Summary(path, doc, text, reach_checked):
    c = doc.Counts()
    classes = ", ".join("%s %d" % kv for kv in sorted(c["classes"].items()))
    return ("%s: %d bytes, %d brushes (%d world), %d spawns, %d pickups, %d teleporters, "
            "%d jump pads, %d liquids, bounds %s (%s), walk check %s\n    entities: %s" %
            (path, len(text.encode()), c["brushes"], c["world_brushes"], c["spawns"],
             c["pickups"], c["teleporters"], c["jump_pads"], c["liquids"], c["bounds"],
             c["size"], "passed" if reach_checked else "skipped (large map)", classes))


def RunCheck(out_dir):
    """Regenerates the committed maps in a temp dir; fails if any differs from out_dir. The
    walk check is too slow in Python for the full metropolis, so it runs on a 6x6-block one
    built by the same code."""
    ok = True
    with tempfile.TemporaryDirectory(prefix="mapgen-") as tmp:
        for kind, filename in COMMITTED:
            doc, text, reached = Generate(kind, Defaults(kind))
            fresh = os.path.join(tmp, filename)
            WriteFile(fresh, text)
            committed = os.path.join(out_dir, filename)
            if not os.path.exists(committed):
                print("MISSING %s (run: mapgen.py all --out-dir %s)" % (committed, out_dir))
                ok = False
            elif not filecmp.cmp(fresh, committed, shallow=False):
                print("DIFFERS %s from a fresh build (run: mapgen.py all --out-dir %s)" %
                      (committed, out_dir))
                ok = False
            else:
                print("ok " + Summary(committed, doc, text, reached))
    small_city = dict(Defaults("metropolis"), blocks=6)
    doc, text, reached = Generate("metropolis", small_city, force_reach=True)
    print("ok " + Summary("(6x6-block metropolis, not written)", doc, text, reached))
    return 0 if ok else 1


def main(argv):
    parser = argparse.ArgumentParser(description="Generate Aftershock Quake maps (Valve 220).")
    sub = parser.add_subparsers(dest="kind", required=True)
    for kind, opts in OPTIONS.items():
        p = sub.add_parser(kind, help="one %s map" % kind)
        for name, typ, default, text in opts:
            p.add_argument("--" + name.replace("_", "-"), dest=name, type=typ, default=default,
                           help="%s (default %s)" % (text, default))
        p.add_argument("-o", "--output", required=True, help="output .map path")
        p.add_argument("--reach", action="store_true",
                       help="run the walk check even on a large map (slow)")
    for kind, text in (("all", "write the committed maps into --out-dir"),
                       ("check", "verify the committed maps in --out-dir are reproducible")):
        p = sub.add_parser(kind, help=text)
        p.add_argument("--out-dir", required=True)
    a = parser.parse_args(argv)
    try:
        if a.kind == "check":
            return RunCheck(a.out_dir)
        if a.kind == "all":
            for kind, filename in COMMITTED:
                doc, text, reached = Generate(kind, Defaults(kind))
                path = os.path.join(a.out_dir, filename)
                WriteFile(path, text)
                print(Summary(path, doc, text, reached))
            return 0
        values = {name: getattr(a, name) for name, _, _, _ in OPTIONS[a.kind]}
        doc, text, reached = Generate(a.kind, values, force_reach=a.reach)
        WriteFile(a.output, text)
        print(Summary(a.output, doc, text, reached))
        return 0
    except (ValueError, RuntimeError, OSError, AssertionError) as e:
        print("mapgen: error: %s" % e, file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
