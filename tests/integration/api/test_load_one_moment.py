"""A load beside another instance's writes, on a real PostgreSQL cluster (root: it runs as user postgres): the
load sees the database at one moment. A follower loads the kept state while the leader writes; read at several
moments, a port chain could come with a classifier its load had read before the classifier was written, and
the follower failed on it (seen in a loaded CI run of the shared-fabric test)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import event

from srfabric.api.storage.database import open_database
from srfabric.api.storage.repository import Repository
from srfabric_tools.testbed.api_lab import restartable_postgres

PORT = {"id": "p1", "project_id": "srfabric", "name": "h9", "mac_address": "02:00:00:00:00:09",
        "fixed_ips": [], "device_owner": "", "device_id": "", "binding:profile": {}, "srfabric:discovered": False}
LINKS = {(1, 1): (2, 1)}
SWITCHES = {1: ("s1", "transit"), 2: ("s2", "transit")}


def test_a_load_sees_what_was_committed_before_it_and_nothing_committed_during_it() -> None:
    with restartable_postgres() as (url, _):
        follower, leader = Repository(open_database(url)), Repository(open_database(url))
        written: list[bool] = []

        def write_after_the_ports_are_read(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
            if not written and "FROM ports" in statement:  # the ports are read first, the links near the end
                with leader.transaction() as db:
                    leader.save(db, "ports", PORT, created=True)
                    leader.save_fabric(db, LINKS, SWITCHES)
                written.append(True)

        try:
            event.listen(follower.engine, "after_cursor_execute", write_after_the_ports_are_read)
            during = follower.load()
            event.remove(follower.engine, "after_cursor_execute", write_after_the_ports_are_read)
            assert written
            assert (list(during["ports"]), during.links, during.switches) == ([], {}, {})
            after = follower.load()
            assert (list(after["ports"]), after.links, after.switches) == (["p1"], LINKS, SWITCHES)
        finally:
            follower.close()
            leader.close()
