"""Gate schedules over NETCONF to real bridges: the TSN paper's Fig. 1 bridges (s1, s2, s5) each a
``srfabric bridge serve`` (Debian's netconfd with the pinned 802.1Qcw modules, srfabric's SIL and agent, its own
sshd), reached only over SSH. A stream made through the API reaches every bridge on its path in one confirmed
commit and runs there after its base time (read back from oper state); the bridges' capabilities are read first.
Faults: a bridge that refuses the edit, one that is down, one frozen mid-commit: nothing changes on any bridge,
the stream stays unadmitted, the API answers 409 or 503 naming the bridge; a bridge replaced without its
configuration gets its schedule again. The host kernel has no taprio: the bridges commit and keep state, taprio
is not run (the kernel lab runs it)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from srfabric.api.errors import ApiError
from srfabric.api.service import SfcService
from srfabric.api.storage.database import open_database
from srfabric.api.storage.repository import Repository
from srfabric.api.streams.bridge_book import BridgeBook
from srfabric.api.web.app import create_app
from srfabric.errors import ModelError, Unavailable
from srfabric.model.management import read_bridges_file, write_bridges_file
from srfabric.model.topo import tsn_fig1
from srfabric.southbound.gates import tai_now_ns
from srfabric.southbound.netconf.gates import NetconfGates
from srfabric.tsn.gates.gcl import GateEntry, PortGcl
from srfabric_tools.netconf_lab.bridges import BridgeLab
from tests.unit.api.test_streams_service import fig1_controller, host_ports, stream

pytestmark = pytest.mark.timeout(300)
BRIDGES = ("s1", "s2", "s5")


def fig1_ports() -> dict[str, list[str]]:
    topo = tsn_fig1()
    used: dict[str, set[int]] = {name: set() for name in BRIDGES}
    for link in topo.links:
        for end, port in ((link.a, link.a_port), (link.b, link.b_port)):
            if end in used:
                used[end].add(port)
    for host in topo.hosts.values():
        if host.switch in used:
            used[host.switch].add(host.port)
    return {name: [f"{name}-eth{port}" for port in sorted(ports)] for name, ports in used.items()}


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BridgeLab]:
    with BridgeLab(fig1_ports(), tmp_path_factory.mktemp("bridges")) as bridges:
        yield bridges


def service_over(lab: BridgeLab, tmp_path: Path) -> tuple[SfcService, NetconfGates]:
    gates = NetconfGates(lab.access(), confirm_timeout_s=20)
    service = SfcService(Repository(open_database(f"sqlite:///{tmp_path}/api.db")), fig1_controller(), gates=gates)
    service.streams.planning.capabilities.update(gates.capabilities())
    return service, gates


def admin_lists(gates: NetconfGates) -> dict[str, list[tuple[str, int, list[GateEntry]]]]:
    """What every bridge holds in its running datastore, by bridge: each enabled port's admin list."""
    held = {}
    for name, session in gates.sessions.items():
        held[name] = sorted((t.interface, t.admin.base_time_ns, t.admin.entries) for t in session.tables().values()
                            if t.enabled and t.admin is not None)
    return held


def test_a_stream_reaches_every_bridge_on_its_path_and_runs_there_after_its_base_time(lab: BridgeLab,
                                                                                     tmp_path: Path) -> None:
    service, gates = service_over(lab, tmp_path)
    assert service.streams.planning.capabilities["s2"].list_max == 256

    async def scenario() -> None:
        await service.start()
        await service.create("streams", stream(await host_ports(service), period_ns=1_000_000))

    asyncio.run(scenario())
    sent = service.streams.gcls
    assert sorted(g.interface for g in sent) == ["s1-eth3", "s2-eth2", "s5-eth4"]
    held = admin_lists(gates)
    for gcl in sent:
        assert (gcl.interface, gcl.base_time_ns, gcl.entries) in held[gcl.node]
    time.sleep(max(0.0, (sent[0].base_time_ns - tai_now_ns()) / 1e9) + 0.1)
    assert gates.switched(sent) == []  # each bridge's oper list, cycle and base time are the ones sent
    assert service.fabric_view()["bridges"]["s2"]["management"]["port"] == lab.made["s2"].ssh_port
    gates.close()


def lists(base_time_ns: int, open_ns: int, cycle_ns: int = 1_000_000) -> list[PortGcl]:
    return [PortGcl(name, "", port, cycle_ns, base_time_ns, [GateEntry(2, open_ns), GateEntry(1, cycle_ns - open_ns)])
            for name, port in (("s1", "s1-eth3"), ("s2", "s2-eth2"), ("s5", "s5-eth4"))]


def test_a_shorter_list_replaces_a_longer_one_whole(lab: BridgeLab) -> None:
    gates = NetconfGates(lab.access())
    longer = lists(tai_now_ns(), 30_000)
    longer[0].entries = [GateEntry(2, 10_000), GateEntry(1, 490_000), GateEntry(2, 10_000), GateEntry(1, 490_000)]
    gates.apply(longer)
    shorter = lists(tai_now_ns(), 30_000)
    gates.apply(shorter)
    assert admin_lists(gates)["s1"] == [("s1-eth3", shorter[0].base_time_ns, shorter[0].entries)]
    gates.close()


def test_a_bridge_that_refuses_the_edit_leaves_every_bridge_as_it_was(lab: BridgeLab) -> None:
    gates = NetconfGates(lab.access())
    gates.apply(lists(tai_now_ns(), 30_000))
    before = admin_lists(gates)
    wrong = lists(tai_now_ns(), 40_000)
    wrong[1] = PortGcl("s2", "", "s2-eth2", 2_000_000_000, 0, [GateEntry(2, 1_000_000_000)] * 2)  # 2 s: over 1 s
    with pytest.raises(ModelError) as refused:
        gates.apply(wrong)
    assert refused.value.field == "bridge s2" and "supported-cycle-max" in refused.value.message
    assert admin_lists(gates) == before
    gates.close()


@pytest.mark.parametrize("fault", ["down", "frozen"])
def test_a_bridge_down_or_frozen_mid_commit_changes_nothing_and_is_named(lab: BridgeLab, fault: str) -> None:
    gates = NetconfGates(lab.access())
    gates.apply(lists(tai_now_ns(), 30_000))
    before = admin_lists(gates)
    (lab.stop if fault == "down" else lab.pause)("s5")
    try:
        with pytest.raises(Unavailable) as unavailable:
            gates.apply(lists(tai_now_ns(), 50_000))
    finally:
        lab.start("s5") if fault == "down" else lab.resume("s5")
    assert unavailable.value.field == "bridge s5"
    assert ("unreachable" if fault == "down" else "no answer within 10 s") in unavailable.value.message
    assert admin_lists(gates) == before
    gates.close()


def test_the_api_answers_503_naming_a_bridge_that_is_down_and_admits_nothing(lab: BridgeLab, tmp_path: Path) -> None:
    service, gates = service_over(lab, tmp_path)

    async def scenario() -> ApiError:
        await service.start()
        ports = await host_ports(service)
        lab.stop("s2")
        try:
            with pytest.raises(ApiError) as refused:
                await service.create("streams", stream(ports, period_ns=1_000_000))
        finally:
            lab.start("s2")
        assert not service.snapshot["streams"] and not service.streams.planner().streams
        return refused.value

    refused = asyncio.run(scenario())
    assert refused.status == 503 and refused.kind == "StreamGatesUnavailable"
    assert refused.message.startswith("bridge s2: edit and confirmed commit: unreachable")
    gates.close()


def test_a_bridge_replaced_without_its_configuration_gets_its_schedule_again(lab: BridgeLab) -> None:
    gates = NetconfGates(lab.access())
    sent = lists(tai_now_ns(), 60_000)
    gates.apply(sent)
    lab.stop("s5")
    lab.start("s5", fresh=True)  # its last configuration gone
    assert ("s5-eth4", sent[2].base_time_ns, sent[2].entries) not in admin_lists(gates)["s5"]

    assert gates.resend() == ["s5"]
    assert ("s5-eth4", sent[2].base_time_ns, sent[2].entries) in admin_lists(gates)["s5"]
    gates.close()


def test_a_bridge_added_through_the_api_is_read_and_then_carries_the_stream_it_blocked(lab: BridgeLab,
                                                                                      tmp_path: Path) -> None:
    path = tmp_path / "bridges.json"
    write_bridges_file(path, {name: access for name, access in lab.access().items() if name != "s5"})
    gates = NetconfGates(read_bridges_file(path), confirm_timeout_s=20)
    service = SfcService(Repository(open_database(f"sqlite:///{tmp_path}/api.db")), fig1_controller(), gates=gates)
    app = create_app(service, "tok", bridges=BridgeBook(service, gates, path))
    s5 = lab.access()["s5"]

    async def scenario() -> tuple[int, int, int]:
        await service.start()
        ports = await host_ports(service)
        with pytest.raises(ApiError) as blocked:  # s5 is on the path and cannot be reached
            await service.create("streams", stream(ports, period_ns=1_000_000))
        assert blocked.value.message.startswith("bridge s5: port s5-eth4 needs gates, but the bridge has no")
        transport = httpx.ASGITransport(app=app)  # type: ignore[arg-type]
        async with httpx.AsyncClient(transport=transport, base_url="http://api") as client:
            added = await client.put("/v2.0/srfabric/bridges/s5", headers={"X-Auth-Token": "tok"}, json={"bridge": {
                "host": s5.host, "port": s5.port, "username": "root", "key_file": s5.key_file}})
        service.streams.planning.capabilities.update(await asyncio.to_thread(gates.capabilities))  # the watch's pass
        await service.create("streams", stream(ports, period_ns=1_000_000))
        return added.status_code, len(service.snapshot["streams"]), service.streams.planning.capabilities[
            "s5"].list_max

    assert asyncio.run(scenario()) == (201, 1, 256)
    s5_list = next(g for g in service.streams.gcls if g.node == "s5")
    assert (s5_list.interface, s5_list.base_time_ns, s5_list.entries) in admin_lists(gates)["s5"]
    assert read_bridges_file(path)["s5"].port == s5.port
    gates.close()
