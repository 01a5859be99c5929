#!/usr/bin/python3
"""Counts the client-to-server ENet datagrams on loopback by the commands they carry, to see what
besides the game's commands the clients send (acknowledgements, pings...). Needs root (a raw
AF_PACKET socket on `lo`); reads nothing but headers.

  tools/experiments/enet_commands.py --ports 27501-27510 --seconds 5

while a server (worker ports in the range) and aftershock-bots run. Prints the datagram count
and, per set of ENet command types in a datagram, how many datagrams had it. ENet 1.3 command
types: 1 acknowledge, 2 connect, 3 verify connect, 4 disconnect, 5 ping, 6 send reliable,
7 send unreliable, 8 send fragment, 9 send unsequenced, 10 bandwidth limit, 11 throttle
configure, 12 send unreliable fragment.
"""
import argparse
import collections
import socket
import struct
import time

# Bytes of each command before its payload (ENet 1.3.17 protocol.h); a send's payload length is
# the command's last u16.
COMMAND_BYTES = {1: 8, 2: 48, 3: 44, 4: 8, 5: 4, 6: 6, 7: 8, 8: 24, 9: 8, 10: 12, 11: 16, 12: 24}
SEND_COMMANDS = {6, 7, 9}
HAS_SENT_TIME = 0x8000


def command_types(payload):
    peer = struct.unpack("!H", payload[:2])[0]
    off = 4 if peer & HAS_SENT_TIME else 2
    types = set()
    while off + 4 <= len(payload):
        kind = payload[off] & 0x0F
        types.add(kind)
        if kind not in COMMAND_BYTES or kind in (8, 12):  # fragments: stop at the first
            break
        size = COMMAND_BYTES[kind]
        if kind in SEND_COMMANDS:
            size += struct.unpack("!H", payload[off + size - 2:off + size])[0]
        off += size
    return types


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ports", required=True, help="destination UDP ports LO-HI (the server's)")
    ap.add_argument("--seconds", type=float, default=5)
    args = ap.parse_args()
    lo, hi = (int(p) for p in args.ports.split("-"))
    sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.ntohs(0x0003))
    sock.bind(("lo", 0))
    sock.settimeout(0.5)
    counts = collections.Counter()
    end = time.time() + args.seconds
    while time.time() < end:
        try:
            frame, addr = sock.recvfrom(65535)
        except socket.timeout:
            continue
        if addr[2] == socket.PACKET_OUTGOING or frame[12:14] != b"\x08\x00":
            continue  # each loopback datagram is seen twice; IPv4 only
        ip = frame[14:]
        if ip[9] != 17:
            continue
        udp = ip[(ip[0] & 15) * 4:]
        dport = struct.unpack("!H", udp[2:4])[0]
        payload = udp[8:]
        if not lo <= dport <= hi or len(payload) < 2:
            continue
        if payload[:4] == b"\xff\xff\xff\xff":
            counts["connectionless"] += 1
        else:
            counts["+".join(str(t) for t in sorted(command_types(payload)))] += 1
    print(f"datagrams {sum(counts.values())} in {args.seconds:g} s")
    for key, n in counts.most_common():
        print(f"  command types {key}: {n}")


if __name__ == "__main__":
    main()
