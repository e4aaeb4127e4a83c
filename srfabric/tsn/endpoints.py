"""TSSDN's end systems: a talker that sends in its slot every period, a listener that timestamps arrivals.

``python -m srfabric.tsn.endpoints talk --dst IP --port P --period-ns N --offset-ns O --count C``
sends frame ``i`` at the first ``t ≡ O (mod N)`` on CLOCK_TAI after it starts,
then every period (a timed send: sleep, then spin the last stretch);
each datagram carries its sequence number and the time it was meant to leave.
``listen --port P --count C`` reads the kernel's receive timestamp of each
datagram (``SO_TIMESTAMPNS``, moved onto CLOCK_TAI) and prints one JSON line:
frames, losses and latency statistics, and with ``--csv`` every frame.

Examples
--------
>>> summary([10, 20, 30], sent=4)
{'frames': 3, 'lost': 1, 'mean_ns': 20.0, 'std_ns': 8.2, 'min_ns': 10, 'max_ns': 30, 'p50_ns': 20, 'p99_ns': 30}
"""

from __future__ import annotations

import argparse
import json
import math
import socket
import struct
import sys
import time
from pathlib import Path
from typing import Any

HEADER = struct.Struct("!IQ")  # sequence number, planned send time (CLOCK_TAI ns)
SPIN_NS = 200_000  # the last stretch before a send is spun, not slept: sleep wakes up late
SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)  # Linux's value where Python does not name it


def tai_ns() -> int:
    return time.clock_gettime_ns(time.CLOCK_TAI)


def first_send(now_ns: int, period_ns: int, offset_ns: int, lead_ns: int = 0) -> int:
    """The first ``t ≡ offset (mod period)`` at least ``lead_ns`` after ``now_ns``.

    >>> first_send(1_000_500, 1_000_000, 200)
    2000200
    """
    start = now_ns + lead_ns
    return start + (offset_ns - start) % period_ns


def wait_until(deadline_ns: int) -> None:
    left = deadline_ns - tai_ns()
    if left > SPIN_NS:
        time.sleep((left - SPIN_NS) / 1e9)
    while tai_ns() < deadline_ns:
        pass


def talk(dst: str, port: int, period_ns: int, offset_ns: int, count: int, size: int, priority: int,
         lead_ns: int = 50_000_000, spread: bool = False, seed: int = 1) -> dict[str, Any]:
    """Send ``count`` datagrams in the slot (``spread``: at a random point of each period instead, as a
    sender that knows no schedule); returns how late each left, at most and on average."""
    import random

    draw = random.Random(seed)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_PRIORITY, priority)
        padding = b"\0" * max(0, size - HEADER.size)
        start = first_send(tai_ns(), period_ns, offset_ns, lead_ns)
        late = []
        for seq in range(count):
            planned = start + seq * period_ns + (draw.randrange(period_ns) if spread else 0)
            wait_until(planned)
            sock.sendto(HEADER.pack(seq, planned) + padding, (dst, port))
            late.append(tai_ns() - planned)
    return {"sent": count, "late_max_ns": max(late, default=0), "late_mean_ns": sum(late) / max(1, len(late))}


def listen(port: int, count: int, timeout_s: float, csv: Path | None = None) -> dict[str, Any]:
    """Receive until ``count`` frames or ``timeout_s`` of silence; latency from planned send to kernel receipt."""
    tai_offset = tai_ns() - time.clock_gettime_ns(time.CLOCK_REALTIME)
    latencies: list[int] = []
    rows = []
    highest = -1
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        sock.bind(("", port))
        sock.settimeout(timeout_s)
        print("listening", flush=True)
        while len(latencies) < count:
            try:
                data, ancillary, _, _ = sock.recvmsg(65535, 256)
            except TimeoutError:
                break
            received = _kernel_time(ancillary) + tai_offset
            if len(data) < HEADER.size:
                continue
            seq, planned = HEADER.unpack_from(data)
            highest = max(highest, seq)
            latencies.append(received - planned)
            rows.append((seq, planned, received))
    if csv is not None:
        csv.write_text("seq,planned_ns,received_ns,latency_ns\n" + "".join(
            f"{seq},{planned},{received},{received - planned}\n" for seq, planned, received in rows))
    return summary(latencies, sent=max(count, highest + 1))


def _kernel_time(ancillary: list[tuple[int, int, bytes]]) -> int:
    for level, kind, data in ancillary:
        if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS:
            seconds, nanoseconds = struct.unpack("qq", data[:16])
            return seconds * 1_000_000_000 + nanoseconds
    return time.clock_gettime_ns(time.CLOCK_REALTIME)


def summary(latencies: list[int], sent: int) -> dict[str, Any]:
    """Frames, losses and latency statistics (ns; std is the population's)."""
    if not latencies:
        return {"frames": 0, "lost": sent}
    ordered = sorted(latencies)
    mean = sum(ordered) / len(ordered)
    std = math.sqrt(sum((x - mean) ** 2 for x in ordered) / len(ordered))
    pick = lambda q: ordered[min(len(ordered) - 1, int(q * len(ordered)))]  # noqa: E731
    return {"frames": len(ordered), "lost": max(0, sent - len(ordered)), "mean_ns": round(mean, 1),
            "std_ns": round(std, 1), "min_ns": ordered[0], "max_ns": ordered[-1], "p50_ns": pick(0.5),
            "p99_ns": pick(0.99)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m srfabric.tsn.endpoints")
    sub = parser.add_subparsers(dest="role", required=True)
    talker = sub.add_parser("talk")
    talker.add_argument("--dst", required=True)
    talker.add_argument("--port", type=int, required=True)
    talker.add_argument("--period-ns", type=int, default=1_000_000)
    talker.add_argument("--offset-ns", type=int, default=0)
    talker.add_argument("--count", type=int, default=1000)
    talker.add_argument("--size", type=int, default=100, help="UDP payload bytes")
    talker.add_argument("--priority", type=int, default=7, help="socket priority (SO_PRIORITY)")
    talker.add_argument("--spread", action="store_true", help="each frame at a random point of its period")
    listener = sub.add_parser("listen")
    listener.add_argument("--port", type=int, required=True)
    listener.add_argument("--count", type=int, default=1000)
    listener.add_argument("--timeout", type=float, default=5.0, help="seconds of silence that end it")
    listener.add_argument("--csv", type=Path, default=None)
    args = parser.parse_args(argv)
    if args.role == "talk":
        result = talk(args.dst, args.port, args.period_ns, args.offset_ns, args.count, args.size, args.priority,
                      spread=args.spread)
    else:
        result = listen(args.port, args.count, args.timeout, args.csv)
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
