"""Claims of instances sharing a fabric, on a real PostgreSQL (root: the cluster runs as user postgres): an
instance's claim is seen by the others while its connection lives and gone the moment it closes; an overlapping
claim is refused naming the switch; a write notifies the claimants; every instance gets one LLDP key."""

from __future__ import annotations

import asyncio

import pytest

from srfabric.api.shares import ClaimRefused, Shares
from srfabric.api.storage.database import open_database
from srfabric.api.storage.repository import Repository
from srfabric_tools.testbed.api_lab import postgres_cluster


async def until(condition: object, what: str, timeout: float = 10.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():  # type: ignore[operator]
        assert loop.time() < deadline, f"{what} not within {timeout} s"
        await asyncio.sleep(0.02)


def test_claims_live_with_their_instances_and_writes_notify_them() -> None:
    with postgres_cluster() as url:
        repository = Repository(open_database(url))  # migrated: the shares table exists
        dsn = url.replace("postgresql+psycopg://", "postgresql://", 1)

        async def scenario() -> None:
            edge = Shares(dsn, "http://a:1", frozenset({"s1"}), 0.02)
            leader = Shares(dsn, "http://b:1", interval_s=0.02)
            keys = [await edge.shared_lldp_key(b"a" * 16), await leader.shared_lldp_key(b"b" * 16)]
            assert keys == [b"a" * 16] * 2  # the first instance's key, for every instance
            states: list[int] = []
            seen: list[frozenset[str]] = []

            async def state() -> None:
                states.append(1)

            async def claims(elsewhere: frozenset[str]) -> None:
                seen.append(elsewhere)

            async def nothing() -> None:
                pass

            claiming = asyncio.create_task(edge.run(_none, state))
            watching = asyncio.create_task(leader.run(claims, nothing))
            await until(lambda: leader.elsewhere == {"s1"}, "the claim seen")
            with pytest.raises(ClaimRefused, match="s1 claimed by the live instance at http://a:1"):
                await Shares(dsn, "http://c:1", frozenset({"s1", "s4"}), 0.02).run(_none, nothing)
            with repository.transaction() as db:  # any write the leader makes
                repository.save_fabric(db, {}, {})
            await until(lambda: bool(states), "the write notified")
            claiming.cancel()  # the instance ends: its connection closes, and its lock with it
            await until(lambda: leader.elsewhere == frozenset(), "the claim gone")
            watching.cancel()
            assert seen == [frozenset({"s1"}), frozenset()]

        asyncio.run(scenario())
        repository.close()


async def _none(elsewhere: frozenset[str]) -> None:
    pass
