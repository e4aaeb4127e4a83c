"""A PostgreSQL restart on a real cluster (root: it runs as user postgres): the repository's next statement
works. Its pooled connections died with the old server; an instance elected just after the restart loads the
kept state with its first statement, and a failure there would stop it leading."""

from __future__ import annotations

from srfabric.api.storage.database import open_database
from srfabric.api.storage.repository import Repository
from srfabric_tools.testbed.api_lab import restartable_postgres


def test_the_first_load_after_a_restart_reads_the_kept_state() -> None:
    with restartable_postgres() as (url, restart):
        repository = Repository(open_database(url))
        try:
            assert repository.load()["port_chains"] == {}  # a pooled connection now
            restart()
            assert repository.load()["port_chains"] == {}
        finally:
            repository.close()
