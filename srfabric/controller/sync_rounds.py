"""When the controller syncs on its own: after what it learned (a link, a host, a port) changed the fabric.

A burst of discoveries settles into one sync (``SETTLE_S``; a link or function going down cuts the settling
short). Before the first one, discovery settles longer: the fabric must have stood still for ``start_still_s``
(the LLDP interval), at most ``START_ROUNDS`` times that in all. A start's links and hosts come in over a few LLDP
rounds, and every link added makes the default routes worth working out again: compiled once they stand, a
large fabric's first tables are made once, not once per round.

Examples
--------
>>> import asyncio
>>> versions = iter([1, 2, 3, 3])
>>> asyncio.run(quiet(lambda: next(versions), 0.001, 1.0))  # changed twice, then stood still
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable

from srfabric.errors import SrfabricError

log = logging.getLogger("srfabric.controller.controller")

SETTLE_S = 0.05  # a burst of discoveries: one sync
START_ROUNDS = 4  # the first sync waits for a still fabric at most this many LLDP intervals


async def sync_rounds(dirty: asyncio.Event, urgent: asyncio.Event, sync: Callable[[], Awaitable[None]],
                      idle: Callable[[], bool], version: Callable[[], int], start_still_s: float) -> None:
    """Sync whenever ``dirty`` is set (``idle()``: a follower MASTER of no switch, which clears it); ``version``
    gives the fabric's version, watched before the first sync."""
    started = False
    while True:
        await dirty.wait()
        if idle():
            dirty.clear()
            continue
        if not started:
            await quiet(version, start_still_s, START_ROUNDS * start_still_s)
            started = True
        with contextlib.suppress(TimeoutError):  # let a burst of discoveries settle into one sync
            await asyncio.wait_for(urgent.wait(), SETTLE_S)
        urgent.clear()
        if not dirty.is_set():
            continue  # a sync meanwhile (an API change) covered it
        try:
            await sync()
        except SrfabricError as error:
            log.warning("sync failed: %s", error)


async def quiet(version: Callable[[], int], still_s: float, at_most_s: float) -> None:
    """Until ``version()`` has not changed for ``still_s``, or ``at_most_s`` have passed."""
    loop = asyncio.get_running_loop()
    give_up = loop.time() + at_most_s
    while (left := give_up - loop.time()) > 0:
        seen = version()
        await asyncio.sleep(min(still_s, left))
        if version() == seen:
            return
