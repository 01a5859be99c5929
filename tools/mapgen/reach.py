# Reachability self-check: a walk graph over player stand positions on a square grid (Quake
# movement: step up 18, drop any height, jump pads, teleporters, swimming out of liquids). Every
# spawn, pickup and teleport destination must be reachable from spawn 0 and lead back to it.
from collections import deque

from checks import _Index, _Overlap
from mapdoc import HullBox

STEP_UP = 18


def _Columns(doc, grid):
    """Per grid node (x, y): sorted stand heights and the z-intervals of solids over the hull's
    footprint. Clip ramps are ignored: the steps under them carry the walk."""
    solids = _Index([(b.box, None) for b in doc.world_brushes if b.solid and b.is_box])
    o = doc.outer
    cols = {}
    for x in range((o[0] // grid + 1) * grid, o[3], grid):
        for y in range((o[1] // grid + 1) * grid, o[4], grid):
            foot = (x - 16, y - 16, o[2], x + 16, y + 16, o[5])
            spans = sorted((b[2], b[5]) for b, _ in solids.Query(foot) if _Overlap(foot, b))
            stands = [top for _, top in spans
                      if not any(lo < top + 57 and hi > top + 1 for lo, hi in spans)]
            if stands:
                cols[(x, y)] = (sorted(set(stands)), spans)
    return cols


def _Clear(spans, z_lo, z_hi):
    return not any(lo < z_hi and hi > z_lo for lo, hi in spans)


def _Build(doc, grid):
    cols = _Columns(doc, grid)
    nodes = [(x, y, z) for (x, y), (stands, _) in sorted(cols.items()) for z in stands]
    index = {n: i for i, n in enumerate(nodes)}
    liquids = list(doc.liquids)
    edges = [[] for _ in nodes]
    for i, (x, y, z) in enumerate(nodes):
        limit = z + STEP_UP
        for lq in liquids:
            if _Overlap(HullBox(x, y, z), lq):
                limit = max(limit, lq[5] + 24)
        for nx, ny in ((x + grid, y), (x - grid, y), (x, y + grid), (x, y - grid)):
            if (nx, ny) not in cols:
                continue
            stands, spans = cols[(nx, ny)]
            for nz in reversed(stands):
                if nz > limit:
                    continue
                if nz > z or _Clear(spans, nz + 1, z + 57):
                    edges[i].append(index[(nx, ny, nz)])
                break
    by_xy = {}
    for i, (x, y, z) in enumerate(nodes):
        by_xy.setdefault((x, y), []).append(i)
    for box, ledge_z, _ in doc.pads:
        near = (box[0] - 112, box[1] - 112, ledge_z, box[3] + 112, box[4] + 112, ledge_z + 2)
        ledge = [i for i, n in enumerate(nodes) if n[2] == ledge_z and _Overlap(HullBox(*n), near)]
        for i, n in enumerate(nodes):
            if _Overlap(HullBox(*n), box):
                edges[i] += ledge
    for box, dest in doc.teleports:
        dx, dy, dz = doc.dests[dest]
        target = index.get((dx, dy, dz))
        for i, n in enumerate(nodes):
            if target is not None and _Overlap(HullBox(*n), box):
                edges[i].append(target)
    return nodes, index, edges


def _Bfs(start, edges):
    seen = bytearray(len(edges))
    seen[start] = 1
    queue = deque([start])
    while queue:
        i = queue.popleft()
        for j in edges[i]:
            if not seen[j]:
                seen[j] = 1
                queue.append(j)
    return seen


def CheckReach(doc, grid=32):
    """Problems found (empty list = every spot is reachable from spawn 0 and back)."""
    nodes, index, edges = _Build(doc, grid)
    spots = [("spawn", s) for s in doc.spawns] + \
        [("teleport destination", d) for d in doc.dests] + [(p[0], p[1:]) for p in doc.pickups]
    missing = [(what, s) for what, s in spots if s not in index]
    if missing:
        return ["%s at %s is not a stand position on the %d-unit walk grid" % (m[0], m[1], grid)
                for m in missing[:20]]
    start = index[doc.spawns[0]]
    fwd = _Bfs(start, edges)
    back_edges = [[] for _ in nodes]
    for i, out in enumerate(edges):
        for j in out:
            back_edges[j].append(i)
    back = _Bfs(start, back_edges)
    errors = []
    for what, s in spots:
        i = index[s]
        if not fwd[i]:
            errors.append("%s at (%d %d %d) is unreachable from spawn 0" % (what, s[0], s[1], s[2]))
        elif not back[i]:
            errors.append("%s at (%d %d %d) is a dead end (no way back to spawn 0)" %
                          (what, s[0], s[1], s[2]))
    return errors
