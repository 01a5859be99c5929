#!/usr/bin/env python3
# Independent count of the figures maps/map_loader_test.cc asserts for the LibreQuake maps:
# line-based parsing (TrenchBroom writes one brace or face per line), contents by the rules in
# maps/map.h, corners by brute-force triple-plane intersection. Shares no code with as_maps.
# Usage: tools/mapcheck/count_real_maps.py maps/librequake/lqdm*.map
import itertools
import sys


def cross(a, b):
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


def sub(a, b):
    return tuple(x - y for x, y in zip(a, b))


def dot(a, b):
    return sum(x * y for x, y in zip(a, b))


def corners(planes):
    found = []
    for (n1, d1), (n2, d2), (n3, d3) in itertools.combinations(planes, 3):
        det = dot(n1, cross(n2, n3))
        if abs(det) < 1e-9:
            continue
        p = tuple((d1 * x + d2 * y + d3 * z) / det
                  for x, y, z in zip(cross(n2, n3), cross(n3, n1), cross(n1, n2)))
        if all(dot(n, p) - d <= 1e-3 for n, d in planes) and \
                not any(max(abs(a - b) for a, b in zip(p, q)) < 1e-3 for q in found):
            found.append(p)
    return found


def read_entities(path):
    entities, depth = [], 0
    for line in open(path):
        s = line.strip()
        if not s or s.startswith('//'):
            continue
        if s == '{':
            depth += 1
            if depth == 1:
                entities.append({'keys': {}, 'brushes': []})
            else:
                entities[-1]['brushes'].append([])
        elif s == '}':
            depth -= 1
        elif s.startswith('"'):
            parts = s.split('"')
            entities[-1]['keys'][parts[1]] = parts[3]
        elif s.startswith('('):
            t = s.replace('(', ' ').replace(')', ' ').split()
            points = [tuple(float(x) for x in t[i * 3:i * 3 + 3]) for i in range(3)]
            entities[-1]['brushes'][-1].append((points, t[9]))
    return entities


def is_solid(classname, faces):
    textures = [t.lower() for _, t in faces if t.lower() not in ('skip', 'hint', 'hintskip')]
    if classname.startswith('trigger_') or classname in ('func_detail_illusionary', 'func_illusionary'):
        return False
    return bool(textures) and not textures[0].startswith('*') and textures[0] != 'trigger'


def report(path):
    entities = read_entities(path)
    brushes = solid = vertices = 0
    mins, maxs = [1e9] * 3, [-1e9] * 3
    for e in entities:
        classname = e['keys'].get('classname', '')
        for faces in e['brushes']:
            planes = []
            for (p0, p1, p2), _ in faces:
                n = cross(sub(p0, p1), sub(p2, p1))
                length = dot(n, n) ** 0.5
                n = tuple(x / length for x in n)
                planes.append((n, dot(n, p1)))
            found = corners(planes)
            brushes += 1
            vertices += len(found)
            if is_solid(classname, faces):
                solid += 1
                for v in found:
                    mins = [min(a, b) for a, b in zip(mins, v)]
                    maxs = [max(a, b) for a, b in zip(maxs, v)]
    classes = [e['keys'].get('classname') for e in entities]
    targets = {e['keys'].get('targetname') for e in entities
               if e['keys'].get('classname') == 'info_teleport_destination'}
    teleporters = [e for e in entities if e['keys'].get('classname') == 'trigger_teleport']
    resolved = sum(1 for t in teleporters if t['keys'].get('target') in targets)
    pickups = sum(1 for c in classes if c.startswith('item_') or c.startswith('weapon_'))
    print(f"{path}: entities {len(entities)}, brushes {brushes}, solid {solid}, "
          f"spawns {classes.count('info_player_deathmatch') + classes.count('info_player_start')} "
          f"(deathmatch {classes.count('info_player_deathmatch')}), pickups {pickups}, "
          f"teleporters {resolved} of {len(teleporters)} resolved, vertices {vertices}, "
          f"bounds {[round(x, 3) for x in mins]} .. {[round(x, 3) for x in maxs]}")


for path in sys.argv[1:]:
    report(path)
