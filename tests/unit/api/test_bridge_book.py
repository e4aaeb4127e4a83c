"""The bridges' NETCONF access written through the API (``/v2.0/srfabric/bridges``): added, changed and forgotten
in the bridges file and the gates adapter together; a bad body changes nothing and names the field; a bridge that
runs admitted streams' lists is not forgotten; the password is never shown. Sessions here only record (the real
servers are in ``tests/integration/tsn/test_netconf_bridges.py``)."""

from __future__ import annotations

import asyncio
import json
import stat
from pathlib import Path
from typing import Any

import httpx
import pytest

from srfabric.api.service import SfcService
from srfabric.api.storage.database import open_database
from srfabric.api.storage.repository import Repository
from srfabric.api.streams.bridge_book import BridgeBook
from srfabric.api.web.app import create_app
from srfabric.model.management import BridgeAccess, read_bridges_file, write_bridges_file
from srfabric.rules.yang.sched_tables import PortTable
from srfabric.southbound.netconf.gates import NetconfGates
from srfabric.tsn.gates.capabilities import PortCapabilities
from tests.unit.api.test_streams_service import fig1_controller, host_ports, stream

pytestmark = pytest.mark.timeout(60)
URL = "/v2.0/srfabric/bridges"


class Committing:
    """A bridge's session that takes every edit and holds no table."""

    def __init__(self, access: BridgeAccess) -> None:
        self.access, self.name, self.edits, self.closed = access, access.name, 0, False

    def edit_and_commit(self, config: str, token: str, confirm_timeout_s: int) -> None:
        self.edits += 1

    def confirm(self, token: str) -> None:
        return None

    def tables(self) -> dict[str, PortTable]:
        return {}

    def close(self) -> None:
        self.closed = True


def served(tmp_path: Path, names: tuple[str, ...] = ("s1", "s2", "s5")) -> tuple[SfcService, NetconfGates, Path]:
    bridges = {name: BridgeAccess(name, "192.0.2.1", "root", password="secret") for name in names}
    path = tmp_path / "bridges.json"
    write_bridges_file(path, bridges)
    session: Any = Committing
    gates = NetconfGates(read_bridges_file(path), session=session)
    service = SfcService(Repository(open_database(f"sqlite:///{tmp_path}/api.db")), fig1_controller(), gates=gates)
    service.streams.clock = lambda: 5_000_000_000
    return service, gates, path


def call(service: SfcService, path: Path | None, *requests: tuple[str, str, Any]) -> list[httpx.Response]:
    gates = service.streams.installer.gates
    book = BridgeBook(service, gates, path) if isinstance(gates, NetconfGates) and path else None
    app = create_app(service, "tok", bridges=book)

    async def go() -> list[httpx.Response]:
        await service.start()
        transport = httpx.ASGITransport(app=app)  # type: ignore[arg-type]
        async with httpx.AsyncClient(transport=transport, base_url="http://api") as client:
            answers = []
            for method, url, body in requests:
                if body == "a stream":
                    await service.create("streams", stream(await host_ports(service), period_ns=1_000_000))
                    continue
                answers.append(await client.request(method, url, headers={"X-Auth-Token": "tok"}, json=body))
            return answers

    return asyncio.run(go())


def test_a_bridge_added_through_the_api_is_kept_in_the_file_and_reached_without_showing_its_password(
        tmp_path: Path) -> None:
    service, gates, path = served(tmp_path, ("s1", "s2"))
    added, shown = call(service, path, ("PUT", f"{URL}/s5", {"bridge": {"host": "10.0.9.5", "username": "ops",
                                                                       "password": "pw5"}}),
                        ("GET", URL, None))
    assert added.status_code == 201
    assert added.json() == {"bridge": {"name": "s5", "capabilities": None, "lost_schedule": False, "management": {
        "host": "10.0.9.5", "port": 830, "username": "ops"}}}
    assert read_bridges_file(path)["s5"] == BridgeAccess("s5", "10.0.9.5", "ops", password="pw5")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and "pw" not in shown.text and "secret" not in shown.text
    assert sorted(shown.json()["bridges"]) == ["s1", "s2", "s5"] and gates.sessions["s5"].access.host == "10.0.9.5"


def test_a_bridge_moved_is_reached_at_its_new_address_and_its_capabilities_are_read_again(tmp_path: Path) -> None:
    service, gates, path = served(tmp_path)
    old: Any = gates.sessions["s2"]
    service.streams.planning.capabilities["s2"] = PortCapabilities(16, (1, 100), 10_000_000)
    (moved,) = call(service, path, ("PUT", f"{URL}/s2", {"bridge": {"host": "10.0.9.22", "username": "root",
                                                                    "key_file": "/etc/srfabric/id"}}))
    assert moved.status_code == 200 and "s2" not in service.streams.planning.capabilities
    assert old.closed and gates.sessions["s2"].access.key_file == "/etc/srfabric/id"
    assert read_bridges_file(path)["s2"].host == "10.0.9.22"


@pytest.mark.parametrize(("url", "body", "message"), [
    (f"{URL}/s9", {"bridge": {"host": "10.0.9.9", "username": "root", "port": 0}},
     "bridges.s9.port: must be an integer in 1..65535, got 0"),
    (f"{URL}/s9", {"bridge": {"host": "10.0.9.9", "username": "root", "secret": "x"}},
     "bridges.s9.secret: is not a field; the fields are ['host', 'key_file', 'password', 'port', 'timeout_s', "
     "'username']"),
    (f"{URL}/s9", {"host": "10.0.9.9"}, 'body: must be {"bridge": {host, port, username, password or key_file, '
                                        'timeout_s}}'),
    (f"{URL}/s9", {"bridge": {"host": "a" * 70, "username": "root"}},
     "bridges.s9.host: must be an IP address or a host name of labels of 1..63 characters, got '" + "a" * 70 + "'"),
    (f"{URL}/s%209", {"bridge": {"host": "10.0.9.9", "username": "root"}},
     "bridge name: must be 1..64 letters, digits, '.', '_' or '-' (a switch's name), got 's 9'"),
])
def test_a_bad_bridge_is_refused_naming_the_field_and_changes_nothing(tmp_path: Path, url: str, body: Any,
                                                                      message: str) -> None:
    service, gates, path = served(tmp_path)
    before = path.read_bytes()
    (refused,) = call(service, path, ("PUT", url, body))
    assert refused.status_code == 400 and refused.json()["NeutronError"]["message"] == message
    assert path.read_bytes() == before and sorted(gates.sessions) == ["s1", "s2", "s5"]


def test_a_bridge_running_admitted_streams_is_not_forgotten_and_a_free_one_is(tmp_path: Path) -> None:
    service, gates, path = served(tmp_path, ("s1", "s2", "s5", "s3"))
    busy, free, gone = call(service, path, ("POST", "", "a stream"), ("DELETE", f"{URL}/s2", None),
                            ("DELETE", f"{URL}/s3", None), ("GET", f"{URL}/s3", None))
    assert busy.status_code == 409 and busy.json()["NeutronError"]["message"] == (
        "bridge s2: runs the gate lists of admitted streams on s2-eth2; delete those streams first")
    assert free.status_code == 204 and gone.status_code == 404
    assert sorted(read_bridges_file(path)) == sorted(gates.sessions) == ["s1", "s2", "s5"]


def test_bridges_are_shown_but_not_written_without_netconf_gates(tmp_path: Path) -> None:
    service, _gates, _path = served(tmp_path)
    service.streams.installer.gates = type("NoGates", (), {"sessions": {}})()  # --gates none or taprio
    listed, refused = call(service, None, ("GET", URL, None),
                           ("PUT", f"{URL}/s9", {"bridge": {"host": "10.0.9.9", "username": "root"}}))
    assert listed.json() == {"bridges": {}}
    assert refused.status_code == 409 and refused.json()["NeutronError"]["type"] == "BridgesNotManaged"
    assert json.loads(_path.read_text())["bridges"].keys() == {"s1", "s2", "s5"}


def test_capabilities_read_while_the_bridge_was_moved_are_not_kept(tmp_path: Path) -> None:
    """The watch reads capabilities without the lock; what it read from a server the API has since replaced is
    dropped, so the new server is asked at the next pass."""
    from srfabric.api.streams import bridge_task

    service, gates, path = served(tmp_path)
    book = BridgeBook(service, gates, path)
    caps = PortCapabilities(16, (1, 100), 10_000_000)

    def read_while_moving(sessions: dict[str, Any]) -> dict[str, PortCapabilities]:
        asyncio.run_coroutine_threadsafe(book.put("s2", {"bridge": {"host": "10.0.9.22", "username": "root"}}),
                                         loop).result(timeout=10)
        return {name: caps for name in sessions}

    async def scenario() -> None:
        nonlocal loop
        loop = asyncio.get_running_loop()
        gates.capabilities = read_while_moving  # type: ignore[method-assign]
        await bridge_task._capabilities(service, gates)

    loop: Any = None
    asyncio.run(scenario())
    assert sorted(service.streams.planning.capabilities) == ["s1", "s5"]
