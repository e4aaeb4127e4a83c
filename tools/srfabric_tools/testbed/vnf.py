"""A service function for the testbed: forward frames between two interfaces and count them.

It runs inside a Mininet node's namespace as ``python -m srfabric_tools.testbed.vnf``.
Frames are forwarded as they are (source-routing header included), in both
directions, with AF_PACKET sockets. Per flow key (``udp:5001``, ``tcp:5201``,
``icmp``) it counts packets and, to prove the order of functions, notes the
DSCP value the frame arrived with before stamping its own mark into it (IPv6: in the traffic class). The
counters are written as JSON to ``--stats`` every half second and on exit.
"""

from __future__ import annotations

import argparse
import json
import os
import select
import signal
import socket
import struct
import time
from collections import defaultdict
from pathlib import Path

ETH_P_ALL = 0x0003
SOL_PACKET = 263
PACKET_AUXDATA = 8
PACKET_OUTGOING = 4
TP_STATUS_VLAN_VALID = 0x10
TP_STATUS_VLAN_TPID_VALID = 0x40
AUXDATA = struct.Struct("IIIHHHH")
PROTO_NAMES = {1: "icmp", 6: "tcp", 17: "udp"}


def ip_offset(frame: bytes | bytearray) -> int | None:
    """Where the IPv4 or IPv6 header starts, skipping VLAN tags and an MPLS label stack."""
    offset = 12
    while offset + 2 <= len(frame):
        ethertype = int.from_bytes(frame[offset : offset + 2], "big")
        offset += 2
        if ethertype in (0x8100, 0x88A8):
            offset += 2
            continue
        if ethertype == 0x8847:
            while offset + 4 <= len(frame):
                bottom = frame[offset + 2] & 0x01
                offset += 4
                if bottom:
                    break
            return _whole_header(frame, offset)
        return _whole_header(frame, offset) if ethertype in (0x0800, 0x86DD) else None
    return None


def _whole_header(frame: bytes | bytearray, offset: int) -> int | None:
    if offset + 20 > len(frame):
        return None
    version = frame[offset] >> 4
    if version == 4:
        ihl = frame[offset] & 0x0F
        return offset if ihl >= 5 and offset + ihl * 4 <= len(frame) else None
    return offset if version == 6 and offset + 40 <= len(frame) else None


def flow_key(frame: bytes | bytearray, ip: int) -> str:
    """``udp:5001``-style key; IPv6 (no extension headers) as ``tcp6:5201``."""
    six = frame[ip] >> 4 == 6
    proto = frame[ip + 6] if six else frame[ip + 9]
    name = PROTO_NAMES.get(proto, f"ip{proto}") + ("6" if six else "")
    if proto in (6, 17):
        header = 40 if six else (frame[ip] & 0x0F) * 4
        if ip + header + 4 <= len(frame):
            return f"{name}:{int.from_bytes(frame[ip + header + 2 : ip + header + 4], 'big')}"
    return name


def stamp_dscp(frame: bytearray, ip: int, mark: int) -> int:
    """Replace the DSCP (IPv6: the traffic class's top six bits) with ``mark``, fix an IPv4 header's
    checksum, return the previous DSCP."""
    if frame[ip] >> 4 == 6:
        traffic_class = (frame[ip] & 0x0F) << 4 | frame[ip + 1] >> 4
        stamped = (mark << 2) | (traffic_class & 0x03)
        frame[ip] = (frame[ip] & 0xF0) | stamped >> 4
        frame[ip + 1] = (frame[ip + 1] & 0x0F) | (stamped & 0x0F) << 4
        return traffic_class >> 2
    previous = frame[ip + 1] >> 2
    frame[ip + 1] = (mark << 2) | (frame[ip + 1] & 0x03)
    header = (frame[ip] & 0x0F) * 4
    frame[ip + 10 : ip + 12] = b"\x00\x00"
    total = sum(struct.unpack(f"!{header // 2}H", bytes(frame[ip : ip + header])))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    frame[ip + 10 : ip + 12] = struct.pack("!H", ~total & 0xFFFF)
    return previous


def open_socket(interface: str) -> socket.socket:
    sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    sock.setsockopt(SOL_PACKET, PACKET_AUXDATA, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    sock.bind((interface, 0))
    sock.setblocking(False)
    return sock


def with_vlan(frame: bytes, ancillary: list[tuple[int, int, bytes]]) -> bytes:
    """Put back the VLAN tag the kernel moved into metadata on receive."""
    for level, kind, data in ancillary:
        if level == SOL_PACKET and kind == PACKET_AUXDATA and len(data) >= AUXDATA.size:
            status, _, _, _, _, tci, tpid = AUXDATA.unpack_from(data)
            if status & TP_STATUS_VLAN_VALID:
                tpid = tpid if status & TP_STATUS_VLAN_TPID_VALID else 0x8100
                return frame[:12] + struct.pack("!HH", tpid, tci) + frame[12:]
    return frame


class Counters:
    def __init__(self, name: str) -> None:
        self.name = name
        self.flows: dict[str, dict[str, dict[str, int]]] = defaultdict(lambda: defaultdict(lambda: defaultdict(int)))
        self.dropped: dict[str, int] = defaultdict(int)

    def note(self, direction: str, key: str, previous: int | None) -> None:
        entry = self.flows[direction][key]
        entry["packets"] += 1
        if previous is not None:
            entry[f"from_mark_{previous}"] += 1

    def dump(self, path: Path) -> None:
        data = {"name": self.name, "pid": os.getpid(), "time": time.time(), "flows": self.flows,
                "dropped": self.dropped}
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(data))
        tmp.replace(path)


def run(ingress: str, egress: str, mark: int, stats: Path, name: str) -> None:
    sockets = {"forward": (open_socket(ingress), open_socket(egress)),
               "reverse": (open_socket(egress), open_socket(ingress))}
    by_fd = {pair[0].fileno(): (direction, *pair) for direction, pair in sockets.items()}
    counters = Counters(name)
    stopping = False

    def stop(_sig: int, _frame: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    poller = select.poll()
    for fd in by_fd:
        poller.register(fd, select.POLLIN)
    counters.dump(stats)  # the file's existence tells the testbed the sockets are bound
    last_dump = time.monotonic()
    while not stopping:
        for fd, _ in poller.poll(200):
            direction, rx, tx = by_fd[fd]
            for _ in range(64):
                try:
                    data, ancillary, _flags, address = rx.recvmsg(65536, socket.CMSG_SPACE(AUXDATA.size))
                except BlockingIOError:
                    break
                except OSError:  # its port went down (ENETDOWN, said once): frames come again once it is up
                    counters.dropped["receive"] += 1
                    break
                if address[2] == PACKET_OUTGOING:
                    continue
                frame = bytearray(with_vlan(data, ancillary))
                if int.from_bytes(frame[12:14], "big") == 0x88CC:
                    counters.dropped["lldp"] += 1  # link-local: a bridge never forwards it
                    continue
                try:
                    ip = ip_offset(frame)
                    if ip is not None:
                        previous = stamp_dscp(frame, ip, mark) if mark else None
                        counters.note(direction, flow_key(frame, ip), previous)
                    else:
                        counters.note(direction, "other", None)
                except (IndexError, struct.error):
                    counters.dropped["malformed"] += 1  # one bad frame must not stop the function
                    continue
                try:
                    tx.send(frame)
                except OSError:
                    counters.dropped["send"] += 1
        now = time.monotonic()
        if now - last_dump > 0.5:
            counters.dump(stats)
            last_dump = now
    counters.dump(stats)


def main() -> None:
    parser = argparse.ArgumentParser(description="srfabric testbed service function")
    parser.add_argument("--name", required=True)
    parser.add_argument("--ingress", required=True)
    parser.add_argument("--egress", required=True)
    parser.add_argument("--mark", type=int, default=0, help="DSCP value to stamp (1..63), 0 for none")
    parser.add_argument("--stats", type=Path, required=True)
    args = parser.parse_args()
    run(args.ingress, args.egress, args.mark, args.stats, args.name)


if __name__ == "__main__":
    main()
