"""One ``srfabric serve`` and one small Mininet fabric per database backend (SQLite, PostgreSQL)."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from srfabric.model.topo import TopoSpec
from srfabric_tools.testbed.api_lab import ApiLab, ServeProcess, line_spec, postgres_cluster


def small_spec() -> TopoSpec:
    """h1 - s1 - s2 - s3 - h2, functions v1..v4 on s2 (v4 is used as a tap)."""
    return line_spec(4)


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def database(request: pytest.FixtureRequest) -> Iterator[str]:
    if request.param == "sqlite":
        folder = Path(tempfile.mkdtemp(prefix="srfabric-db-"))
        yield f"sqlite:///{folder}/api.db"
        for path in folder.iterdir():
            path.unlink()
        folder.rmdir()
    else:
        with postgres_cluster() as url:
            yield url


@pytest.fixture(scope="module")
def lab(database: str) -> Iterator[ApiLab]:
    with ServeProcess(database) as serve, ApiLab(small_spec(), serve) as running:
        yield running
