"""Streams through the API's service on a controller without switches: admission, 409s, re-route, restart."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from srfabric.api.errors import ApiError
from srfabric.api.service import SfcService
from srfabric.api.storage.database import open_database
from srfabric.api.storage.repository import Repository
from srfabric.codecs.macaddr import mac_to_str
from srfabric.controller.config import ControllerConfig
from srfabric.controller.controller import Controller
from srfabric.model.topo import tsn_fig1
from srfabric.southbound.gates import RecordingGates
from srfabric.tsn.runtime.live import CycleConfig

TWO_SLOTS = CycleConfig(base_period_ns=60_000)  # 27,036 ns slots: two per base period


def fig1_controller(with_hosts: bool = False) -> Controller:
    """A controller that knows the TSN paper's Fig. 1 fabric (its hosts too, if asked), without switches."""
    controller = Controller(ControllerConfig(tt_queue=6))
    fabric = tsn_fig1().to_fabric()
    for switch in fabric.switches.values():
        controller.fabric.add_switch(switch)
    for a, b in fabric.links.items():
        controller.fabric.add_link(a, b)
    for host in fabric.hosts.values() if with_hosts else ():
        controller.fabric.add_host(host)
    return controller


def make(tmp_path: Path, cycle: CycleConfig | None = None) -> tuple[SfcService, RecordingGates]:
    controller = fig1_controller()
    gates = RecordingGates()
    service = SfcService(Repository(open_database(f"sqlite:///{tmp_path}/api.db")), controller, cycle=cycle,
                         gates=gates)
    service.streams.clock = lambda: 5_000_000_000
    return service, gates


async def host_ports(service: SfcService) -> dict[str, str]:
    ids = {}
    for host in tsn_fig1().to_fabric().hosts.values():
        switch = service.controller.fabric.switches[host.dpid].name
        record = await service.create("ports", {"name": host.name, "mac_address": mac_to_str(host.mac),
                                                "fixed_ips": [{"ip_address": host.ip}],
                                                "binding_profile": {"switch": switch, "port": host.port}})
        ids[host.name] = record["id"]
    return ids


def state(service: SfcService, gates: RecordingGates) -> tuple[dict[str, Any], ...]:
    """What a refused change must leave as it was: the records, the controller's streams, the gates."""
    return dict(service.snapshot["streams"]), dict(service.controller.streams), dict(gates.ports)


async def fill_two_slots(service: SfcService, ports: dict[str, str]) -> None:
    """Two h1 -> h3 streams: h1's link has no slot left."""
    for port in (5001, 5002):
        await service.create("streams", stream(ports, udp_destination_port=port))


def stream(ports: dict[str, str], talker: str = "h1", listener: str = "h3", **fields: Any) -> dict[str, Any]:
    return {"talker": ports[talker], "listener": ports[listener], "period_ns": 60_000, "size_bytes": 200,
            "udp_destination_port": 5001, **fields}


def test_an_admitted_stream_gets_a_slot_a_path_an_entry_at_its_talker_and_gates(tmp_path: Path) -> None:
    service, gates = make(tmp_path)

    async def scenario() -> dict[str, Any]:
        await service.start()
        ports = await host_ports(service)
        return await service.create("streams", stream(ports, period_ns=1_000_000))

    record = asyncio.run(scenario())
    assert (record["path"], record["slot"], record["phase"]) == (["s1", "s2", "s5"], 0, 0)
    steered = service.controller.streams[record["id"]]
    assert steered.path == ("s1", "s2", "s5") and steered.time_triggered
    assert sorted(gates.ports) == ["s1-eth3", "s2-eth2", "s5-eth4"]
    view = service.streams.view()
    assert view["last_change"]["gated_ports"] == sorted(gates.ports)
    assert {g["base_time_ns"] for g in view["gates"]} == {5_200_000_000}  # a 4 ms boundary, 200 ms ahead
    assert view["streams"][0]["offset_ns"] == 0
    assert service.repo.load()["streams"][record["id"]]["slot"] == 0



def test_a_second_stream_regates_only_the_ports_whose_lists_change(tmp_path: Path) -> None:
    service, gates = make(tmp_path)

    async def scenario() -> dict[str, Any]:
        await service.start()
        ports = await host_ports(service)
        await service.create("streams", stream(ports, period_ns=1_000_000))
        service.streams.clock = lambda: 6_000_000_000
        await service.create("streams", stream(ports, "h2", "h4", period_ns=1_000_000, path=["s1", "s3", "s4"]))
        return service.streams.view()

    view = asyncio.run(scenario())
    bases = {gate["port"]: gate["base_time_ns"] for gate in view["gates"]}
    assert view["last_change"]["regated_ports"] == ["s1-eth4", "s3-eth2", "s4-eth3"]
    assert bases == {"s1-eth3": 5_200_000_000, "s2-eth2": 5_200_000_000, "s5-eth4": 5_200_000_000,
                     "s1-eth4": 6_200_000_000, "s3-eth2": 6_200_000_000, "s4-eth3": 6_200_000_000}
    assert {port: gcl.base_time_ns for port, gcl in gates.ports.items()} == bases


@pytest.mark.parametrize(("bulk", "start"), [
    (False, "slot: no slot is free on any of the 2 candidate path(s) from h1 to h3"),
    (True, "slot: no slot on any of the 2 candidate path(s) from h1 to h3"),  # after the stream's id
])
def test_a_stream_that_does_not_fit_gets_409_and_changes_nothing(tmp_path: Path, bulk: bool, start: str) -> None:
    service, gates = make(tmp_path, TWO_SLOTS)

    async def scenario() -> ApiError:
        await service.start()
        ports = await host_ports(service)
        await fill_two_slots(service, ports)
        before = state(service, gates)
        late = stream(ports, udp_destination_port=5003, name="late")
        with pytest.raises(ApiError) as refused:
            await (service.create_streams([late]) if bulk else service.create("streams", late))
        assert state(service, gates) == before
        assert len(service.repo.load()["streams"]) == 2
        return refused.value

    refused = asyncio.run(scenario())
    assert refused.status == 409 and refused.kind == "StreamNotAdmitted"
    assert (refused.message.split(": ", 1)[1] if bulk else refused.message).startswith(start)


@pytest.mark.parametrize(
    ("fields", "status", "start"),
    [({"max_latency_ns": 5_000}, 409, "max_latency_ns: 5000 ns is below the 6136 ns a frame needs"),
     ({"period_ns": 70_000}, 400, "period_ns: 70000 is not one of the periods"),
     ({"path": ["s1", "s9", "s5"]}, 400, "path[1]: 's9' is not a switch of the fabric."),
     ({"path": ["s1", "s4", "s5"]}, 400, "path[1]: no link from s1 to s4."),
     ({"path": ["s2", "s5"]}, 400, "path[0]: must be the talker's switch s1, not s2."),
     ({"path": ["s1", "s3", "s4", "s5", "s2", "s1", "s3", "s4", "s5"]}, 400, "path[5]: s1 is crossed twice"),
     ({"size_bytes": 2000}, 400, "size_bytes: 2000 exceeds the slot's 1500")],
)
def test_bad_requests_name_the_field(tmp_path: Path, fields: dict[str, Any], status: int, start: str) -> None:
    service, _ = make(tmp_path, TWO_SLOTS)

    async def scenario() -> ApiError:
        await service.start()
        ports = await host_ports(service)
        with pytest.raises(ApiError) as refused:
            await service.create("streams", stream(ports, **fields))
        assert not service.snapshot["streams"] and not service.controller.streams
        return refused.value

    refused = asyncio.run(scenario())
    assert (refused.status, refused.message[: len(start)]) == (status, start)


def test_re_route_delete_and_restart(tmp_path: Path) -> None:
    service, gates = make(tmp_path, TWO_SLOTS)

    async def first() -> str:
        await service.start()
        ports = await host_ports(service)
        record = await service.create("streams", stream(ports))
        moved = await service.update("streams", record["id"], {"path": ["s1", "s3", "s4", "s5"]})
        assert moved["path"] == ["s1", "s3", "s4", "s5"]
        assert service.controller.streams[record["id"]].path == ("s1", "s3", "s4", "s5")
        assert sorted(gates.ports) == ["s1-eth4", "s3-eth2", "s4-eth2", "s5-eth4"]
        best_effort = await service.create("streams", stream(ports, "h2", "h4", priority=0))
        assert (best_effort["path"], best_effort["slot"]) == (["s1", "s3", "s4"], None)
        assert not service.controller.streams[best_effort["id"]].time_triggered
        return str(record["id"])

    ident = asyncio.run(first())
    again, gates_again = make(tmp_path, TWO_SLOTS)

    async def second() -> None:
        await again.start()
        assert again.controller.streams[ident].path == ("s1", "s3", "s4", "s5")
        assert sorted(gates_again.ports) == ["s1-eth4", "s3-eth2", "s4-eth2", "s5-eth4"]
        await again.delete("streams", ident)
        assert ident not in again.controller.streams and not gates_again.ports

    asyncio.run(second())


def test_a_re_schedule_gates_every_port_at_one_base_time_and_is_kept(tmp_path: Path) -> None:
    service, gates = make(tmp_path)

    async def first() -> None:
        await service.start()
        ports = await host_ports(service)
        await service.create("streams", stream(ports, period_ns=1_000_000))
        await service.create("streams", stream(ports, "h2", "h4", period_ns=1_000_000, udp_destination_port=5002))
        service.streams.clock = lambda: 6_000_000_000
        await service.reschedule(70)
        view = service.streams.view()
        assert view["duty_percent"] == 70 and view["last_change"]["entries_sent"] == {}
        assert view["last_change"]["gated_ports"] == sorted(gates.ports)
        assert {gcl.base_time_ns for gcl in gates.ports.values()} == {6_200_000_000}
        for gcl in gates.ports.values():  # 700 us for priority 7, then best effort and the guard, 4 times
            assert [e.duration_ns for e in gcl.entries[:3]] == [700_000, 287_664, 12_336]
            assert sum(e.duration_ns for e in gcl.entries) == gcl.cycle_ns == 4_000_000

    asyncio.run(first())
    again, gates_again = make(tmp_path)

    async def second() -> None:
        await again.start()
        assert again.streams.view()["duty_percent"] == 70
        assert gates_again.ports["s1-eth3"].entries[0].duration_ns == 700_000
        await again.reschedule(None)  # back to the streams' slots
        assert gates_again.ports["s1-eth3"].entries[0].duration_ns < 100_000
        assert again.repo.load().duty_percent is None

    asyncio.run(second())


def test_a_re_schedule_that_would_shut_out_a_stream_gets_409_and_changes_nothing(tmp_path: Path) -> None:
    service, gates = make(tmp_path)

    async def scenario() -> ApiError:
        await service.start()
        ports = await host_ports(service)
        await service.create("streams", stream(ports, period_ns=1_000_000))
        await service.create("streams", stream(ports, period_ns=1_000_000, udp_destination_port=5002))
        before = dict(gates.ports)
        with pytest.raises(ApiError) as refused:
            await service.reschedule(3)  # 30 us: room for slot 0 only, the second stream has slot 1
        assert gates.ports == before and service.streams.view()["duty_percent"] is None
        await service.reschedule(10)  # 100 us: three slots, and a new stream is admitted only there
        for port in range(5003, 5004):
            await service.create("streams", stream(ports, period_ns=1_000_000, udp_destination_port=port))
        with pytest.raises(ApiError) as full:
            await service.create("streams", stream(ports, period_ns=1_000_000, udp_destination_port=5009))
        assert full.value.status == 409 and "duty cycle" in full.value.message
        return refused.value

    refused = asyncio.run(scenario())
    assert refused.status == 409 and "duty_percent" in refused.message and "slot 1" in refused.message


def test_an_admission_may_move_an_admitted_stream_to_make_room(tmp_path: Path) -> None:
    service, gates = make(tmp_path, TWO_SLOTS)

    async def scenario() -> tuple[dict[str, Any], dict[str, Any]]:
        await service.start()
        ports = await host_ports(service)
        await service.create("streams", stream(ports, path=["s1", "s2", "s5"]))
        await service.create("streams", stream(ports, "h2", "h4", udp_destination_port=5002))
        second = await service.create("streams", stream(ports, "h2", "h4", udp_destination_port=5003))
        assert (second["path"], second["slot"]) == (["s1", "s3", "s4"], 1)
        # h1 -> s1 is free only in slot 1, and s1 -> s3 is taken in both slots: the second h2 -> h4 stream moves.
        third = await service.create("streams", stream(ports, path=["s1", "s3", "s4", "s5"],
                                                       udp_destination_port=5004))
        return second, third

    second, third = asyncio.run(scenario())
    assert third["slot"] == 1
    assert service.streams.view()["last_change"]["moved_streams"] == [second["id"]]
    moved = service.snapshot["streams"][second["id"]]
    assert (moved["path"], moved["slot"]) == (["s1", "s2", "s5", "s4"], 1)
    assert service.controller.streams[second["id"]].path == ("s1", "s2", "s5", "s4")
    assert service.repo.load()["streams"][second["id"]]["path"] == ["s1", "s2", "s5", "s4"]
    assert "s2-eth2" in gates.ports and "s5-eth2" in gates.ports


def test_a_re_optimisation_moves_a_stream_to_the_short_path_a_deleted_one_freed(tmp_path: Path) -> None:
    service, gates = make(tmp_path, TWO_SLOTS)

    async def scenario() -> tuple[dict[str, Any], str]:
        await service.start()
        ports = await host_ports(service)
        pinned = ["s1", "s2", "s5", "s4"]  # two streams h2 -> h4 fill s1 -> s2 the long way round
        first, _ = [await service.create("streams", stream(ports, "h2", "h4", udp_destination_port=port, path=pinned))
                    for port in (5001, 5002)]
        third = await service.create("streams", stream(ports, udp_destination_port=5003))
        assert third["path"] == ["s1", "s3", "s4", "s5"]
        await service.delete("streams", first["id"])
        service.streams.clock = lambda: 7_000_000_000
        await service.reoptimise()
        view = service.streams.view()
        await service.reoptimise()  # already as good as it gets: nothing moves, nothing is sent
        assert service.streams.view()["last_change"]["moved_streams"] == []
        return view, str(third["id"])

    view, moved = asyncio.run(scenario())
    change = view["last_change"]
    assert change["moved_streams"] == [moved]  # (no switch is connected here: entries are counted in the lab)
    assert service.controller.streams[moved].path == ("s1", "s2", "s5")
    assert service.repo.load()["streams"][moved]["path"] == ["s1", "s2", "s5"]
    # the long path's s1-eth4, s3-eth2 and s4-eth2 lost their gates
    assert sorted(gates.ports) == ["s1-eth3", "s2-eth2", "s4-eth3", "s5-eth2", "s5-eth4"]
    # The ports whose lists changed switch at the change's base time; the others run on as they were (s5-eth4,
    # the moved stream's last hop on both paths, keeps its slot there).
    assert change["regated_ports"] == ["s1-eth3", "s2-eth2"]
    assert {p: gcl.base_time_ns == change["base_time_ns"] for p, gcl in gates.ports.items()} == {
        "s1-eth3": True, "s2-eth2": True, "s4-eth3": False, "s5-eth2": False, "s5-eth4": False}
