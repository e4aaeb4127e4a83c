"""The journal sending to a real ``srfabric serve`` (a process of its own, SQLite, no switches): changes arrive
once and in order through srfabric being stopped and started again, a replayed create or delete is applied
once, and what srfabric refuses is kept as failed with its reason."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from functools import partial
from pathlib import Path

import pytest
from sqlalchemy import create_engine

from networking_srfabric.journal import JOURNAL_METADATA, Journal, record
from networking_srfabric.sender import body, http_call, send

TOKEN = "service-secret"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Serve:
    """``srfabric serve`` on loopback, stopped and started by the test (by its pid)."""

    def __init__(self, folder: Path, extra: tuple[str, ...] = ()) -> None:
        self.db = f"sqlite:///{folder}/srfabric.db"
        self.port, self.openflow = free_port(), free_port()
        self.process: subprocess.Popen[bytes] | None = None
        self.extra = extra  # more options (``--keystone ...``)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "srfabric", "serve", "--host", "127.0.0.1", "--port", str(self.port), "--db",
             self.db, "--token", TOKEN, "--openflow-host", "127.0.0.1", "--openflow-port", str(self.openflow),
             "--openflow-insecure", *self.extra],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return
            except OSError:
                assert self.process.poll() is None, self.process.stderr.read() if self.process.stderr else ""
                time.sleep(0.1)
        raise AssertionError("srfabric serve did not listen within 60 s")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(10)
        self.process = None


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Serve]:
    running = Serve(tmp_path)
    running.start()
    yield running
    running.stop()


def port(ident: str, name: str) -> dict[str, object]:
    return {"id": ident, "name": name, "project_id": "demo", "tenant_id": "demo", "mac_address": "02:00:00:00:00:01",
            "fixed_ips": [{"ip_address": "10.0.0.9", "subnet_id": "s"}], "device_owner": "compute:nova",
            "device_id": "vm", "status": "DOWN", "admin_state_up": True}


IDS = [f"0c7a8a0e-4bc1-4b1f-9b0e-0d0f3c2a{index:04x}" for index in range(40)]


def test_changes_arrive_once_in_order_through_a_restart_of_srfabric(serve: Serve, tmp_path: Path) -> None:
    engine = create_engine(f"sqlite:///{tmp_path}/neutron.db")
    JOURNAL_METADATA.create_all(engine)
    now = [0.0]
    call = http_call(serve.url, TOKEN, timeout_s=5)
    journal = Journal(engine, partial(send, call), clock=lambda: now[0], backoff_max_s=4.0)
    with engine.begin() as db:
        record(db, "port", IDS[0], "create", port(IDS[0], "first"))
    assert journal.run_once() == 1
    serve.stop()
    for index in range(1, 21):  # 20 changes while srfabric is away
        with engine.begin() as db:
            record(db, "port", IDS[index], "create", port(IDS[index], f"p{index}"))
    assert journal.run_once() == 0 and journal.counts()["pending"] == 20
    serve.start()
    now[0] += 4.0
    assert journal.run_once() == 20
    status, answer = call("GET", "/v2.0/ports", None)
    names = [p["name"] for p in answer["ports"]]
    assert status == 200 and names.count("first") == 1 and sorted(names) == sorted(
        ["first", *(f"p{index}" for index in range(1, 21))])


def test_a_replayed_create_or_delete_is_applied_once_and_a_refusal_is_kept(serve: Serve, tmp_path: Path) -> None:
    engine = create_engine(f"sqlite:///{tmp_path}/neutron.db")
    JOURNAL_METADATA.create_all(engine)
    call = http_call(serve.url, TOKEN, timeout_s=5)
    journal = Journal(engine, partial(send, call), clock=lambda: 0.0)
    with engine.begin() as db:
        record(db, "port", IDS[30], "create", port(IDS[30], "v-in"))
        record(db, "port", IDS[30], "create", port(IDS[30], "v-in"))  # sent again, as after a worker died
        record(db, "port", IDS[30], "update", {**port(IDS[30], "v-in"), "name": "renamed"})
        record(db, "flow_classifier", IDS[31], "create", {"id": IDS[31], "protocol": "udp",
                                                          "logical_source_port": IDS[39]})  # no such port
        record(db, "port", IDS[30], "delete", {})
        record(db, "port", IDS[30], "delete", {})
    assert journal.run_once() == 5
    [(seqnum, kind, ident, why)] = journal.failed()
    assert (seqnum, kind, ident) == (4, "flow_classifier", IDS[31]) and "HTTP 404" in why and IDS[39] in why
    assert call("GET", "/v2.0/ports", None)[1]["ports"] == []


def test_only_the_fields_srfabric_keeps_are_sent() -> None:
    sent = body("port", "create", port(IDS[0], "p"))["port"]
    assert set(sent) == {"id", "name", "project_id", "mac_address", "fixed_ips", "device_owner", "device_id"}
    assert body("port_chain", "update", {"id": "x", "name": "c", "port_pair_groups": ["g"], "chain_id": 3}) == {
        "port_chain": {"name": "c", "port_pair_groups": ["g"]}}
    with pytest.raises(ValueError, match="object_type: 'router' is not one of"):
        body("router", "create", {})


def test_an_update_sends_only_what_it_changed() -> None:
    chain = {"id": "x", "name": "renamed", "port_pair_groups": ["g"], "flow_classifiers": ["f"],
             "srfabric:changed": ["name"]}
    assert body("port_chain", "update", chain) == {"port_chain": {"name": "renamed"}}
