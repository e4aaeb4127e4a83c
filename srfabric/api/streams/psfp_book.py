"""Per-stream filtering and policing (802.1Qci) as the API serves it: each edge's filters, gates and meters as the
bridge's YANG document (``ieee802-dot1q-psfp-bridge`` and ``ieee802-dot1cb-stream-identification``, what a NETCONF
bridge takes and what ``srfabric psfp follow`` enforces on an XDP edge), with the counters the edge last reported
as the stream filters' state leaves. The plans are the core's (:mod:`srfabric.controller.stream_protection`); the
counters are kept in memory, the newest report of each edge.

>>> book = PsfpBook(clock=lambda: 1000.0)
>>> book.keep(PsfpReport.model_validate({"bridge": "s1", "streams": [
...     {"handle": 12, "counters": {"matching-frames-count": 10, "red-frames-count": 7}}]}))
>>> book.counters("s1")[12]["red-frames-count"], book.counters("s1")[12]["passing-frames-count"]
(7, 0)
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal

from pydantic import Field

from srfabric.api.resources.schemas import Strict
from srfabric.api.streams.newest import NewestReports
from srfabric.rules.yang.psfp_document import PSFP, edge_address, psfp_document
from srfabric.tsn.gates.capabilities import PortCapabilities
from srfabric.tsn.protect.policing import COUNTERS
from srfabric.tsn.protect.psfp import DEFAULT_BURST_FRAMES, StreamProtection

MAX_STREAMS = 4096  # an edge's table holds no more
Counter64 = Annotated[int, Field(ge=0, le=2**64 - 1)]
CounterName = Literal["matching-frames-count", "passing-frames-count", "not-passing-frames-count",
                      "red-frames-count", "passing-sdu-count", "not-passing-sdu-count"]
# the XDP edge: 16 open windows per cycle, and a cycle and an interval of up to a second
EDGE_CAPABILITIES = PortCapabilities(list_max=16 * 2 + 1, cycle_max=(1, 1), interval_max_ns=1_000_000_000)


class PolicedStream(Strict):
    """One stream an edge polices: its handle and its counters by ``ieee802-dot1q-psfp`` leaf name."""

    handle: int = Field(ge=0, le=2**32 - 1)
    counters: dict[CounterName, Counter64]


class PsfpReport(Strict):
    """What one edge reports: its bridge name and each stream's counters."""

    bridge: str = Field(pattern=r"^[A-Za-z0-9_.:@-]{1,64}$")
    streams: list[PolicedStream] = Field(max_length=MAX_STREAMS)


class PsfpBook(NewestReports[PsfpReport]):
    """The newest report of each edge, with when it came (``clock``: seconds), and how much wider than its slot
    each stream's ingress gate opens (``tolerance_ns``, each side), and whether the edges' OpenFlow meters police
    the streams (``meters``: the controller reports their counters here itself)."""

    tolerance_ns = 0
    meters = False

    def meter(self, period_ns: int, time_triggered: bool) -> tuple[int, int] | None:
        """A stream's reservation as its edge's OpenFlow meter (frames a second, rounded up, and the bucket in
        frames) when the edges police by meters and the stream is time-triggered; else None.

        >>> book = PsfpBook(lambda: 0.0)
        >>> book.meter(3_000_000, True), setattr(book, "meters", True), book.meter(3_000_000, True)
        (None, None, (334, 2))
        """
        if not self.meters or not time_triggered:
            return None
        return math.ceil(1_000_000_000 / period_ns), DEFAULT_BURST_FRAMES

    def keep(self, report: PsfpReport) -> None:
        self.put(report.bridge, report)

    def counters(self, bridge: str) -> dict[int, dict[str, int]]:
        """The bridge's streams' newest counters by handle, every leaf present."""
        kept = self.reports.get(bridge)
        if kept is None:
            return {}
        return {seen.handle: {leaf: 0 for leaf in COUNTERS} | {str(k): v for k, v in seen.counters.items()}
                for seen in kept[1].streams}

    def document(self, bridge: str, plans: list[StreamProtection], ports: dict[str, str]) -> dict[str, Any]:
        """The bridge's document, each stream filter with its newest counters (none before the first report)."""
        document = psfp_document(bridge, edge_address(bridge), plans, ports, EDGE_CAPABILITIES)
        counts = self.counters(bridge)
        component = document["ieee802-dot1q-bridge:bridges"]["bridge"][0]["component"][0]
        for item in component[f"{PSFP}:stream-filters"]["stream-filter-instance-table"]:
            item.update(counts.get(item["stream-handle"], {}))
        return document

    def reported_at(self, bridge: str) -> float | None:
        kept = self.reports.get(bridge)
        return None if kept is None else kept[0]
