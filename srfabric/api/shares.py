"""Instances sharing one fabric (scale-out). Each ``srfabric serve`` on the same PostgreSQL database may claim
edge switches (``--edges s1,s2``) and is their OpenFlow MASTER while it lives; the leader (``leadership``) is
MASTER of every switch no live instance claims: the transit switches' fixed tables and the unclaimed edges.
One leader and one standby is the case where no instance claims anything.

The claims live in the database the instances already share: a row per claiming instance, and a session-level
advisory lock it holds, which the server frees at once when the process dies. Every instance reads the live
claims every ``interval_s`` and moves its switches to match (``SwitchChannels.claims``): the edges of an
instance that died are taken by the leader within about one interval. Nothing is asked of anyone when a flow
starts: an edge's MASTER sets its flows up alone.

Writes still go to the leader. A claiming instance that does not lead follows the database: every write
transaction sends ``NOTIFY srfabric_state``, and such an instance loads the state again and syncs its edges.
Every instance signs LLDP with one key kept in the database, so each reads the frames the others send.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from srfabric.api.db_rounds import closed, in_rounds, keepalive_connection
from srfabric.errors import SrfabricError

log = logging.getLogger(__name__)

CHANNEL = "srfabric_state"  # what every write transaction notifies
INTERVAL_S = 0.2  # how often the claims are read: about the most a take-over of a dead instance's edges waits
LIVENESS_S = 2.0  # an instance whose database does not answer within this long gives its edges up
LIVE_CLAIMS = """
SELECT s.instance, s.edges FROM shares s JOIN pg_locks l ON l.locktype = 'advisory' AND l.granted
  AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
  AND l.objsubid = 1 AND l.classid::bigint = (s.lock_key >> 32) AND l.objid::bigint = (s.lock_key & 4294967295)
WHERE s.instance <> %s"""


class ClaimLost(SrfabricError):
    """This instance can no longer show that it is alive: another may take its edges at any moment."""


class ClaimRefused(SrfabricError):
    """The edges asked for are claimed by a live instance already (or this instance runs twice)."""


def lock_key(instance: str) -> int:
    """The advisory lock an instance (named by its API URL) holds while alive: a positive 62-bit number.

    >>> lock_key("http://10.0.0.2:9696") == lock_key("http://10.0.0.2:9696") != lock_key("http://10.0.0.3:9696")
    True
    """
    return int.from_bytes(hashlib.blake2b(instance.encode(), digest_size=8).digest(), "big") >> 2


def parse_edges(text: str) -> frozenset[str]:
    """``--edges``: switch names, comma-separated.

    >>> sorted(parse_edges("s1, s2"))
    ['s1', 's2']
    """
    names = frozenset(name.strip() for name in text.split(",") if name.strip())
    if not names:
        raise SrfabricError("--edges", f"names no switch: {text!r} (give names such as s1,s2)")
    return names


def claimed(rows: list[tuple[str, str]]) -> dict[str, frozenset[str]]:
    """Each live instance's edges, from the rows of ``LIVE_CLAIMS``."""
    return {instance: frozenset(filter(None, edges.split(","))) for instance, edges in rows}


class Shares:
    """This instance's part: its claim (``edges``, none for an instance that only leads or stands by) and the
    edges the other live instances claim (``elsewhere``)."""

    def __init__(self, dsn: str, instance: str, edges: frozenset[str] = frozenset(), interval_s: float = INTERVAL_S,
                 connect: Callable[[], Awaitable[Any]] | None = None) -> None:
        self.dsn, self.instance, self.edges, self.interval_s = dsn, instance, edges, interval_s
        self.elsewhere: frozenset[str] = frozenset()
        self.changed = asyncio.Event()  # set by a notification: the kept state changed
        self.holding = False  # this instance's claim is in place
        self._connect = connect or (lambda: keepalive_connection(dsn))

    async def shared_lldp_key(self, mine: bytes) -> bytes:
        """The LLDP signing key every instance uses: the first instance's, kept in the database."""
        conn = await self._connect()
        try:
            row = await (await conn.execute("UPDATE leader SET lldp_key = COALESCE(lldp_key, %s) WHERE id = 1 "
                                            "RETURNING lldp_key", (mine,))).fetchone()
        finally:
            await closed(conn)
        return bytes(row[0]) if row is not None else mine

    async def run(self, on_claims: Callable[[frozenset[str]], Awaitable[None]], on_state: Callable[[], Awaitable[None]],
                  first_round: asyncio.Event | None = None) -> None:
        """Claim ``edges``, then every ``interval_s`` read the others' live claims (``on_claims`` when they change)
        and, after a notification, call ``on_state``. Raises ``ClaimRefused`` when the edges are another live
        instance's, ``ClaimLost`` when a claim in place can no longer be shown alive."""
        async def one_round(conn: Any, fresh: bool) -> None:
            if fresh:
                await self._claim(conn)
            others = claimed(await asyncio.wait_for(self._live(conn), LIVENESS_S))
            elsewhere = frozenset().union(*others.values())
            if elsewhere != self.elsewhere:
                self.elsewhere = elsewhere
                await on_claims(elsewhere)
            if self.changed.is_set():
                self.changed.clear()
                await on_state()

        def fatal(error: Exception) -> BaseException | None:
            if isinstance(error, ClaimRefused):
                return error
            return ClaimLost("--edges", f"cannot go on holding {sorted(self.edges)}: {error}") if self.holding else None

        await in_rounds(self._connect, one_round, fatal, "instances' claims", self.interval_s, first_round)

    async def _live(self, conn: Any) -> list[tuple[str, str]]:
        return list(await (await conn.execute(LIVE_CLAIMS, (self.instance,))).fetchall())

    async def _claim(self, conn: Any) -> None:
        """Hold this instance's lock and write its claim; listen for changes of the kept state."""
        if not self.edges:
            return
        key = lock_key(self.instance)
        if not (await (await conn.execute("SELECT pg_try_advisory_lock(%s)", (key,))).fetchone())[0]:
            raise ClaimRefused("--advertise-url", f"an instance at {self.instance} is running already")
        for instance, edges in claimed(await self._live(conn)).items():
            if edges & self.edges:
                raise ClaimRefused("--edges", f"{', '.join(sorted(edges & self.edges))} claimed by the live "
                                              f"instance at {instance}")
        await conn.execute("INSERT INTO shares (instance, edges, lock_key) VALUES (%s, %s, %s) ON CONFLICT "
                           "(instance) DO UPDATE SET edges = excluded.edges, lock_key = excluded.lock_key",
                           (self.instance, ",".join(sorted(self.edges)), key))
        await conn.execute(f"LISTEN {CHANNEL}")
        conn.add_notify_handler(lambda _: self.changed.set())
        self.holding = True

