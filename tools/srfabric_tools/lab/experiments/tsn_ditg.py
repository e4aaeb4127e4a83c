"""D-ITG on Fig. 7's live fabric, where the coupling paper used it (Fig. 10-12's priority-7 traffic).

A :class:`DitgFlow` is ITGRecv in the listener's namespace and ITGSend in the
talker's: one UDP flow of fixed-size frames to a stream's UDP port, so the
talker's edge puts it in the time-triggered class like our talker's frames.
Its inter-departure times are exponential: at our scaled-down rates (1,000
frames/s) a constant gap would equal the 1 ms gate cycle, and every frame would
meet the gate at one phase, chosen by when ITGSend happened to start. Delays
come from ITGRecv's log (send and receive times of day, one host clock).

Phases are bounded in TAI ns (``tai_now_ns``); D-ITG stamps realtime, so the
bounds are moved by the TAI-realtime offset read in the same run. A run that
crosses midnight UTC would split wrongly; none of ours is that long.
"""

from __future__ import annotations

import shutil
import statistics
import subprocess
import time
from typing import TYPE_CHECKING, Any

from srfabric.errors import ModelError
from srfabric.southbound.gates import tai_now_ns
from srfabric_tools.lab import ditg
from srfabric_tools.lab.stats import percentile

if TYPE_CHECKING:
    from srfabric_tools.lab.experiments.tsn_live import Fig7Fabric

SIGNAL_PORT = 9000  # ITGRecv's control channel (TCP)
WARMUP = 50  # packets left out: a flow's first frames take Open vSwitch's slow path
Packet = tuple[int, int, int]  # (sequence number, send time of day in ns, delay in ns)


def tai_offset_ns() -> int:
    """CLOCK_TAI minus CLOCK_REALTIME, now (0 where the kernel was never told the leap seconds)."""
    return tai_now_ns() - time.time_ns()


class DitgFlow:
    """One D-ITG flow from ``talker`` to ``listener`` on UDP ``port``: ``pps`` frames/s for ``seconds``."""

    def __init__(self, fabric: Fig7Fabric, talker: str, listener: str, port: int, pps: int, seconds: float,
                 size: int = 1400) -> None:
        self.fabric, self.talker, self.listener, self.port = fabric, talker, listener, port
        self.pps, self.seconds, self.size = pps, seconds, size
        self.folder = fabric.folder / f"ditg-{talker}-{port}"
        self.receiver: subprocess.Popen[bytes] | None = None
        self.sender: subprocess.Popen[bytes] | None = None

    def start(self) -> DitgFlow:
        """ITGRecv, once it listens ITGSend; returns at once (ITGSend runs for ``seconds``)."""
        testbed = self.fabric.lab.testbed
        assert testbed is not None
        self.folder.mkdir(parents=True, exist_ok=True)
        self.receiver = testbed.popen(self.listener, ditg.RECEIVER, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL)
        self.fabric.started.append(self.receiver)
        self._wait_listening()
        command = ditg.send_command(self.fabric.ip(self.listener), self.port, self.size, self.pps,
                                    max(1, int(self.seconds * 1000)), str(self.folder / "recv.log"),
                                    str(self.folder / "send.log"))
        self.sender = testbed.popen(self.talker, command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.fabric.started.append(self.sender)
        return self

    def _wait_listening(self, patience_s: float = 60.0) -> None:
        deadline = time.monotonic() + patience_s
        while time.monotonic() < deadline:
            shown = self.fabric.lab.cmd(self.listener, f"ss -Hltn 'sport = :{SIGNAL_PORT}'")
            if str(SIGNAL_PORT) in shown:
                return
            time.sleep(0.2)
        raise ModelError("d-itg", f"ITGRecv on {self.listener} did not listen on port {SIGNAL_PORT} within "
                                  f"{patience_s:.0f} s")

    def packets(self, timeout_s: float) -> list[Packet]:
        """Wait for ITGSend, stop ITGRecv, decode its log (then removed); every packet after the warm-up."""
        assert self.sender is not None and self.receiver is not None
        testbed = self.fabric.lab.testbed
        assert testbed is not None
        try:
            self.sender.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self.sender.kill()
            raise ModelError("d-itg", f"ITGSend on {self.talker} did not end within {timeout_s:.0f} s") from None
        testbed.stop_process(self.receiver)
        text = self.folder / "recv.txt"
        decoded = subprocess.run(ditg.decode_command(str(self.folder / "recv.log"), str(text)),
                                 capture_output=True, check=False)
        found = ditg.packets(text.read_text()) if decoded.returncode == 0 and text.exists() else []
        shutil.rmtree(self.folder, ignore_errors=True)  # ITGRecv's binary log is large
        kept = [packet for packet in found if packet[0] > WARMUP]
        if not kept:
            raise ModelError("d-itg", f"no packet after the first {WARMUP} reached {self.listener} on port "
                                      f"{self.port}")
        return kept


def summary(delays_ns: list[int]) -> dict[str, float]:
    """Mean and 99th percentile in µs, and the packet count."""
    values = delays_ns or [0]
    return {"mean_us": round(statistics.fmean(values) / 1000, 2),
            "p99_us": round(percentile(values, 0.99) / 1000, 2), "frames": float(len(delays_ns))}


def phase_summaries(packets: list[Packet], bounds_tai: list[tuple[int, int]], offset_ns: int) -> list[dict[str, float]]:
    """:func:`summary` of the packets sent within each ``[begin, end)`` (TAI ns; an end past 2**62: open)."""
    def of_day(tai: int) -> int:
        return (tai - offset_ns) % ditg.DAY_NS if tai < 2**62 else 2 * ditg.DAY_NS

    windows = [(of_day(begin), of_day(end)) for begin, end in bounds_tai]
    return [summary([delay for _, sent, delay in packets if begin <= sent < end]) for begin, end in windows]


def series(packets: list[Packet], start_tai: int, offset_ns: int, bucket_s: float) -> list[tuple[float, float, int]]:
    """(bucket start in s from ``start_tai``, mean delay in µs, packets), as ``tsn_live.latency_series``."""
    start = (start_tai - offset_ns) % ditg.DAY_NS
    buckets: dict[int, list[int]] = {}
    for _, sent, delay in packets:
        buckets.setdefault(int((sent - start) / (bucket_s * 1e9)), []).append(delay)
    return [(round(i * bucket_s, 3), round(statistics.fmean(v) / 1000, 2), len(v))
            for i, v in sorted(buckets.items()) if i >= 0]


def record_phases(ctx: Any, packets: list[Packet], bounds_tai: list[tuple[int, int]], start_tai: int,
                  third: float, offset_ns: int) -> dict[str, float]:
    """The D-ITG probe's phase statistics as metrics (``phase1_ditg_mean_us`` ...), its series kept in
    ``ctx.extra["ditg_series"]`` for the plot."""
    ctx.extra.setdefault("ditg_series", []).append(series(packets, start_tai, offset_ns, max(0.25, third / 10)))
    return {f"phase{index}_ditg_{metric}": value
            for index, phase in enumerate(phase_summaries(packets, bounds_tai, offset_ns), start=1)
            for metric, value in phase.items()}
