# The three map kinds: arena (grid of rooms on several levels), small (one room, platforms) and
# metropolis (city block grid). Each fills a MapDoc from its parameters and a seeded RNG.
import random

from brushes import RampBrush
from mapdoc import MapDoc, AngleTowards

STEP_RISE = 16    # Quake steps up 18
STEP_DEPTH = 32
CORRIDOR_W = 128
CORRIDOR_H = 128


class Reservations:
    """Boxes already used by features, so spots and features never overlap one another."""

    def __init__(self):
        self.boxes = []

    def IsFree(self, box, margin=0):
        x0, y0, z0, x1, y1, z1 = box
        for b in self.boxes:
            if (x0 - margin < b[3] and b[0] < x1 + margin and y0 - margin < b[4] and
                    b[1] < y1 + margin and z0 < b[5] and b[2] < z1):
                return False
        return True

    def Add(self, box):
        self.boxes.append(tuple(box))

    def TryAdd(self, box, margin=0):
        if not self.IsFree(box, margin):
            return False
        self.Add(box)
        return True


def SpotBox(x, y, floor):
    """The volume a player standing at (x, y) on `floor` needs, with 16 units to spare around."""
    return (x - 32, y - 32, floor, x + 32, y + 32, floor + 64)


def Stairs(doc, res, x0, y0, x1, y1, floor, rise, ascend):
    """Steps of STEP_RISE x STEP_DEPTH filling the strip x0..x1, y0..y1, climbing `rise` units in
    direction `ascend` ('+x', '-x', '+y', '-y'), plus a clip ramp over the step noses."""
    n = rise // STEP_RISE
    axis, sign = ascend[1], ascend[0]
    lo, hi = (x0, x1) if axis == "x" else (y0, y1)
    assert hi - lo == n * STEP_DEPTH, "stair run must be steps * depth"
    for k in range(1, n + 1):
        front = (k - 1) * STEP_DEPTH
        t0, t1 = (lo + front, hi) if sign == "+" else (lo, hi - front)
        box = (t0, y0, floor, t1, y1, floor + k * STEP_RISE) if axis == "x" else \
            (x0, t0, floor, x1, t1, floor + k * STEP_RISE)
        doc.voxels.Fill(box, "step")
    s0, s1 = (y0, y1) if axis == "x" else (x0, x1)
    t_low, t_high = (lo, hi - STEP_DEPTH) if sign == "+" else (hi, lo + STEP_DEPTH)
    doc.extra_world.append(RampBrush(axis, t_low, t_high, s0, s1, floor, floor + STEP_RISE,
                                     floor + rise, "clip"))
    res.Add((x0, y0, floor, x1, y1, floor + rise))


# ---------------------------------------------------------------------------------------------
# arena: rooms_x x rooms_y rooms joined by corridors, each room ringed by balconies on every
# upper level; stairs reach level 1, jump pads the top level.

LEVEL_HEIGHT = 192
RING_DEPTH = 160
WEAPONS = ["weapon_supershotgun", "weapon_nailgun", "weapon_grenadelauncher",
           "weapon_supernailgun", "weapon_lightning", "weapon_rocketlauncher"]
AMMO = ["item_shells", "item_rockets", "item_spikes", "item_cells"]


def Centre(count, size, gap):
    """Start coordinate that centres `count` things of `size` with `gap` between them on the
    origin, rounded to 64 units so spots stay on the walk grid."""
    extent = count * size + (count - 1) * gap
    return -(extent // 2 // 64 * 64)


class Room:
    def __init__(self, i, j, a):
        self.i, self.j = i, j
        pitch = a.room_size + a.corridor_len
        self.x0 = Centre(a.rooms_x, a.room_size, a.corridor_len) + i * pitch
        self.y0 = Centre(a.rooms_y, a.room_size, a.corridor_len) + j * pitch
        self.x1, self.y1 = self.x0 + a.room_size, self.y0 + a.room_size
        self.cx0, self.cy0 = self.x0 + RING_DEPTH, self.y0 + RING_DEPTH
        self.cx1, self.cy1 = self.x1 - RING_DEPTH, self.y1 - RING_DEPTH
        self.xm, self.ym = (self.x0 + self.x1) // 2, (self.y0 + self.y1) // 2
        self.res = Reservations()

    def FloorSpots(self):
        """Open floor (z 0) in the middle area and under the balcony corners."""
        return [(self.cx0 + 64, self.cy1 - 64), (self.cx1 - 64, self.cy1 - 64),
                (self.cx0 + 64, self.cy0 + 160), (self.cx1 - 64, self.cy0 + 160),
                (self.x0 + 64, self.y0 + 64), (self.x1 - 64, self.y0 + 64),
                (self.x0 + 64, self.y1 - 64), (self.x1 - 64, self.y1 - 64)]

    def RingSpots(self):
        d = 96  # on the 160-deep balcony, 32 clear of the wall, on the 32-unit walk grid
        return [(self.x0 + d, self.y0 + d), (self.x1 - d, self.y0 + d),
                (self.x0 + d, self.y1 - d), (self.x1 - d, self.y1 - d),
                (self.xm, self.y0 + d), (self.xm, self.y1 - d),
                (self.x0 + d, self.ym), (self.x1 - d, self.ym)]

    def TakeSpot(self, rng, spots, floor):
        free = [s for s in spots if self.res.IsFree(SpotBox(s[0], s[1], floor))]
        assert free, "room %d,%d has no free spot" % (self.i, self.j)
        x, y = rng.choice(free)
        self.res.Add(SpotBox(x, y, floor))
        return x, y, AngleTowards(x, y, self.xm, self.ym)


def Arena(a, args_text):
    stair_run = (LEVEL_HEIGHT // STEP_RISE) * STEP_DEPTH
    if a.levels >= 2 and a.room_size < 2 * RING_DEPTH + stair_run + 64:
        raise ValueError("--room-size too small for balconies and stairs (need >= %d)" %
                         (2 * RING_DEPTH + stair_run + 64))
    rng = random.Random(a.seed)
    doc = MapDoc("arena", "Aftershock Arena (generated)", args_text)
    height = (a.levels - 1) * LEVEL_HEIGHT + 320
    top = (a.levels - 1) * LEVEL_HEIGHT
    rooms = {(i, j): Room(i, j, a) for j in range(a.rooms_y) for i in range(a.rooms_x)}
    order = [rooms[(i, j)] for j in range(a.rooms_y) for i in range(a.rooms_x)]
    for r in order:
        _ArenaRoomShell(doc, r, a, height)
    # Features that need a fixed place come first: stairs, pads, teleporters, the pool.
    for r in order:
        if a.levels >= 2:
            Stairs(doc, r.res, r.cx0, r.cy0, r.cx0 + stair_run, r.cy0 + 96, 0, LEVEL_HEIGHT, "-x")
            if (r.i + r.j) % 2 == 1 or len(order) == 1:
                r.res.Add((r.xm - 32, r.cy1 - 80, 0, r.xm + 32, r.cy1 - 16, height))
                doc.JumpPad(r.xm - 32, r.cy1 - 80, r.xm + 32, r.cy1 - 16, 0, top)
    _ArenaTeleporters(doc, rng, rooms, a)
    pool_room = rooms[(a.rooms_x // 2, a.rooms_y // 2)]
    _ArenaPool(doc, pool_room)
    for r in order:
        for px, py in ((r.cx0 + 160, r.cy1 - 160), (r.cx1 - 160, r.cy1 - 160)):
            box = (px - 32, py - 32, 0, px + 32, py + 32, height)
            if rng.random() < 0.5 and r.res.TryAdd(box, margin=48):
                doc.voxels.Fill(box, "pillar")
    _ArenaEntities(doc, rng, order, pool_room, a, top)
    doc.Finish()
    return doc


def _ArenaRoomShell(doc, r, a, height):
    """Carves the room and its corridors to the east and north; adds the balcony rings."""
    v = doc.voxels
    v.Carve((r.x0, r.y0, 0, r.x1, r.y1, height))
    hw = CORRIDOR_W // 2
    for k in range(a.levels):
        z = k * LEVEL_HEIGHT
        if r.i + 1 < a.rooms_x:
            v.Carve((r.x1, r.ym - hw, z, r.x1 + a.corridor_len, r.ym + hw, z + CORRIDOR_H))
        if r.j + 1 < a.rooms_y:
            x = r.cx1 if k == 0 else r.xm   # the ground corridor keeps clear of the stairs
            v.Carve((x - hw, r.y1, z, x + hw, r.y1 + a.corridor_len, z + CORRIDOR_H))
        if k >= 1:
            for box in ((r.x0, r.y0, r.x1, r.cy0), (r.x0, r.cy1, r.x1, r.y1),
                        (r.x0, r.cy0, r.cx0, r.cy1), (r.cx1, r.cy0, r.x1, r.cy1)):
                v.Fill((box[0], box[1], z - 16, box[2], box[3], z), "ledge")


def _ArenaTeleporters(doc, rng, rooms, a):
    """Pairs of corner rooms send players to each other: trigger pads in the middle of a room,
    destinations on free floor of the partner room."""
    if a.rooms_x < 2 or a.rooms_y < 2:
        return
    xl, yl = a.rooms_x - 1, a.rooms_y - 1
    pairs = [((0, 0), (xl, yl)), ((xl, 0), (0, yl))][:a.teleporters]
    for src_key, dst_key in pairs:
        for s, d in ((rooms[src_key], rooms[dst_key]), (rooms[dst_key], rooms[src_key])):
            box = (s.xm - 32, s.ym - 32, 0, s.xm + 32, s.ym + 32, 64)
            assert s.res.TryAdd(box, margin=32), "teleporter pad does not fit"
    for src_key, dst_key in pairs:
        for s, d in ((rooms[src_key], rooms[dst_key]), (rooms[dst_key], rooms[src_key])):
            x, y, angle = d.TakeSpot(rng, d.FloorSpots()[:4], 0)
            doc.Teleporter((s.xm - 32, s.ym - 32, 0, s.xm + 32, s.ym + 32, 64), x, y, 0, angle)


def _ArenaPool(doc, r):
    for px, py in ((r.xm, r.ym), (r.xm, r.cy0 + 224), (r.x1 - 96, r.ym)):
        box = (px - 96, py - 80, -64, px + 96, py + 80, 64)
        if r.res.TryAdd(box, margin=32):
            doc.voxels.Carve((px - 96, py - 80, -64, px + 96, py + 80, 0))
            doc.Liquid((px - 96, py - 80, -64, px + 96, py + 80, -8))
            return
    raise AssertionError("no room for the pool")


def _ArenaEntities(doc, rng, order, pool_room, a, top):
    """Spawns and pickups in each room: upper-level spots hold weapons and armor."""
    ring = (lambda r: r.RingSpots()) if a.levels >= 2 else (lambda r: r.FloorSpots())
    ring_z = top if a.levels >= 2 else 0
    for n, r in enumerate(order):
        for s in range(a.spawns_per_room):
            upper = s % 2 == 1 and a.levels >= 2
            x, y, ang = r.TakeSpot(rng, r.RingSpots() if upper else r.FloorSpots(),
                                   LEVEL_HEIGHT if upper else 0)
            doc.Spawn(x, y, LEVEL_HEIGHT if upper else 0, ang)
    for n, r in enumerate(order):
        weapon = "weapon_rocketlauncher" if r is pool_room else WEAPONS[n % (len(WEAPONS) - 1)]
        x, y, _ = r.TakeSpot(rng, ring(r), ring_z)
        doc.Pickup(weapon, x, y, ring_z)
        x, y, _ = r.TakeSpot(rng, r.FloorSpots()[4:], 0)
        doc.Pickup("item_health", x, y, 0)
        x, y, _ = r.TakeSpot(rng, r.FloorSpots(), 0)
        doc.Pickup(AMMO[n % len(AMMO)], x, y, 0)
        if r is pool_room:
            x, y, _ = r.TakeSpot(rng, ring(r), ring_z)
            doc.Pickup("item_health", x, y, ring_z, [("spawnflags", "2")])  # megahealth
        elif (r.i + r.j) % 2 == 1 and n == 1:
            x, y, _ = r.TakeSpot(rng, ring(r), ring_z)
            doc.Pickup("item_armor2", x, y, ring_z)
        elif (r.i + r.j) % 2 == 0:
            x, y, _ = r.TakeSpot(rng, r.FloorSpots(), 0)
            doc.Pickup("item_armor1", x, y, 0)


# ---------------------------------------------------------------------------------------------
# small: one room with three platforms (two by stairs, one by jump pad) and eight spawns.

def Small(a, args_text):
    doc = MapDoc("small", "Aftershock Small (generated)", args_text)
    res = Reservations()
    h = a.size // 2
    q = a.size // 4
    v = doc.voxels
    v.Carve((-h, -h, 0, h, h, a.height))
    v.Fill((q, q, 0, h, h, 128), "ledge")                     # NE platform, stairs along east wall
    res.Add((q, q, 0, h, h, 128))
    Stairs(doc, res, h - 96, q - 8 * STEP_DEPTH, h, q, 0, 128, "+y")
    v.Fill((-h, q, 0, -q, h, 96), "ledge")                    # NW platform, stairs along north wall
    res.Add((-h, q, 0, -q, h, 96))
    Stairs(doc, res, -q, h - 96, -q + 6 * STEP_DEPTH, h, 0, 96, "-x")
    v.Fill((-h, -h, 0, -q, -h + 192, 192), "ledge")           # SW platform, jump pad in front
    res.Add((-h, -h, 0, -q, -h + 192, 192))
    px = (-h - q) // 2
    doc.JumpPad(px - 32, -h + 208, px + 32, -h + 272, 0, 192)
    res.Add((px - 32, -h + 208, 0, px + 32, -h + 272, 32))
    v.Fill((-64, -64, 0, 64, 64, a.height), "pillar")         # central pillar
    res.Add((-64, -64, 0, 64, 64, a.height))
    v.Fill((q - 96, -q + 32, 0, q - 32, -q + 96, 32), "step")  # low crate, jumpable
    res.Add((q - 96, -q + 32, 0, q - 32, -q + 96, 32))
    spawns = [(-q, 0, 0), (q, 0, 0), (0, -q - 64, 0), (0, q + 64, 0), (-q - 64, -q + 96, 0),
              ((q + h) // 2, (q + h) // 2, 128), ((-q - h) // 2, (q + h) // 2, 96),
              (-h + 64, -h + 128, 192)]
    for x, y, z in spawns:
        assert res.TryAdd(SpotBox(x, y, z)), (x, y, z)
        doc.Spawn(x, y, z, AngleTowards(x, y, 0, 0))
    items = [("weapon_rocketlauncher", -q - 64, -h + 64, 192, ()),
             ("weapon_supershotgun", 0, -q + 96, 0, ()),
             ("item_armor2", h - 64, h - 64, 128, ()), ("item_armor1", -h + 64, h - 64, 96, ()),
             ("item_health", 0, q - 96, 0, ()), ("item_health", q - 96, q - 96, 0, ()),
             ("item_shells", -q + 96, 0, 0, ()), ("item_rockets", q + 32, -q - 64, 0, ())]
    for cls, x, y, z, extra in items:
        assert res.TryAdd(SpotBox(x, y, z)), (cls, x, y)
        doc.Pickup(cls, x, y, z, extra)
    doc.Finish()
    return doc


# ---------------------------------------------------------------------------------------------
# metropolis: blocks x blocks city blocks between streets; buildings of various heights, open
# squares, teleporters between squares, jump pads onto low roofs.

HEIGHTS = [128, 192, 256, 320, 384, 512, 640, 768, 1024]
BUILDING = ["bldg_a", "bldg_b", "bldg_c"]
STREET_ITEMS = ["item_health", "item_shells", "item_health", "item_rockets", "item_armor1",
                "weapon_supershotgun", "item_spikes", "weapon_rocketlauncher", "item_health",
                "weapon_nailgun", "item_cells", "item_armor2"]


def Metropolis(a, args_text):
    rng = random.Random(a.seed)
    doc = MapDoc("metropolis", "Aftershock Metropolis (generated)", args_text)
    n, b, s = a.blocks, a.block_size, a.street_width
    extent = s + n * (b + s)
    sky = max(HEIGHTS) + 256
    res = Reservations()
    v = doc.voxels
    base = -(extent // 2 // 64 * 64)   # centred on the origin, on the 64-unit grid
    v.Carve((base, base, 0, base + extent, base + extent, sky))
    v.Fill((base - 16, base - 16, -16, base + extent + 16, base + extent + 16, 0), "street")
    reach = max(-base, base + extent) + 16
    half = (reach + 1023) // 1024 * 1024   # tells TrenchBroom the map is meant to be this big
    doc.world_keys.append(("_tb_soft_map_bounds", "%d %d -4096 %d %d 4096" %
                           (-half, -half, half, half)))
    blocks = [(i, j) for j in range(n) for i in range(n)]
    n_squares = max(int(round(len(blocks) * a.squares)), 2 * a.teleporters)
    squares = sorted(rng.sample(blocks, min(n_squares, len(blocks))), key=lambda k: (k[1], k[0]))
    square_set = set(squares)
    built = [k for k in blocks if k not in square_set]
    pad_blocks = set(rng.sample(built, min(a.pads, len(built))))
    rest = [k for k in built if k not in pad_blocks]
    stair_blocks = set(rng.sample(rest, min(a.roof_stairs, len(rest))))

    def Origin(i, j):
        return base + s + i * (b + s), base + s + j * (b + s)

    for (i, j) in blocks:
        if (i, j) in square_set:
            continue
        x0, y0 = Origin(i, j)
        if (i, j) in pad_blocks:
            v.Fill((x0, y0, 0, x0 + b, y0 + b, 192), rng.choice(BUILDING))
            px = x0 + b // 4
            doc.JumpPad(px - 32, y0 - 80, px + 32, y0 - 16, 0, 192)
            res.Add((px - 32, y0 - 80, 0, px + 32, y0 - 16, 32))
            doc.Pickup(rng.choice(["item_armor2", "weapon_rocketlauncher", "item_rockets"]),
                       x0 + b // 2, y0 + b // 2, 192)
            continue
        if (i, j) in stair_blocks:
            v.Fill((x0, y0, 0, x0 + b, y0 + b, 128), rng.choice(BUILDING))
            sx = x0 + b // 2
            Stairs(doc, res, sx, y0 - 96, sx + 8 * STEP_DEPTH, y0, 0, 128, "+x")
            doc.Pickup(rng.choice(["item_health", "item_armor1", "weapon_supershotgun"]),
                       x0 + b // 2, y0 + b // 2, 128)
            continue
        for bx0, by0, bx1, by1 in _SplitBlock(rng, x0, y0, b):
            v.Fill((bx0, by0, 0, bx1, by1, rng.choice(HEIGHTS)), rng.choice(BUILDING))
    _MetroSquares(doc, rng, res, squares, Origin, b, a.teleporters)
    _MetroStreets(doc, rng, res, n, b, s, a.spawns_per_street, base)
    doc.Finish()
    return doc


def _SplitBlock(rng, x0, y0, b):
    """One, two or four buildings filling a block."""
    kind = rng.randrange(4)
    sx = x0 + rng.choice([b // 2 - 64, b // 2, b // 2 + 64])
    sy = y0 + rng.choice([b // 2 - 64, b // 2, b // 2 + 64])
    x1, y1 = x0 + b, y0 + b
    if kind == 0:
        return [(x0, y0, x1, y1)]
    if kind == 1:
        return [(x0, y0, sx, y1), (sx, y0, x1, y1)]
    if kind == 2:
        return [(x0, y0, x1, sy), (x0, sy, x1, y1)]
    return [(x0, y0, sx, sy), (sx, y0, x1, sy), (x0, sy, sx, y1), (sx, sy, x1, y1)]


def _MetroSquares(doc, rng, res, squares, origin, b, pairs):
    """Four spawns per open square; 2 * pairs squares get teleporter pads, joined in pairs, each
    sending players to a spot beside its partner's pad."""
    half = b // 2
    for (i, j) in squares:
        x0, y0 = origin(i, j)
        for fx, fy in ((1, 1), (3, 1), (1, 3), (3, 3)):
            x, y = x0 + fx * b // 4, y0 + fy * b // 4
            res.Add(SpotBox(x, y, 0))
            doc.Spawn(x, y, 0, AngleTowards(x, y, x0 + half, y0 + half))
    tp = rng.sample(squares, min(2 * pairs, len(squares) // 2 * 2))
    for p in range(0, len(tp), 2):
        for src, dst in ((tp[p], tp[p + 1]), (tp[p + 1], tp[p])):
            sx, sy = origin(*src)
            dx, dy = origin(*dst)
            box = (sx + half - 32, sy + half - 32, 0, sx + half + 32, sy + half + 32, 64)
            res.Add(box)
            doc.Teleporter(box, dx + half, dy + b // 4, 0, 270)


def _MetroStreets(doc, rng, res, n, b, s, per_segment, base):
    """Spawns spread along every street segment; pickups on every intersection."""
    pitch = b + s
    for j in range(n + 1):
        for i in range(n):
            for m in range(per_segment):
                along = base + s + i * pitch + b * (m + 1) // (per_segment + 1)
                across = base + j * pitch + s // 2
                for x, y, ang in ((along, across, 0 if (i + j) % 2 else 180),
                                  (across, along, 90 if (i + j) % 2 else 270)):
                    if res.TryAdd(SpotBox(x, y, 0)):
                        doc.Spawn(x, y, 0, ang)
    for j in range(n + 1):
        for i in range(n + 1):
            x, y = base + i * pitch + s // 2, base + j * pitch + s // 2
            if res.TryAdd(SpotBox(x, y, 0)):
                doc.Pickup(rng.choice(STREET_ITEMS), x, y, 0)
