"""What an ingress edge does with each frame of a protected stream, as IEEE 802.1Q 8.6.5 orders it: the stream
filter's maximum SDU size, then the stream gate, then the flow meter; each frame counted under the names of
``ieee802-dot1q-psfp``'s stream filter counters. The data planes (XDP edge, Linux ``tc``, a NETCONF bridge) are
held to this model in the tests.

Examples
--------
>>> from srfabric.tsn.protect.psfp import FlowMeter, GateInterval, Identity, StreamGate, StreamProtection
>>> gate = StreamGate(1_000_000, 0, (GateInterval(True, 100_000), GateInterval(False, 900_000)))
>>> plan = StreamProtection(1, "cam", "s1", "h1", Identity("10.0.0.1", "10.0.0.3"), 7, 200, gate,
...                         FlowMeter(cir_bps=1_776_000, cbs_bytes=444))
>>> edge = StreamPolicer(plan)
>>> [edge.offer(t, size) for t, size in ((0, 200), (10_000, 200), (20_000, 200), (30_000, 900), (500_000, 200))]
[None, None, 'red', 'oversize', 'gate closed']
>>> edge.counters["matching-frames-count"], edge.counters["red-frames-count"]
(5, 1)
"""

from __future__ import annotations

from srfabric.tsn.protect.psfp import METERED_OVERHEAD_BYTES, StreamProtection

# ieee802-dot1q-psfp's counters of a stream filter instance (802.1Q 12.31.3), in the order of the module
COUNTERS = ("matching-frames-count", "passing-frames-count", "not-passing-frames-count", "red-frames-count",
            "passing-sdu-count", "not-passing-sdu-count")
OVERSIZE, GATE_CLOSED, RED = "oversize", "gate closed", "red"


class StreamPolicer:
    """One stream's filter, gate and meter with their state; ``offer`` judges one frame."""

    def __init__(self, plan: StreamProtection) -> None:
        self.plan = plan
        self.counters = dict.fromkeys(COUNTERS, 0)
        self.tokens_bits = plan.meter.cbs_bytes * 8 * 1_000_000_000  # bits x 1e9: whole numbers at any rate
        self.last_ns: int | None = None

    def offer(self, time_ns: int, sdu_bytes: int) -> str | None:
        """The frame's fate at TAI ``time_ns``: None when it passes, else why it is dropped."""
        counts = self.counters
        counts["matching-frames-count"] += 1
        if sdu_bytes > self.plan.max_sdu_bytes:
            counts["not-passing-sdu-count"] += 1
            return OVERSIZE
        counts["passing-sdu-count"] += 1
        if not self.plan.gate.is_open(time_ns):
            counts["not-passing-frames-count"] += 1
            return GATE_CLOSED
        counts["passing-frames-count"] += 1
        return RED if not self._conforms(time_ns, sdu_bytes) else None

    def _conforms(self, time_ns: int, sdu_bytes: int) -> bool:
        meter, scale = self.plan.meter, 8 * 1_000_000_000
        if self.last_ns is not None:
            earned = max(0, time_ns - self.last_ns) * meter.cir_bps
            self.tokens_bits = min(meter.cbs_bytes * scale, self.tokens_bits + earned)
        self.last_ns = time_ns
        cost = (sdu_bytes + METERED_OVERHEAD_BYTES) * scale
        if self.tokens_bits < cost:
            self.counters["red-frames-count"] += 1
            return False
        self.tokens_bits -= cost
        return True
