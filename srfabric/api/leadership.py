"""Which of the ``srfabric serve`` instances sharing one PostgreSQL database leads: the holder of an advisory
lock. No consensus of srfabric's own: the database grants a session-level advisory lock to one session at a
time and frees it when that session ends, which happens at once when the holder's process dies (the kernel
closes its socket and the server's backend reads the end).

Every instance keeps one connection for this and, every ``interval_s``, either tries the lock (a follower)
or checks that its connection is alive (the leader). The winner raises the generation in the ``leader`` row
and writes its API URL there, under the lock; followers read that row to answer writes with the leader's
address and to take the switches' SLAVE role with the current generation. A leader whose connection fails
may already have lost the lock to another instance: it stops serving at once (``LeadershipLost``) rather
than go on writing to switches another controller now leads.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from srfabric.api.db_rounds import in_rounds, keepalive_connection
from srfabric.errors import SrfabricError

log = logging.getLogger(__name__)

LEADER_LOCK = 0x73726662_6C656164  # "srfblead"
INTERVAL_S = 0.2  # how often a follower tries the lock: the most a take-over waits for a dead leader's lock
LIVENESS_S = 2.0  # a leader whose database does not answer within this long stops leading


class LeadershipLost(SrfabricError):
    """The leader's database connection failed: another instance may lead now."""


class Leadership:
    """One instance's part in the election; ``leading``, ``generation`` and ``leader_url`` say where it stands.

    ``connect`` opens the election's connection (psycopg's ``AsyncConnection.connect`` on ``dsn`` by default;
    tests pass their own).
    """

    def __init__(self, dsn: str, url: str, interval_s: float = INTERVAL_S,
                 connect: Callable[[], Awaitable[Any]] | None = None) -> None:
        self.dsn, self.url, self.interval_s = dsn, url, interval_s
        self.leading = False
        self.generation = 0  # the one this instance leads with, or the leader's as last read
        self.leader_url: str | None = None  # None: no leader has been elected yet
        self._connect = connect or (lambda: keepalive_connection(dsn))

    def view(self) -> dict[str, Any]:
        """Where this instance stands, for the API's fabric view."""
        return {"leading": self.leading, "generation": self.generation, "leader": self.leader_url}

    async def run(self, on_elected: Callable[[int], Awaitable[None]], first_round: asyncio.Event | None = None) -> None:
        """Follow until the lock is won, then call ``on_elected(generation)`` and lead; ``first_round`` is set
        once the first attempt has ended either way. Raises ``LeadershipLost`` when leading stops being safe."""
        async def one_round(conn: Any, _: bool) -> None:
            if self.leading:  # a leader cut off steps down (in 2 s) before the server frees its lock
                await asyncio.wait_for(conn.execute("SELECT 1"), LIVENESS_S)
            elif await self._try_lock(conn):
                log.warning("elected leader (generation %d)", self.generation)
                await on_elected(self.generation)
            else:
                await self._read_leader(conn)

        def fatal(error: Exception) -> BaseException | None:
            return LeadershipLost("leader", f"cannot go on leading: {error}") if self.leading else None

        await in_rounds(self._connect, one_round, fatal, "leader election", self.interval_s, first_round)

    async def _try_lock(self, conn: Any) -> bool:
        won = (await (await conn.execute("SELECT pg_try_advisory_lock(%s)", (LEADER_LOCK,))).fetchone())[0]
        if not won:
            return False
        row = await (await conn.execute("UPDATE leader SET generation = generation + 1, url = %s WHERE id = 1 "
                                        "RETURNING generation", (self.url,))).fetchone()
        self.generation, self.leading, self.leader_url = int(row[0]), True, self.url
        return True

    async def _read_leader(self, conn: Any) -> None:
        row = await (await conn.execute("SELECT url, generation FROM leader WHERE id = 1")).fetchone()
        if row is not None:
            self.leader_url, self.generation = row[0], int(row[1])

