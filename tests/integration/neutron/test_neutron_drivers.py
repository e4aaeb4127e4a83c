"""srfabric behind a real OpenStack Neutron: Neutron 29 with networking-sfc 23 and the srfabric drivers
(``integrations/neutron``, in ``.venv-neutron``) on a MariaDB of the test's own, driven with the ``openstack``
client; a real ``srfabric serve`` receives what the journal sends. Every process is started here and stopped by
its pid."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.unit.neutron.test_sender import TOKEN, Serve, free_port

ROOT = Path(__file__).resolve().parents[3]
NEUTRON_PYTHON = ROOT / ".venv-neutron" / "bin" / "python"
pytestmark = pytest.mark.skipif(not NEUTRON_PYTHON.exists(), reason="needs .venv-neutron (make bootstrap)")


class MariaDB:
    """A MariaDB server with its own data folder, on loopback, without grant tables (a test's database)."""

    def __init__(self, folder: Path) -> None:
        self.folder, self.port = folder, free_port()
        subprocess.run(["mariadb-install-db", "--user=root", f"--datadir={folder}/data", "--skip-test-db",
                        "--auth-root-authentication-method=normal"], check=True, capture_output=True, timeout=120)
        self.process = subprocess.Popen(
            ["mariadbd", "--user=root", f"--datadir={folder}/data", f"--socket={folder}/sock", f"--port={self.port}",
             "--bind-address=127.0.0.1", "--skip-grant-tables", f"--pid-file={folder}/pid"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        until(lambda: self.sql("SELECT 1").returncode == 0, "MariaDB answering", 60)
        assert self.sql("CREATE DATABASE neutron CHARACTER SET utf8mb4").returncode == 0

    def sql(self, statement: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["mariadb", f"--socket={self.folder}/sock", "-e", statement], capture_output=True,
                              text=True, timeout=30)

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(30)


def until(condition: Callable[[], bool], what: str | Callable[[], str], timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"{what() if callable(what) else what}: not within {timeout} s"
        time.sleep(0.2)


@pytest.fixture
def stack(tmp_path: Path) -> Iterator[tuple[Serve, Callable[..., Any], MariaDB]]:
    database = MariaDB(tmp_path / "mariadb")
    serve = Serve(tmp_path)
    serve.start()
    state, port = tmp_path / "neutron", free_port()
    try:
        subprocess.run([str(NEUTRON_PYTHON), "-m", "networking_srfabric.stack", "up", "--state", str(state),
                        "--port", str(port), "--db", f"mysql+pymysql://root@127.0.0.1:{database.port}/neutron",
                        "--srfabric-url", serve.url, "--srfabric-token", TOKEN, "--backoff-max", "2"],
                       check=True, capture_output=True, timeout=180)

        def openstack(*words: str) -> Any:
            shows = words[-2] in ("create", "show") or "create" in words  # set and delete print nothing
            done = subprocess.run([str(NEUTRON_PYTHON.parent / "openstack"), "--os-auth-type", "none",
                                   "--os-endpoint", f"http://127.0.0.1:{port}", *words,
                                   *(("-f", "json") if shows else ())],
                                  capture_output=True, text=True, timeout=120)
            assert done.returncode == 0, done.stderr[-2000:]
            shown = json.loads(done.stdout) if done.stdout.strip() else None
            if isinstance(shown, dict) and "ID" in shown:  # the sfc commands say ID, the core ones id
                shown["id"] = shown["ID"]
            return shown

        yield serve, openstack, database
    finally:
        subprocess.run([str(NEUTRON_PYTHON), "-m", "networking_srfabric.stack", "down", "--state", str(state)],
                       timeout=60)
        serve.stop()
        database.stop()


def held(serve: Serve, path: str) -> dict[str, dict[str, Any]]:
    from networking_srfabric.sender import http_call

    status, answer = http_call(serve.url, TOKEN)("GET", path, None)
    assert status == 200, answer
    [(_, items)] = answer.items()
    return {item["id"]: item for item in items}


def test_neutron_changes_reach_srfabric_once_through_its_journal_and_ports_bind_to_the_fabric(stack) -> None:
    serve, openstack, database = stack
    openstack("network", "create", "fabric")
    openstack("subnet", "create", "fabric-v4", "--network", "fabric", "--subnet-range", "10.0.0.0/24")
    ports = {side: openstack("port", "create", f"fw-{side}", "--network", "fabric", "--device", "fw",
                             "--host", "compute1", "--binding-profile", "switch=s1", "--binding-profile",
                             f"port={number}")["id"] for side, number in (("in", 3), ("out", 4))}
    pair = openstack("sfc", "port", "pair", "create", "--ingress", ports["in"], "--egress", ports["out"],
                     "--service-function-parameters", "correlation=mpls", "fw")["id"]
    group = openstack("sfc", "port", "pair", "group", "create", "--port-pair", pair, "fws")["id"]
    until(lambda: group in held(serve, "/v2.0/sfc/port_pair_groups"), "the group in srfabric")
    assert set(ports.values()) <= set(held(serve, "/v2.0/ports"))
    assert held(serve, "/v2.0/sfc/port_pairs")[pair]["ingress"] == ports["in"]  # Neutron's ids, kept
    bound = openstack("port", "show", ports["in"])
    assert bound["binding_vif_type"] == "other" and bound["binding_vif_details"]["srfabric_switch"] == "s1"
    openstack("sfc", "port", "pair", "set", "--name", "firewall", pair)
    until(lambda: held(serve, "/v2.0/sfc/port_pairs")[pair]["name"] == "firewall", "the rename in srfabric")
    # srfabric away during a create: Neutron answers, the journal keeps the change, and it arrives once.
    serve.stop()
    spare = openstack("sfc", "port", "pair", "group", "create", "spare")["id"]
    serve.start()
    journal = "SELECT seqnum, object_type, operation, state, retry_count, reason FROM neutron.srfabric_journal"
    until(lambda: spare in held(serve, "/v2.0/sfc/port_pair_groups"),
          lambda: f"the group made while srfabric was away; the journal: {database.sql(journal).stdout}")
    openstack("sfc", "port", "pair", "group", "delete", group)
    until(lambda: group not in held(serve, "/v2.0/sfc/port_pair_groups"), "the delete in srfabric")
    names = [g["name"] for g in held(serve, "/v2.0/sfc/port_pair_groups").values()]
    assert names == ["spare"]
