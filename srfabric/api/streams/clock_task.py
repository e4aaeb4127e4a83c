"""The gPTP watch of ``srfabric serve --gptp BRIDGE=SOCKET``: every second each bridge's ptp4l is asked
(``tsn.clock_watch``, pmc in a thread so the API never waits on it); a bridge back within the bound gets its gate
schedule again (one reschedule at a fresh common base time), since its gates ran on a clock that was off."""

from __future__ import annotations

import asyncio
import logging

from srfabric.api.errors import ApiError
from srfabric.api.service import SfcService
from srfabric.errors import SrfabricError
from srfabric.tsn.runtime.clock_watch import ClockWatch

log = logging.getLogger(__name__)
PERIOD_S = 1.0


def parse_sockets(items: list[str]) -> dict[str, str]:
    """``BRIDGE=SOCKET`` items (``--gptp``); ``SrfabricError`` naming a bad one."""
    sockets = {}
    for item in items:
        bridge, _, path = item.partition("=")
        if not bridge or not path.startswith("/"):
            raise SrfabricError("--gptp", f"expected BRIDGE=/path/of/its/ptp4l/socket, got {item!r}")
        sockets[bridge] = path
    return sockets


async def watch_clocks(service: SfcService, watch: ClockWatch, period_s: float = PERIOD_S) -> None:
    """Poll forever (cancel to stop)."""
    was_out: set[str] = set()
    while True:
        try:
            back = await asyncio.to_thread(watch.poll)
        except Exception:  # noqa: BLE001 - a failed round must not end the watch (or leave it "synced")
            log.exception("gptp: reading the bridges failed; none counts as synchronised until it is read again")
            watch.states.clear()
            back = []
        now_out = {bridge for bridge, state in watch.states.items() if not state.synced}
        for bridge in sorted(now_out - was_out):
            log.warning("gptp: bridge %s is not synchronised: %s", bridge, watch.states[bridge].reason)
        was_out = now_out
        # Only the leader sends gates (a follower's change would not be fenced).
        if back and service.snapshot["streams"] and service.leader_elsewhere() is None:
            try:
                await service.reschedule(service.snapshot.duty_percent)
                log.warning("gptp: %s back within %d ns; gates sent again", ", ".join(back), watch.bound_ns)
            except (ApiError, SrfabricError) as error:
                log.warning("gptp: %s back, but the gates could not be sent again: %s", ", ".join(back), error)
        await asyncio.sleep(period_s)
