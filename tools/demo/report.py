#!/usr/bin/python3
"""Prints the demo's summaries from the server's stats JSON and the bots' JSON summary.

  report.py server FILE            time breakdown, frame times, locking, checkpoints
  report.py recovery FILE KILLED   recovery figures after a restart (KILLED: epoch seconds of the kill)
  report.py bots FILE              response rate, response time percentiles, durability check
"""
import json
import os
import sys

BREAKDOWN = ["world", "receive", "exec", "lock_leaf", "lock_parent", "reply", "checkpoint", "log_sync",
             "intra_wait", "inter_wait", "idle"]


def load(path):
    with open(path) as f:
        return json.load(f)


def fmt(v, digits=2):
    if isinstance(v, float):
        return f"{v:.{digits}f}"
    return str(v)


def server(path):
    s = load(path)
    print(f"server: {s.get('threads')} threads, locking {s.get('locking')}, {s.get('frame_mode')} frames, "
          f"map {os.path.basename(str(s.get('map')))}")
    print(f"  players {s.get('players')}  frames {s.get('frames')}  requests {s.get('requests')}  "
          f"replies {s.get('replies')}  invalid packets {s.get('invalid_packets')}  kicked {s.get('kicked')}")
    fm = s.get("frame_ms", {})
    print(f"  frame ms: mean {fmt(fm.get('mean'))}  p50 {fmt(fm.get('p50'))}  p99 {fmt(fm.get('p99'))}  "
          f"max {fmt(fm.get('max'))}")
    bd = s.get("breakdown_pct", {})
    cells = [f"{k} {bd[k]:.1f}%" for k in BREAKDOWN if k in bd]
    print("  time breakdown: " + "  ".join(cells))
    lk = s.get("lock", {})
    if lk:
        print(f"  locking: leaves/request {fmt(lk.get('leaves_per_request'))}  relock {fmt(lk.get('relock_pct'), 1)}%  "
              f"leaves shared by 2+ threads {fmt(lk.get('shared_leaves_pct'), 1)}%")
    ck = s.get("checkpoint")
    if isinstance(ck, dict):
        print("  checkpoints: " + "  ".join(f"{k} {fmt(v)}" for k, v in ck.items() if not isinstance(v, (dict, list))))


def recovery(path, killed_at):
    s = load(path)
    r = s.get("recovery")
    if not isinstance(r, dict):
        print(f"  no 'recovery' object in {path}")
        return
    ready = os.path.getmtime(path)
    print("recovery: " + "  ".join(f"{k} {fmt(v)}" for k, v in r.items() if not isinstance(v, (dict, list))))
    print(f"  kill -9 to recovered stats written: {(ready - float(killed_at)) * 1000:.0f} ms (upper bound; "
          f"the bots' outage_ms below is kill to first reply)")


def bots(path):
    b = load(path)
    rm = b.get("response_ms", {})
    print(f"bots: {b.get('connected')}/{b.get('bots')} connected, {b.get('requests_sent')} requests, "
          f"{b.get('replies_received')} replies, response rate {fmt(b.get('response_rate'), 1)}/s")
    print(f"  response ms: mean {fmt(rm.get('mean'))}  p50 {fmt(rm.get('p50'))}  p90 {fmt(rm.get('p90'))}  "
          f"p99 {fmt(rm.get('p99'))}  max {fmt(rm.get('max'))}")
    print(f"  unanswered {b.get('unanswered')}  join failures {b.get('join_failures')}  reconnects {b.get('reconnects')}  "
          f"bot cpu {fmt(b.get('cpu_s'))} s")
    print(f"  longest outage {fmt(b.get('outage_ms'), 0)} ms   durability violations: {b.get('durability_violations')}")


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    kind, path = sys.argv[1], sys.argv[2]
    try:
        if kind == "server":
            server(path)
        elif kind == "recovery" and len(sys.argv) == 4:
            recovery(path, sys.argv[3])
        elif kind == "bots":
            bots(path)
        else:
            sys.exit(__doc__)
    except (OSError, ValueError) as e:
        print(f"  (could not read {path}: {e})")


if __name__ == "__main__":
    main()
