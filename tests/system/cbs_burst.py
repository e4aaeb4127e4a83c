"""Guest side of ``test_cbs_qemu``: send a burst of UDP frames to one address through the shaped port, and print,
as JSON, when each reached the veth's far end (kernel timestamps, ns).

``python cbs_burst.py DEV PEER ADDRESS COUNT PAYLOAD_OCTETS``"""

from __future__ import annotations

import json
import socket
import struct
import sys
import time

SO_TIMESTAMPNS = 35


def main(dev: str, peer: str, address: str, count: int, payload: int) -> None:
    listen = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0800))
    listen.bind((peer, 0))
    listen.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    listen.settimeout(0.5)
    send = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    send.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, dev.encode())
    wanted = socket.inet_aton(address)
    for _ in range(count):
        send.sendto(bytes(payload), (address, 9))
    arrived: list[int] = []
    size = 0
    deadline = time.monotonic() + 5
    while len(arrived) < count and time.monotonic() < deadline:
        try:
            frame, ancillary, _, _ = listen.recvmsg(2048, 64)
        except TimeoutError:
            continue
        if frame[30:34] != wanted or frame[23] != socket.IPPROTO_UDP:  # after the 14-octet MAC header
            continue
        size = len(frame)
        for level, kind, data in ancillary:
            if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS:
                seconds, nanoseconds = struct.unpack("qq", data[:16])
                arrived.append(seconds * 1_000_000_000 + nanoseconds)
    print("BURST " + json.dumps({"address": address, "sent": count, "arrived": arrived, "bytes": size}))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
