"""The controllers' PostgreSQL over TLS: the test cluster takes TLS only, with a certificate of its own CA;
``srfabric serve`` connects with ``sslmode=verify-full`` and answers; a plain connection is refused by the server,
and a client that does not trust the cluster's CA refuses the server."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest

from srfabric.security.pki import make_ca
from srfabric_tools.testbed.api_lab import ServeProcess, postgres_cluster


def test_the_database_is_reached_over_verified_tls_only(tmp_path: Path) -> None:
    with postgres_cluster() as url:
        assert "sslmode=verify-full" in url
        with ServeProcess(url) as serve, serve.client() as client:
            assert client.list("ports") == []
        conninfo = url  # psycopg takes the same URL
        with psycopg.connect(conninfo) as connection:
            assert connection.execute("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()").fetchone() == (True,)
        with pytest.raises(psycopg.OperationalError, match="no encryption"):
            psycopg.connect(conninfo.replace("sslmode=verify-full", "sslmode=disable"))
        stranger = make_ca(tmp_path, "another CA")
        with pytest.raises(psycopg.OperationalError, match="certificate verify failed"):
            psycopg.connect(conninfo.split("&sslrootcert=")[0] + f"&sslrootcert={stranger.cert}")
