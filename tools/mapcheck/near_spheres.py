#!/usr/bin/python3
"""Writes a hostile map for start-up measurements: NX x NY near-spheres of FACES faces (radius
256, centres 640 units apart, each face tangent at a Fibonacci point of the sphere, as the
collision tests' testing::NearSpheresMapText writes them) in a sealed room with one spawn point.
docs/maps.md ("What is still not bounded") times the PVS build and the server's start-up on such
maps.

Usage: near_spheres.py FACES NX NY OUT.map
  e.g. near_spheres.py 256 5 4 /tmp/s20.map   (20 spheres; 256 50 40 gives 2,000)
"""
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "mapgen"))
from brushes import BoxBrush  # noqa: E402  (the map generator's box brush: faces and winding)


def box(lo, hi):
    brush = BoxBrush(lo + hi, "t", "t")
    lines = ["( %g %g %g ) ( %g %g %g ) ( %g %g %g ) t 0 0 0 1 1" % (a + b + c)
             for a, b, c in (f.points for f in brush.faces)]
    return "{\n" + "\n".join(lines) + "\n}\n"


def sphere(centre, faces):
    golden = math.pi * (3 - math.sqrt(5.0))
    lines = []
    for i in range(faces):
        z = 1 - 2 * (i + 0.5) / faces
        r, t = math.sqrt(1 - z * z), golden * i
        n = (r * math.cos(t), r * math.sin(t), z)
        a = (1.0, 0.0, 0.0) if abs(n[0]) < 0.9 else (0.0, 1.0, 0.0)
        u = (n[1] * a[2] - n[2] * a[1], n[2] * a[0] - n[0] * a[2], n[0] * a[1] - n[1] * a[0])
        length = math.sqrt(sum(x * x for x in u))
        u = tuple(x / length for x in u)
        v = (n[1] * u[2] - n[2] * u[1], n[2] * u[0] - n[0] * u[2], n[0] * u[1] - n[1] * u[0])
        p = [[centre[j] + 256 * n[j] + 64 * (cu * u[j] + cv * v[j]) for j in range(3)]
             for cu, cv in ((0, 0), (1, 0), (0, 1))]
        lines.append("( %.2f %.2f %.2f ) ( %.2f %.2f %.2f ) ( %.2f %.2f %.2f ) t 0 0 0 1 1"
                     % tuple(p[1] + p[0] + p[2]))
    return "{\n" + "\n".join(lines) + "\n}\n"


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    faces, nx, ny, out = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    if faces < 4 or nx < 1 or ny < 1:
        sys.exit("near_spheres.py: FACES must be at least 4, NX and NY at least 1")
    text = ['{\n"classname" "worldspawn"\n']
    for ix in range(nx):
        for iy in range(ny):
            text.append(sphere((ix * 640.0, iy * 640.0, 0.0), faces))
    lo, hi, w = (-640, -640, -640), (nx * 640, ny * 640, 640), 32
    walls = [((lo[0] - w, lo[1] - w, lo[2] - w), (hi[0] + w, hi[1] + w, lo[2])),
             ((lo[0] - w, lo[1] - w, hi[2]), (hi[0] + w, hi[1] + w, hi[2] + w)),
             ((lo[0] - w, lo[1] - w, lo[2]), (lo[0], hi[1] + w, hi[2])),
             ((hi[0], lo[1] - w, lo[2]), (hi[0] + w, hi[1] + w, hi[2])),
             ((lo[0], lo[1] - w, lo[2]), (hi[0], lo[1], hi[2])),
             ((lo[0], hi[1], lo[2]), (hi[0], hi[1] + w, hi[2]))]
    text += [box(a, b) for a, b in walls]
    text.append('}\n{\n"classname" "info_player_deathmatch"\n"origin" "-320 -320 -500"\n}\n')
    with open(out, "w") as f:
        f.write("".join(text))


if __name__ == "__main__":
    main()
