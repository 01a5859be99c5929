# MapDoc: one map being generated: world geometry (voxel ops + extra brushes), entities in file
# order, and the facts the checks need (spawns, pickups, teleporters, jump pads).
import math

from brushes import BoxBrush, VoxelBuilder, WriteMap

SPAWN_LIFT = 25          # origin z = floor + 24 (hull bottom on the floor) + 1
GRAVITY = 800            # units/s^2, Quake sv_gravity
PAD_TRIGGER_HEIGHT = 32  # jump pad triggers span floor .. floor + 32


def HullBox(x, y, floor):
    """The player hull (32 x 32 x 56) standing 1 unit above `floor` at (x, y): min and max corners."""
    return (x - 16, y - 16, floor + 1, x + 16, y + 16, floor + 57)


def PadSpeed(rise):
    """trigger_push speed (units/s, multiple of 50) that lifts the hull bottom at least 48 units
    above a ledge `rise` units over the pad's floor, after leaving the trigger's top."""
    speed = 50
    while PadApex(speed) < rise + 48:
        speed += 50
    return speed


def PadApex(speed):
    """Highest point of the hull bottom above the pad's floor."""
    return PAD_TRIGGER_HEIGHT + speed * speed / (2 * GRAVITY)


class MapDoc:
    def __init__(self, name, message, generator_args):
        self.name = name
        self.world_keys = [("mapversion", "220"), ("classname", "worldspawn"),
                           ("message", message), ("_generator", generator_args)]
        self.voxels = VoxelBuilder()
        self.extra_world = []   # clip ramps and liquids (not part of the voxel grid)
        self.entities = []      # (keys, brushes) after worldspawn, in file order
        self.spawns = []        # (x, y, floor_z)
        self.pickups = []       # (classname, x, y, floor_z)
        self.dests = []         # (x, y, floor_z)
        self.teleports = []     # (trigger box, destination index)
        self.pads = []          # (trigger box, ledge_z, speed)
        self.liquids = []       # boxes
        self.world_brushes = None
        self.outer = None
        self._next_tp = 1

    def Spawn(self, x, y, floor, angle):
        self.spawns.append((x, y, floor))
        self._Point("info_player_deathmatch", x, y, floor, [("angle", str(angle))])

    def Pickup(self, classname, x, y, floor, extra=()):
        self.pickups.append((classname, x, y, floor))
        self._Point(classname, x, y, floor, list(extra))

    def _Point(self, classname, x, y, floor, keys):
        origin = "%d %d %d" % (x, y, floor + SPAWN_LIFT)
        self.entities.append(([("classname", classname), ("origin", origin)] + keys, []))

    def Teleporter(self, trigger_box, dest_x, dest_y, dest_floor, dest_angle):
        """A trigger_teleport brush entity and its info_teleport_destination."""
        name = "tp%d" % self._next_tp
        self._next_tp += 1
        self.entities.append(([("classname", "trigger_teleport"), ("target", name)],
                              [BoxBrush(trigger_box, "trigger", "trigger", solid=False)]))
        self.dests.append((dest_x, dest_y, dest_floor))
        self.teleports.append((tuple(trigger_box), len(self.dests) - 1))
        self.entities.append(([("classname", "info_teleport_destination"), ("targetname", name),
                               ("origin", "%d %d %d" % (dest_x, dest_y, dest_floor + SPAWN_LIFT)),
                               ("angle", str(dest_angle))], []))

    def JumpPad(self, x0, y0, x1, y1, floor, ledge_z):
        """A trigger_push straight up, fast enough to land on a ledge at height ledge_z."""
        speed = PadSpeed(ledge_z - floor)
        box = (x0, y0, floor, x1, y1, floor + PAD_TRIGGER_HEIGHT)
        self.pads.append((box, ledge_z, speed))
        self.entities.append(([("classname", "trigger_push"), ("angle", "-1"),
                               ("speed", str(speed))],
                              [BoxBrush(box, "trigger", "trigger", solid=False)]))

    def Liquid(self, box, texture="*water"):
        self.liquids.append(tuple(box))
        self.extra_world.append(BoxBrush(box, texture, texture, solid=False))

    def Finish(self, shell=16):
        grid_brushes, self.outer = self.voxels.Build(shell)
        self.world_brushes = grid_brushes + self.extra_world

    def Write(self, stream):
        WriteMap(stream, self.world_keys, self.world_brushes, self.entities)

    def Counts(self):
        classes = {}
        for keys, _ in self.entities:
            classes[keys[0][1]] = classes.get(keys[0][1], 0) + 1
        brushes = len(self.world_brushes) + sum(len(b) for _, b in self.entities)
        o = self.outer
        return {
            "brushes": brushes,
            "world_brushes": len(self.world_brushes),
            "spawns": len(self.spawns),
            "pickups": len(self.pickups),
            "teleporters": len(self.teleports),
            "jump_pads": len(self.pads),
            "liquids": len(self.liquids),
            "bounds": "(%d %d %d)..(%d %d %d)" % o,
            "size": "%d x %d x %d" % (o[3] - o[0], o[4] - o[1], o[5] - o[2]),
            "classes": classes,
        }


def AngleTowards(x, y, tx, ty):
    """Yaw in degrees (multiple of 45) looking from (x, y) towards (tx, ty)."""
    a = math.degrees(math.atan2(ty - y, tx - x))
    return int(round(a / 45.0)) * 45 % 360
