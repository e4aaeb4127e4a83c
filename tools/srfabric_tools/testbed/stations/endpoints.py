"""TSSDN's end systems: a talker that sends in its slot every period, a listener that timestamps arrivals.

``python -m srfabric_tools.testbed.stations.endpoints talk --dst IP --port P --period-ns N --offset-ns O --count C``
sends frame ``i`` at the first ``t ≡ O (mod N)`` on CLOCK_TAI after it starts,
then every period (a timed send: sleep, then spin the last stretch);
each datagram carries its sequence number and the time it was meant to leave
(``--stamp sent``: the time it did leave, read just before the send, which
then only sleeps; for senders that know no schedule, where being late is no error;
``--txtime-ns L``: handed to the kernel L ahead with SO_TXTIME, the planned time as
its launch time, which an etf qdisc on the talker's interface keeps: no lateness).
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

HEADER = struct.Struct("!IQQ")  # sequence number, planned and actual send time (CLOCK_TAI ns)
SPIN_NS = 200_000  # the last stretch before a send is spun, not slept: sleep wakes up late
SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)  # Linux's values where Python does not name them
SO_TXTIME = getattr(socket, "SO_TXTIME", 61)


def tai_ns() -> int:
    return time.clock_gettime_ns(time.CLOCK_TAI)


def first_send(now_ns: int, period_ns: int, offset_ns: int, lead_ns: int = 0) -> int:
    """The first ``t ≡ offset (mod period)`` at least ``lead_ns`` after ``now_ns``.

    >>> first_send(1_000_500, 1_000_000, 200)
    2000200
    """
    start = now_ns + lead_ns
    return start + (offset_ns - start) % period_ns


def wait_until(deadline_ns: int, spin: bool = True) -> None:
    left = deadline_ns - tai_ns()
    if left > (SPIN_NS if spin else 0):
        time.sleep((left - (SPIN_NS if spin else 0)) / 1e9)
    while spin and tai_ns() < deadline_ns:
        pass


def talk(dst: str, streams: list[tuple[int, int]], period_ns: int, count: int, size: int, priority: int,
         lead_ns: int = 50_000_000, spread: bool = False, seed: int = 1, stamp_sent: bool = False,
         txtime_ns: int = 0, etf_delta_ns: int = 0, rtag: tuple[str, int, str, int] | None = None,
         late_limit_ns: int | None = None) -> dict[str, Any]:
    """Send ``count`` datagrams of each (UDP port, slot offset) stream, every period, from one process
    (``spread``: at a random point of each period instead, as a sender that knows no schedule;
    ``stamp_sent``: each datagram carries when it left, and no CPU is spent spinning for the planned time;
    ``txtime_ns``: each datagram is handed to the kernel that long ahead with its planned time as its
    SO_TXTIME launch time, plus ``etf_delta_ns`` as etf releases a frame that much before its launch time;
    one handed over too late counts in ``too_late``; ``rtag``: (interface, destination MAC, source address, source
    port): each datagram R-tagged, numbered, on a raw socket, as a redundant stream's talker sends it);
    ``late_limit_ns``: a datagram whose time passed more than that ago is skipped, not sent late, so the talker
    never sends faster than its reservation nor outside its window (their numbers in ``skipped``); returns how late
    the sends left, at most and on average."""
    import random

    draw = random.Random(seed)
    padding = b"\0" * max(0, size - HEADER.size)
    from srfabric_tools.testbed.stations.rtag_sender import RtagSender

    if rtag and txtime_ns:
        raise ValueError("rtag: R-tagged frames are sent on a raw socket, which takes no SO_TXTIME")
    opened: Any = RtagSender(*rtag) if rtag else socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    with opened as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_PRIORITY, priority)
        if txtime_ns:
            sock.setsockopt(socket.SOL_SOCKET, SO_TXTIME, struct.pack("iI", time.CLOCK_TAI, 0))
        start = first_send(tai_ns(), period_ns, 0, lead_ns)
        late, too_late, skipped = [], 0, []
        for seq in range(count):
            sends = sorted((start + seq * period_ns + (draw.randrange(period_ns) if spread else offset), port)
                           for port, offset in streams)
            for planned, port in sends:
                if late_limit_ns is not None and tai_ns() - planned > late_limit_ns:
                    skipped.append(seq)
                    continue
                if txtime_ns:
                    wait_until(planned - txtime_ns, spin=False)
                    handed = tai_ns()
                    too_late += handed >= planned
                    launch = [(socket.SOL_SOCKET, SO_TXTIME, struct.pack("Q", planned + etf_delta_ns))]
                    sock.sendmsg([HEADER.pack(seq, planned, handed) + padding], launch, 0, (dst, port))
                    late.append(max(0, handed - planned))
                    continue
                wait_until(planned, spin=not stamp_sent)
                sent = tai_ns()
                if late_limit_ns is not None and sent - planned > late_limit_ns:  # woke too late for it
                    skipped.append(seq)
                    continue
                sock.sendto(HEADER.pack(seq, sent if stamp_sent else planned, sent) + padding, (dst, port))
                late.append(sent - planned)
    return {"sent": count * len(streams) - len(skipped), "late_max_ns": max(late, default=0),
            "late_mean_ns": sum(late) / max(1, len(late)), "too_late": too_late, "skipped": skipped}


def listen(ports: list[int], count: int, timeout_s: float, csv: Path | None = None, skip: int = 0,
           late_after_ns: list[int] | None = None, first_timeout_s: float = 60.0) -> dict[str, Any]:
    """Receive until ``count`` frames per port or ``timeout_s`` of silence once frames came (up to
    ``first_timeout_s`` for the first: talkers may start well after their listener); latency from planned send to
    kernel receipt, leaving out frames numbered below ``skip`` (the warm-up: a flow's first frames go
    through Open vSwitch's slow path) and, with ``late_after_ns`` (one for every port, or one per port),
    frames the talker sent more than that after their planned time, when their window had closed (its own
    failure, not the network's: counted as ``late_sends``). One port: its summary; several:
    ``{"streams": {port: summary}}``."""
    import selectors

    # CLOCK_TAI runs a whole number of seconds from CLOCK_REALTIME (the kernel's TAI offset): rounded, the two
    # reads apart cannot shift every arrival by however long the process waited between them.
    tai_offset = round((tai_ns() - time.clock_gettime_ns(time.CLOCK_REALTIME)) / 1e9) * 1_000_000_000
    limits = dict(zip(ports, late_after_ns * len(ports) if late_after_ns and len(late_after_ns) == 1
                      else late_after_ns or [], strict=False))
    latencies: dict[int, list[int]] = {port: [] for port in ports}
    late_sends = dict.fromkeys(ports, 0)
    rows: list[tuple[int, int, int, int, int]] = []
    highest = dict.fromkeys(ports, -1)
    selector = selectors.DefaultSelector()
    sockets = []
    for port in ports:
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        sock.bind(("", port))
        selector.register(sock, selectors.EVENT_READ, port)
        sockets.append(sock)
    print("listening", flush=True)
    try:
        while any(len(got) + late_sends[port] < count for port, got in latencies.items()):
            ready = selector.select(timeout_s if rows else first_timeout_s)
            if not ready:
                break
            for key, _ in ready:
                data, ancillary, _, _ = key.fileobj.recvmsg(65535, 256)  # type: ignore[union-attr]
                received = _kernel_time(ancillary) + tai_offset
                if len(data) < HEADER.size:
                    continue
                seq, planned, sent = HEADER.unpack_from(data)
                if seq < skip:
                    continue
                seq -= skip
                highest[key.data] = max(highest[key.data], seq)
                rows.append((key.data, seq, planned, sent, received))
                if key.data in limits and sent - planned > limits[key.data]:
                    late_sends[key.data] += 1
                    continue
                latencies[key.data].append(received - planned)
    finally:
        for sock in sockets:
            sock.close()
    if csv is not None:
        csv.write_text("port,seq,planned_ns,sent_ns,received_ns,latency_ns\n" + "".join(
            f"{port},{seq},{planned},{sent},{received},{received - planned}\n"
            for port, seq, planned, sent, received in rows))
    results = {port: summary(got, sent=max(count, highest[port] + 1) - late_sends[port])
               | {"late_sends": late_sends[port]} for port, got in latencies.items()}
    return results[ports[0]] if len(ports) == 1 else {"streams": results}


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
    parser = argparse.ArgumentParser(prog="python -m srfabric_tools.testbed.stations.endpoints")
    sub = parser.add_subparsers(dest="role", required=True)
    talker = sub.add_parser("talk")
    talker.add_argument("--dst", required=True)
    talker.add_argument("--port", type=int, action="append", required=True,
                        help="a stream's UDP port (repeatable: several streams from one process)")
    talker.add_argument("--offset-ns", type=int, action="append", default=None,
                        help="each stream's send offset within the period (one per --port; default 0)")
    talker.add_argument("--period-ns", type=int, default=1_000_000)
    talker.add_argument("--count", type=int, default=1000, help="frames per stream")
    talker.add_argument("--size", type=int, default=100, help="UDP payload bytes")
    talker.add_argument("--priority", type=int, default=7, help="socket priority (SO_PRIORITY)")
    talker.add_argument("--spread", action="store_true", help="each frame at a random point of its period")
    talker.add_argument("--stamp", choices=("planned", "sent"), default="planned",
                        help="latency counts from the planned send time, or from the actual one (no spinning)")
    talker.add_argument("--seed", type=int, default=1, help="of --spread's random points")
    talker.add_argument("--late-limit-ns", type=int, default=None,
                        help="skip a frame whose time passed more than this ago rather than send it late")
    talker.add_argument("--txtime-ns", type=int, default=0,
                        help="hand each frame to the kernel this long ahead with SO_TXTIME (needs the etf qdisc)")
    talker.add_argument("--etf-delta-ns", type=int, default=0,
                        help="the etf qdisc's delta: launch times are set this much after the planned time")
    talker.add_argument("--rtag", nargs=4, metavar=("IFACE", "DST_MAC", "SRC_IP", "SPORT"), default=None,
                        help="send R-tagged frames (IEEE 802.1CB) on IFACE's raw socket: a redundant stream's talker")
    listener = sub.add_parser("listen")
    listener.add_argument("--port", type=int, action="append", required=True, help="repeatable")
    listener.add_argument("--count", type=int, default=1000, help="frames per port")
    listener.add_argument("--timeout", type=float, default=5.0, help="seconds of silence that end it")
    listener.add_argument("--first-timeout", type=float, default=60.0,
                          help="seconds to wait for the first frame")
    listener.add_argument("--csv", type=Path, default=None)
    listener.add_argument("--skip", type=int, default=0, help="frames numbered below this are the warm-up")
    listener.add_argument("--late-after-ns", type=int, action="append", default=None,
                          help="frames sent this much after their planned time are counted apart, not timed "
                               "(once for every port, or once per --port)")
    args = parser.parse_args(argv)
    if args.role == "talk":
        offsets = args.offset_ns or [0] * len(args.port)
        if len(offsets) != len(args.port):
            parser.error("give one --offset-ns per --port")
        result = talk(args.dst, list(zip(args.port, offsets, strict=True)), args.period_ns, args.count, args.size,
                      args.priority, spread=args.spread, seed=args.seed, stamp_sent=args.stamp == "sent",
                      txtime_ns=args.txtime_ns, etf_delta_ns=args.etf_delta_ns,
                      rtag=(args.rtag[0], int(args.rtag[1].replace(":", ""), 16), args.rtag[2], int(args.rtag[3]))
                      if args.rtag else None, late_limit_ns=args.late_limit_ns)
    else:
        if args.late_after_ns and len(args.late_after_ns) not in (1, len(args.port)):
            parser.error("give one --late-after-ns, or one per --port")
        result = listen(args.port, args.count, args.timeout, args.csv, args.skip, args.late_after_ns,
                        args.first_timeout)
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
