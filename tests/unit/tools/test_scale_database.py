"""The database part of ``bench scale``: chains made through the API service, as an operator makes them, on a
controller with no switch connected; the database is read once its write-ahead log is checkpointed."""

from __future__ import annotations

import asyncio

import pytest

from srfabric_tools.bench.scale_database import database_part, sizes

pytestmark = pytest.mark.timeout(120)


def test_each_count_of_chains_is_made_through_the_api_and_the_database_grows() -> None:
    rows = asyncio.run(sizes(4, "mac-vlan-mpls", [2, 40], say=lambda _: None))
    assert [row["chains"] for row in rows] == [2, 40]
    assert rows[1]["database_kib"] > rows[1]["without_chains_kib"] > 0
    assert all(row["port_chain_create_ms"] > 0 for row in rows)


def test_the_quick_part_names_its_sizes_in_the_summary() -> None:
    said: list[str] = []
    part = asyncio.run(database_part(True, "mac-vlan-mpls", said.append))
    assert list(part["database_kib_by_chains"]) == ["4"] and said
