# Geometry for mapgen: a compressed voxel builder that turns carve/fill box operations into
# non-overlapping box brushes (greedy merge), brush faces with outward winding, and the Valve 220
# writer. Integer coordinates only, so output is byte-for-byte reproducible.

# Materials of solid cells. Cell value 0 is empty space; everything else is solid.
# id: (name, top texture, side texture, bottom texture)
MATERIALS = {
    1: ("wall", "floor_grey", "wall_grey", "ceil_grey"),
    2: ("sky", "sky", "sky", "sky"),
    3: ("ledge", "ledge_metal", "ledge_trim", "ledge_under"),
    4: ("step", "step_top", "step_riser", "step_riser"),
    5: ("pillar", "pillar_top", "pillar_stone", "pillar_top"),
    6: ("street", "street_asphalt", "curb_stone", "street_asphalt"),
    7: ("bldg_a", "roof_tar", "bldg_brick", "bldg_brick"),
    8: ("bldg_b", "roof_gravel", "bldg_concrete", "bldg_concrete"),
    9: ("bldg_c", "roof_metal", "bldg_glass", "bldg_glass"),
}
MATERIAL_ID = {v[0]: k for k, v in MATERIALS.items()}


def Sub(a, b):
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


def Cross(a, b):
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


def Dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


class Face:
    """One brush plane as three points; normal (p0 - p1) x (p2 - p1) points out of the brush."""

    def __init__(self, p0, p1, p2, texture):
        self.points = (p0, p1, p2)
        self.texture = texture

    def Normal(self):
        p0, p1, p2 = self.points
        return Cross(Sub(p0, p1), Sub(p2, p1))


class Brush:
    """A convex brush. `box` is (x0, y0, z0, x1, y1, z1): the exact box for box brushes, the
    bounding box otherwise. `solid` is False for liquids and triggers."""

    def __init__(self, faces, box, is_box, solid):
        self.faces = faces
        self.box = box
        self.is_box = is_box
        self.solid = solid


def BoxBrush(box, top, side, bottom=None, solid=True):
    """An axis-aligned box brush; faces written in TrenchBroom's order and winding."""
    x0, y0, z0, x1, y1, z1 = box
    assert x0 < x1 and y0 < y1 and z0 < z1, box
    bottom = bottom or top
    faces = [
        Face((x0, y1, z1), (x0, y0, z1), (x0, y0, z0), side),    # -X
        Face((x0, y0, z1), (x1, y0, z1), (x1, y0, z0), side),    # -Y
        Face((x1, y0, z0), (x1, y1, z0), (x0, y1, z0), bottom),  # -Z
        Face((x0, y1, z1), (x1, y1, z1), (x1, y0, z1), top),     # +Z
        Face((x1, y1, z0), (x1, y1, z1), (x0, y1, z1), side),    # +Y
        Face((x1, y0, z1), (x1, y1, z1), (x1, y1, z0), side),    # +X
    ]
    return Brush(faces, tuple(box), True, solid)


def MaterialBrush(box, material_id):
    _, top, side, bottom = MATERIALS[material_id]
    return BoxBrush(box, top, side, bottom)


def OrientedFace(p0, p1, p2, inside, texture):
    """A face through three points, wound so its normal points away from the `inside` point."""
    face = Face(p0, p1, p2, texture)
    if Dot(face.Normal(), Sub(inside, p1)) > 0:
        face = Face(p2, p1, p0, texture)
    return face


def RampBrush(axis, t_low, t_high, s0, s1, z0, z_lip, z_top, texture):
    """A stair-covering ramp (6 planes): along `axis` ('x' or 'y') it rises from height z_lip at
    t_low to z_top at t_high, above a flat bottom at z0; s0..s1 is the extent across the run.
    t_low may be greater than t_high (a ramp rising towards -axis)."""
    def P(t, s, z):
        return (t, s, z) if axis == "x" else (s, t, z)
    inside = P((t_low + t_high) / 2, (s0 + s1) / 2, (z0 * 2 + z_lip + z_top) / 4)
    corners = [
        (P(t_low, s0, z0), P(t_high, s0, z0), P(t_high, s1, z0)),            # bottom
        (P(t_high, s0, z0), P(t_high, s0, z_top), P(t_high, s1, z_top)),     # high end
        (P(t_low, s0, z0), P(t_low, s0, z_lip), P(t_low, s1, z_lip)),        # low lip
        (P(t_low, s0, z_lip), P(t_high, s0, z_top), P(t_high, s1, z_top)),   # slope
        (P(t_low, s0, z0), P(t_high, s0, z0), P(t_high, s0, z_top)),         # side s0
        (P(t_low, s1, z0), P(t_high, s1, z0), P(t_high, s1, z_top)),         # side s1
    ]
    faces = [OrientedFace(p0, p1, p2, inside, texture) for p0, p1, p2 in corners]
    lo_t, hi_t = min(t_low, t_high), max(t_low, t_high)
    a, b = P(lo_t, s0, z0), P(hi_t, s1, z_top)
    return Brush(faces, (a[0], a[1], a[2], b[0], b[1], b[2]), False, True)


class VoxelBuilder:
    """Records carve (make empty) and fill (make solid) box operations, applied in order over a
    grid compressed to the coordinates the operations use. Everything outside the carved space,
    out to `shell` units beyond it, is solid, so the result is sealed by construction."""

    def __init__(self):
        self.ops = []  # (box, material id or 0)

    def Carve(self, box):
        self.ops.append((tuple(box), 0))

    def Fill(self, box, material):
        self.ops.append((tuple(box), MATERIAL_ID[material]))

    def Build(self, shell, top_material="sky"):
        """Returns (brushes, outer box). The layer above the highest carve is `top_material`."""
        carves = [b for b, m in self.ops if m == 0]
        inner = tuple(min(b[a] for b in carves) for a in range(3)) + \
            tuple(max(b[a + 3] for b in carves) for a in range(3))
        outer = tuple(inner[a] - shell for a in range(3)) + \
            tuple(inner[a + 3] + shell for a in range(3))
        axes = []
        for a in range(3):
            coords = {outer[a], outer[a + 3], inner[a], inner[a + 3]}
            for b, _ in self.ops:
                coords.add(min(max(b[a], outer[a]), outer[a + 3]))
                coords.add(min(max(b[a + 3], outer[a]), outer[a + 3]))
            axes.append(sorted(coords))
        grid = _Grid(axes, MATERIAL_ID["wall"])
        for box, material in self.ops:
            grid.Set(box, material)
        grid.Set((outer[0], outer[1], inner[5]) + outer[3:], MATERIAL_ID[top_material])
        grid.CheckSealed()
        brushes = [MaterialBrush(box, m) for box, m in grid.GreedyBoxes()]
        return brushes, outer


class _Grid:
    """Dense grid of material bytes over compressed axes; cell (i, j, k) spans xs[i]..xs[i+1]."""

    def __init__(self, axes, fill):
        self.xs, self.ys, self.zs = axes
        self.nx, self.ny, self.nz = len(self.xs) - 1, len(self.ys) - 1, len(self.zs) - 1
        self.cells = bytearray([fill]) * (self.nx * self.ny * self.nz)
        self.index = [{c: n for n, c in enumerate(axis)} for axis in axes]

    def _Range(self, a, lo, hi):
        axis = (self.xs, self.ys, self.zs)[a]
        lo = min(max(lo, axis[0]), axis[-1])
        hi = min(max(hi, axis[0]), axis[-1])
        return self.index[a][lo], self.index[a][hi]

    def Set(self, box, material):
        i0, i1 = self._Range(0, box[0], box[3])
        j0, j1 = self._Range(1, box[1], box[4])
        k0, k1 = self._Range(2, box[2], box[5])
        run = bytes([material]) * (i1 - i0)
        for k in range(k0, k1):
            for j in range(j0, j1):
                base = (k * self.ny + j) * self.nx
                self.cells[base + i0:base + i1] = run

    def CheckSealed(self):
        """Every cell on the grid's boundary must be solid: nothing leaks to the void."""
        nx, ny, nz, c = self.nx, self.ny, self.nz, self.cells
        for k in range(nz):
            for j in range(ny):
                base = (k * ny + j) * nx
                if k in (0, nz - 1) or j in (0, ny - 1):
                    assert 0 not in c[base:base + nx], "map leaks at the outer shell"
                else:
                    assert c[base] and c[base + nx - 1], "map leaks at the outer shell"

    def GreedyBoxes(self):
        """Covers all solid cells with boxes of one material each: grow along x, then y, then z."""
        nx, ny, nz = self.nx, self.ny, self.nz
        c = bytearray(self.cells)
        out = []
        for k in range(nz):
            for j in range(ny):
                base = (k * ny + j) * nx
                i = 0
                while i < nx:
                    m = c[base + i]
                    if m == 0:
                        i += 1
                        continue
                    i1 = i + 1
                    while i1 < nx and c[base + i1] == m:
                        i1 += 1
                    run = bytes([m]) * (i1 - i)
                    j1 = j + 1
                    while j1 < ny and c[(k * ny + j1) * nx + i:(k * ny + j1) * nx + i1] == run:
                        j1 += 1
                    k1 = k + 1
                    while k1 < nz and all(
                            c[(k1 * ny + jj) * nx + i:(k1 * ny + jj) * nx + i1] == run
                            for jj in range(j, j1)):
                        k1 += 1
                    zero = bytes(i1 - i)
                    for kk in range(k, k1):
                        for jj in range(j, j1):
                            b = (kk * ny + jj) * nx
                            c[b + i:b + i1] = zero
                    out.append(((self.xs[i], self.ys[j], self.zs[k],
                                 self.xs[i1], self.ys[j1], self.zs[k1]), m))
                    i = i1
        return out


def _AxesFor(face):
    """Valve 220 texture axes for a face, chosen like TrenchBroom's paraxial projection."""
    n = face.Normal()
    ax, ay, az = abs(n[0]), abs(n[1]), abs(n[2])
    if az >= ax and az >= ay:
        return "[ 1 0 0 0 ] [ 0 -1 0 0 ]"
    if ax >= ay:
        return "[ 0 1 0 0 ] [ 0 0 -1 0 ]"
    return "[ 1 0 0 0 ] [ 0 0 -1 0 ]"


def _Num(v):
    assert v == int(v), v
    return str(int(v))


def WriteMap(out, world_keys, world_brushes, entities):
    """Writes Valve 220 text to the stream `out`. `entities` are (keys, brushes) pairs; keys is a
    list of (key, value) in output order."""
    out.write("// Game: Quake\n// Format: Valve\n")
    all_entities = [(world_keys, world_brushes)] + list(entities)
    for n, (keys, brushes) in enumerate(all_entities):
        out.write("// entity %d\n{\n" % n)
        for k, v in keys:
            out.write('"%s" "%s"\n' % (k, v))
        for b, brush in enumerate(brushes):
            out.write("// brush %d\n{\n" % b)
            for f in brush.faces:
                pts = " ".join("( %s )" % " ".join(_Num(c) for c in p) for p in f.points)
                out.write("%s %s %s 0 1 1\n" % (pts, f.texture, _AxesFor(f)))
            out.write("}\n")
        out.write("}\n")
