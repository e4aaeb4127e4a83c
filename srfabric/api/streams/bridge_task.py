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
    """Forever (cancel to stop); a failed pass is logged and the next one runs."""
    while True:
        try:
            await _capabilities(service, gates)
            if service.leader_elsewhere() is None and gates.sent:  # only the leader sends gates
                await _resend(service, gates)
        except Exception:  # noqa: BLE001 - the watch must outlive any one bridge's fault
            log.exception("bridges: a pass of the watch failed; the next one runs in %g s", period_s)
        await asyncio.sleep(period_s)


async def _capabilities(service: SfcService, gates: NetconfGates) -> None:
    """Ask the bridges not yet read (in a thread, no lock held); keep what each answered only if the API did
    not move or forget that bridge meanwhile."""
    known = service.streams.planning.capabilities
    asked = {name: session for name, session in gates.sessions.items() if name not in known}
    if not asked:
        return
    try:
        found = await asyncio.to_thread(gates.capabilities, asked)
    except SrfabricError as error:
        log.warning("bridges: capabilities not read: %s", error)
        return
    async with service.lock:
        for name in sorted(found):
            if gates.sessions.get(name) is asked[name]:
                log.info("bridge %s: %s", name, found[name])
                known[name] = found[name]


async def _resend(service: SfcService, gates: NetconfGates) -> None:
    """Read every bridge's lists at once (no lock held), then send the lost ones again under the service's lock,
    so that no stream change and no bridge added or forgotten runs meanwhile."""
    await asyncio.to_thread(gates.find_lost)
    if not gates.stale:
        return
    try:
        async with service.lock:
            again = await asyncio.to_thread(gates.resend, False)
        if again:
            log.warning("bridges %s lost their schedule; it was sent again", ", ".join(again))
    except SrfabricError as error:
        log.warning("bridges: a schedule could not be sent again: %s", error)
