# Self-checks of a generated MapDoc: every brush is a valid convex polyhedron with outward
# normals, and every spawn, pickup and teleport destination has room for the player hull, a floor
# under it and no trigger or liquid around it; jump pads really reach their ledge.
import itertools

from brushes import Cross, Dot
from mapdoc import HullBox, PadApex, SPAWN_LIFT

EPS = 1e-6
BUCKET = 512


def _Plane(face):
    n = face.Normal()
    length = Dot(n, n) ** 0.5
    if length == 0:
        return None
    n = [c / length for c in n]
    return n, Dot(n, face.points[1])


def _Intersect(p1, p2, p3):
    (n1, d1), (n2, d2), (n3, d3) = p1, p2, p3
    c23, c31, c12 = Cross(n2, n3), Cross(n3, n1), Cross(n1, n2)
    det = Dot(n1, c23)
    if abs(det) < EPS:
        return None
    return [(d1 * c23[i] + d2 * c31[i] + d3 * c12[i]) / det for i in range(3)]


def CheckBrush(brush):
    """Returns an error string or None."""
    planes = [_Plane(f) for f in brush.faces]
    if any(p is None for p in planes):
        return "zero-area plane"
    if len(planes) < 6:
        return "fewer than 6 planes"
    for a, b in itertools.combinations(planes, 2):
        if all(abs(a[0][i] - b[0][i]) < EPS for i in range(3)) and abs(a[1] - b[1]) < EPS:
            return "duplicate plane"
    verts = []
    for trio in itertools.combinations(planes, 3):
        v = _Intersect(*trio)
        if v is not None and all(sum(n[i] * v[i] for i in range(3)) - d <= 1e-4 for n, d in planes):
            verts.append(v)
    if len(verts) < 4:
        return "empty or flat polyhedron (inward normal?)"
    center = [sum(v[i] for v in verts) / len(verts) for i in range(3)]
    for n, d in planes:
        if sum(n[i] * center[i] for i in range(3)) - d >= -0.5:
            return "centre not inside a plane: normal points in"
        if sum(1 for v in verts if abs(sum(n[i] * v[i] for i in range(3)) - d) < 1e-4) < 3:
            return "plane touches the polyhedron in fewer than 3 corners"
    lo = [min(v[i] for v in verts) for i in range(3)]
    hi = [max(v[i] for v in verts) for i in range(3)]
    if any(abs(lo[i] - brush.box[i]) > 1e-4 or abs(hi[i] - brush.box[i + 3]) > 1e-4
           for i in range(3)):
        return "corners disagree with the recorded box"
    return None


def _Overlap(a, b):
    return all(a[i] < b[i + 3] and b[i] < a[i + 3] for i in range(3))


class _Index:
    """Boxes bucketed by x/y cell, for overlap queries."""

    def __init__(self, items):
        self.cells = {}
        for n, (box, value) in enumerate(items):
            for cx in range(int(box[0]) // BUCKET, int(box[3]) // BUCKET + 1):
                for cy in range(int(box[1]) // BUCKET, int(box[4]) // BUCKET + 1):
                    self.cells.setdefault((cx, cy), []).append((n, box, value))

    def Query(self, box):
        seen = set()
        for cx in range(int(box[0]) // BUCKET, int(box[3]) // BUCKET + 1):
            for cy in range(int(box[1]) // BUCKET, int(box[4]) // BUCKET + 1):
                for n, b, value in self.cells.get((cx, cy), ()):
                    if n not in seen:
                        seen.add(n)
                        yield b, value


def _CheckSpot(what, x, y, floor, solids, nonsolids, need_clear_of_triggers):
    errors = []
    clear = (x - 32, y - 32, floor + 1, x + 32, y + 32, floor + 57)
    for b, _ in solids.Query(clear):
        if _Overlap(clear, b):
            errors.append("%s at (%d %d %d): hull (+16 margin) hits solid %s" %
                          (what, x, y, floor + SPAWN_LIFT, b))
            break
    for cx, cy in ((x - 16, y - 16), (x + 16, y - 16), (x - 16, y + 16), (x + 16, y + 16)):
        if not any(is_box and b[5] == floor and b[0] <= cx <= b[3] and b[1] <= cy <= b[4]
                   for b, is_box in solids.Query((cx, cy, floor, cx, cy, floor))):
            errors.append("%s at (%d %d %d): no floor under corner (%d %d)" %
                          (what, x, y, floor + SPAWN_LIFT, cx, cy))
            break
    if need_clear_of_triggers:
        hull = HullBox(x, y, floor)
        for b, kind in nonsolids.Query(hull):
            if _Overlap(hull, b):
                errors.append("%s at (%d %d %d): inside a %s" %
                              (what, x, y, floor + SPAWN_LIFT, kind))
                break
    return errors


def CheckDoc(doc):
    """All problems found in the generated map, as strings (empty list = fine)."""
    errors = []
    all_brushes = list(doc.world_brushes) + [b for _, bs in doc.entities for b in bs]
    for n, brush in enumerate(all_brushes):
        why = CheckBrush(brush)
        if why:
            errors.append("brush %d %s: %s" % (n, brush.box, why))
    solids = _Index([(b.box, b.is_box) for b in doc.world_brushes if b.solid])
    nonsolids = _Index([(box, "teleporter") for box, _ in doc.teleports] +
                       [(p[0], "jump pad") for p in doc.pads] +
                       [(box, "liquid") for box in doc.liquids])
    for x, y, f in doc.spawns:
        errors += _CheckSpot("spawn", x, y, f, solids, nonsolids, True)
    for x, y, f in doc.dests:
        errors += _CheckSpot("teleport destination", x, y, f, solids, nonsolids, True)
    for cls, x, y, f in doc.pickups:
        errors += _CheckSpot(cls, x, y, f, solids, nonsolids, False)
    hulls = _Index([((x - 16, y - 16, f, x + 16, y + 16, f + 57), None) for x, y, f in doc.spawns])
    for x, y, f in doc.spawns:
        me = (x - 16, y - 16, f, x + 16, y + 16, f + 57)
        if sum(1 for b, _ in hulls.Query(me) if _Overlap(me, b)) > 1:
            errors.append("spawn at (%d %d): overlaps another spawn" % (x, y))
    for box, ledge_z, speed in doc.pads:
        errors += _CheckPad(box, ledge_z, speed, solids)
    for box in [t[0] for t in doc.teleports] + [p[0] for p in doc.pads]:
        if any(_Overlap(box, b) for b, _ in solids.Query(box)):
            errors.append("trigger %s: inside a solid" % (box,))
    return errors


def _CheckPad(box, ledge_z, speed, solids):
    floor = box[2]
    apex = floor + PadApex(speed)
    errors = []
    if apex < ledge_z + 32:
        errors.append("jump pad %s: apex %d does not clear ledge %d" % (box, apex, ledge_z))
    column = (box[0], box[1], floor + 1, box[3], box[4], apex + 56)
    if any(_Overlap(column, b) for b, _ in solids.Query(column)):
        errors.append("jump pad %s: something above it blocks the flight" % (box,))
    near = (box[0] - 64, box[1] - 64, ledge_z - 1, box[3] + 64, box[4] + 64, ledge_z)
    if not any(is_box and b[5] == ledge_z and _Overlap(near, b)
               for b, is_box in solids.Query(near)):
        errors.append("jump pad %s: no ledge at %d within 64 units" % (box, ledge_z))
    return errors
