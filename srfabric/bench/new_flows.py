"""Send one UDP datagram per new flow (a fresh source port each), paced; run inside a host's namespace.

``python -m srfabric.bench.new_flows DST PORT COUNT RATE`` prints the source ports it used, one per line;
``python -m srfabric.bench.new_flows --listen PORT`` swallows them at the destination, so that it
answers with no ICMP errors (which would be new flows of their own).
"""

from __future__ import annotations

import socket
import sys
import time

FIRST_SOURCE_PORT = 20000


def send_new_flows(destination: str, port: int, count: int, rate: float) -> list[int]:
    if count > 65535 - FIRST_SOURCE_PORT:
        raise SystemExit(f"count {count} is above {65535 - FIRST_SOURCE_PORT}, the source ports available")
    gap = 1.0 / rate
    start = time.monotonic()
    used = []
    for index in range(count):
        delay = start + index * gap - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
            # Explicit source ports: random ephemeral ones repeat (about 18 in 1,000), and a repeat is no new flow.
            sock.bind(("0.0.0.0", FIRST_SOURCE_PORT + index))
            sock.sendto(b"srfabric new flow", (destination, port))
            used.append(sock.getsockname()[1])
    return used


def listen(port: int) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.bind(("0.0.0.0", port))
        while True:
            sock.recv(2048)


if __name__ == "__main__":
    if sys.argv[1] == "--listen":
        listen(int(sys.argv[2]))
    for used_port in send_new_flows(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])):
        print(used_port)
