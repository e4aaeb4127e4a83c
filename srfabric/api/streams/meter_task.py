"""The OpenFlow meters of ``srfabric serve --psfp-meters``, read back: every second each connected switch's meter
counters become its PSFP report, under the stream filters' leaf names, as ``srfabric psfp follow`` reports an XDP
edge's (a meter's id is its stream's handle). A meter checks neither size nor window, so every frame that reaches
it passes the filter's SDU check and gate; what its drop band drops is red.

>>> seen = police_counters(MeterCount(12, frames_in=100, dropped=70))
>>> seen["matching-frames-count"], seen["passing-frames-count"], seen["red-frames-count"]
(100, 100, 70)
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any

from srfabric.api.service import SfcService
from srfabric.api.streams.psfp_book import MAX_STREAMS, PolicedStream, PsfpReport
from srfabric.errors import SrfabricError

log = logging.getLogger(__name__)
PERIOD_S = 1.0


@dataclass(frozen=True)
class MeterCount:
    """One meter's counters as the switch reports them (``OFPMeterStats``)."""

    meter_id: int
    frames_in: int
    dropped: int  # by its drop band

    @classmethod
    def of(cls, stats: Any) -> MeterCount:
        return cls(stats.meter_id, stats.packet_in_count, sum(band.packet_band_count for band in stats.band_stats))


def police_counters(count: MeterCount) -> dict[str, int]:
    """A meter's counters as the stream filter's (``ieee802-dot1q-psfp``)."""
    return {"matching-frames-count": count.frames_in, "passing-sdu-count": count.frames_in,
            "not-passing-sdu-count": 0, "passing-frames-count": count.frames_in, "not-passing-frames-count": 0,
            "red-frames-count": min(count.dropped, count.frames_in)}


def meter_report(bridge: str, counts: list[MeterCount]) -> PsfpReport:
    """A switch's meters as its PSFP report (the first ``MAX_STREAMS``, by id)."""
    streams = [PolicedStream.model_validate({"handle": count.meter_id, "counters": police_counters(count)})
               for count in sorted(counts, key=lambda c: c.meter_id)[:MAX_STREAMS]]
    return PsfpReport(bridge=bridge, streams=streams)


async def report_meters(service: SfcService) -> None:
    """One round: each connected switch that holds meters (as the controller last synced it) reports them."""
    controller = service.controller
    held = controller.core.reconciler.installed_meters
    for dpid, conn in list(controller.switches.items()):
        switch = controller.fabric.switches.get(dpid)
        if switch is None or not held.get(dpid) or dpid not in controller.core.taken:
            continue
        try:  # one switch's failure is its own: the others still report
            stats = await conn.meter_stats()
            if stats:
                service.streams.psfp.keep(meter_report(switch.name, [MeterCount.of(s) for s in stats]))
        except (SrfabricError, ValueError, AttributeError) as error:
            log.info("switch %s: meter counters not read (%s)", switch.name, error)


async def watch_meters(service: SfcService, period_s: float = PERIOD_S) -> None:
    """Poll forever (cancel to stop); only the leader keeps reports (a follower sends nothing to switches)."""
    while True:
        if service.leader_elsewhere() is None:
            try:
                await report_meters(service)
            except (SrfabricError, OSError, ValueError) as error:  # a failed round must not end the watch
                log.warning("psfp meters: reading the counters failed: %s", error)
        await asyncio.sleep(period_s)
