"""The bridges' watch of ``srfabric serve --gates netconf``: until every bridge has answered, its capabilities are
asked for (the scheduler honours them: a list a bridge cannot run is refused, 409, before anything is sent); and
every few seconds a bridge that lost a change (it rolled back, or restarted without it) gets its lists again.
NETCONF runs in a thread so the API never waits on it."""

from __future__ import annotations

import asyncio
import logging

from srfabric.api.service import SfcService
from srfabric.errors import SrfabricError
from srfabric.southbound.netconf.gates import NetconfGates

log = logging.getLogger(__name__)
PERIOD_S = 5.0


async def watch_bridges(service: SfcService, gates: NetconfGates, period_s: float = PERIOD_S) -> None:
    """Forever (cancel to stop)."""
    known = service.streams.planning.capabilities
    while True:
        if set(gates.sessions) - set(known):
            try:
                found = await asyncio.to_thread(gates.capabilities)
                for name in sorted(set(found) - set(known)):
                    log.info("bridge %s: %s", name, found[name])
                known.update(found)
            except SrfabricError as error:
                log.warning("bridges: capabilities not read: %s", error)
        if service.leader_elsewhere() is None and gates.sent:  # only the leader sends gates
            try:
                async with service.lock:  # no stream change, and no bridge added or forgotten, meanwhile
                    again = await asyncio.to_thread(gates.resend)
                if again:
                    log.warning("bridges %s lost their schedule; it was sent again", ", ".join(again))
            except SrfabricError as error:
                log.warning("bridges: a schedule could not be sent again: %s", error)
        await asyncio.sleep(period_s)
