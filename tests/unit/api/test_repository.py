"""The repository's kept connection: reused, replaced after a failure, never shared by two transactions."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import text

from srfabric.api.storage.database import open_database
from srfabric.api.storage.repository import Repository

PORT = {"id": "p1", "project_id": "srfabric", "name": "v1-in", "mac_address": "02:00:00:00:00:01",
        "fixed_ips": [], "device_owner": "", "device_id": "", "binding:profile": {}, "srfabric:discovered": False}


@pytest.fixture
def repo(tmp_path: Path) -> Iterator[Repository]:
    repository = Repository(open_database(f"sqlite:///{tmp_path}/api.db"))
    yield repository
    repository.close()


def test_writes_reuse_one_connection(repo: Repository) -> None:
    with repo.connect() as db, db.begin():
        repo.save(db, "ports", PORT, created=True)
        first = db
    with repo.connect() as db, db.begin():
        repo.delete(db, "ports", "p1")
        assert db is first
    assert repo.load()["ports"] == {}


def test_a_failed_transaction_rolls_back_and_the_next_one_connects_anew(repo: Repository) -> None:
    with pytest.raises(RuntimeError), repo.connect() as db, db.begin():
        repo.save(db, "ports", PORT, created=True)
        first = db
        raise RuntimeError("a switch refused the change")
    with repo.connect() as db, db.begin():
        assert db is not first
        assert db.execute(text("SELECT count(*) FROM ports")).scalar() == 0


def test_a_second_transaction_meanwhile_gets_a_connection_of_its_own(repo: Repository) -> None:
    with repo.connect() as outer, outer.begin():
        repo.save(outer, "ports", PORT, created=True)
        with repo.connect() as inner:
            assert inner is not outer
    assert list(repo.load()["ports"]) == ["p1"]
