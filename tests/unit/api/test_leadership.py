"""The election's rounds on a stand-in database connection: a follower reads the leader's row, the winner
raises the generation and leads, a leader whose connection fails stops. No PostgreSQL needed."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from srfabric.api.leadership import LEADER_LOCK, Leadership, LeadershipLost


class StandIn:
    """Answers the election's three statements; the lock is free once ``free`` is set."""

    def __init__(self, row: tuple[str | None, int] = ("http://a:9696", 4)) -> None:
        self.row, self.free, self.broken, self.closed = row, False, False, False
        self.statements: list[tuple[str, Any]] = []

    async def execute(self, sql: str, params: Any = None) -> StandIn:
        if self.broken:
            raise ConnectionError("server closed the connection unexpectedly")
        self.statements.append((sql.split()[1] if sql.startswith("SELECT") else sql.split()[0], params))
        if "pg_try_advisory_lock" in sql:
            self.answer: Any = (self.free,)
        elif sql.startswith("UPDATE leader"):
            self.row = (params[0], self.row[1] + 1)
            self.answer = (self.row[1],)
        elif sql.startswith("SELECT url"):
            self.answer = self.row
        else:
            self.answer = (1,)
        return self

    async def fetchone(self) -> Any:
        return self.answer

    async def close(self) -> None:
        self.closed = True


def test_a_follower_learns_the_leader_then_wins_the_lock_and_leads() -> None:
    db = StandIn()
    elected: list[int] = []
    leadership = Leadership("postgresql://db", "http://b:9696", interval_s=0.01, connect=lambda: _ready(db))

    async def run() -> None:
        first = asyncio.Event()
        task = asyncio.create_task(leadership.run(_record(elected), first))
        await first.wait()
        assert (leadership.leading, leadership.leader_url, leadership.generation) == (False, "http://a:9696", 4)
        db.free = True  # the leader died: the database freed its lock
        while not elected:
            await asyncio.sleep(0.01)
        db.broken = True  # and now this leader loses its connection
        with pytest.raises(LeadershipLost, match="cannot go on leading"):
            await task

    asyncio.run(run())
    assert elected == [5] and leadership.leading and leadership.leader_url == "http://b:9696"
    assert ("pg_try_advisory_lock(%s)", (LEADER_LOCK,)) in db.statements and db.closed


def test_a_follower_that_loses_the_database_connects_again() -> None:
    connections = [StandIn(), StandIn(("http://c:9696", 9))]
    connections[0].broken = True
    leadership = Leadership("postgresql://db", "http://b:9696", interval_s=0.01,
                            connect=lambda: _ready(connections.pop(0)))

    async def run() -> None:
        task = asyncio.create_task(leadership.run(_record([])))
        while leadership.leader_url is None:
            await asyncio.sleep(0.01)
        task.cancel()

    asyncio.run(run())
    assert (leadership.leading, leadership.leader_url, leadership.generation) == (False, "http://c:9696", 9)


async def _ready(db: StandIn) -> StandIn:
    return db


def _record(into: list[int]) -> Any:
    async def on_elected(generation: int) -> None:
        into.append(generation)
    return on_elected
