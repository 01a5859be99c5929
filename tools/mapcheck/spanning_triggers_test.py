#!/usr/bin/python3
"""aftershock-mapcheck refuses what the server refuses: a map whose 300 teleporters each span
16384 x 16384 units would put 300 x 16,384 entries in the teleporters' grid, past
collision::BrushGrid::kMaxEntries. Writes the map to a temporary directory and expects exit 1
with the server's message (game::World::CheckMap).

Usage: spanning_triggers_test.py MAPCHECK_BINARY
"""
import os
import subprocess
import sys
import tempfile


def box(x0, y0, z0, x1, y1, z1, texture):
    faces = [((x0, y1, z1), (x0, y0, z1), (x0, y0, z0)), ((x0, y0, z1), (x1, y0, z1), (x1, y0, z0)),
             ((x1, y0, z0), (x1, y1, z0), (x0, y1, z0)), ((x0, y1, z1), (x1, y1, z1), (x1, y0, z1)),
             ((x1, y1, z0), (x1, y1, z1), (x0, y1, z1)), ((x1, y0, z1), (x1, y1, z1), (x1, y1, z0))]
    lines = ["( %d %d %d ) ( %d %d %d ) ( %d %d %d ) %s 0 0 0 1 1" % (*a, *b, *c, texture)
             for a, b, c in faces]
    return "{\n" + "\n".join(lines) + "\n}\n"


def main():
    mapcheck = sys.argv[1]
    text = ['{\n"classname" "worldspawn"\n', box(-8192, -8192, -16, 8192, 8192, 0, "floor"), "}\n",
            '{\n"classname" "info_player_deathmatch"\n"origin" "0 0 25"\n}\n',
            '{\n"classname" "info_teleport_destination"\n"targetname" "t"\n"origin" "64 0 25"\n}\n']
    for _ in range(300):
        text.append('{\n"classname" "trigger_teleport"\n"target" "t"\n' +
                    box(-8192, -8192, 100, 8192, 8192, 108, "trigger") + "}\n")
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "spanning_teleporters.map")
        with open(path, "w") as f:
            f.write("".join(text))
        run = subprocess.run([mapcheck, path], capture_output=True, text=True, timeout=120)
    print(run.stdout, run.stderr)
    if run.returncode != 1:
        sys.exit("expected exit 1, got %d" % run.returncode)
    if "too many teleporters for their grid: 300 of them cover 4915200 grid cells" not in run.stderr:
        sys.exit("expected the teleporter grid's message")
    print("ok")


if __name__ == "__main__":
    main()
