"""Rounds on a kept PostgreSQL connection, as the leader's election (``leadership``) and the instances' claims
(``shares``) run them: one round every interval, the connection opened again after a failure, unless the
failure means this instance must stop (what ``fatal`` says)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

log = logging.getLogger(__name__)


async def keepalive_connection(dsn: str) -> Any:
    """An autocommit connection whose server notices a dead peer soon. The server frees a session's advisory
    locks once it notices the session is gone: at once when the process dies, within about 5 s (these
    keepalives) when its machine does or is cut off."""
    import psycopg

    return await psycopg.AsyncConnection.connect(
        dsn, autocommit=True, connect_timeout=5,
        options="-c tcp_keepalives_idle=2 -c tcp_keepalives_interval=1 -c tcp_keepalives_count=3")


async def in_rounds(connect: Callable[[], Awaitable[Any]], one_round: Callable[[Any, bool], Awaitable[None]],
                    fatal: Callable[[Exception], BaseException | None], what: str, interval_s: float,
                    first_round: asyncio.Event | None = None) -> None:
    """Every ``interval_s``: ``one_round(connection, fresh)`` (``fresh``: just opened). A failure ``fatal`` turns
    into an error ends the rounds with it; any other is logged (naming ``what``) and the connection opened again.
    ``first_round`` is set once the first round has ended either way."""
    conn: Any = None
    try:
        while True:
            try:
                fresh = conn is None
                if conn is None:
                    conn = await connect()
                await one_round(conn, fresh)
            except Exception as error:  # noqa: BLE001 - psycopg's errors, or what a round's callback raised
                stop = fatal(error)
                if stop is not None:
                    raise stop from None
                log.warning("%s: %s; trying again", what, error)
                await closed(conn)
                conn = None
            if first_round is not None:
                first_round.set()
            await asyncio.sleep(interval_s)
    finally:
        await closed(conn)


async def closed(conn: Any) -> None:
    """Close ``conn`` if there is one."""
    if conn is not None:
        with contextlib.suppress(Exception):
            await conn.close()
