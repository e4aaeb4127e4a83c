"""Streams of SR classes A and B (priority 3 and 2) through the API's service: admitted by their latency bound
beside the gate schedule, refused with the failure code that fits, and kept when the schedule changes."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from srfabric.api.errors import ApiError
from srfabric.api.streams import qcc_streams
from tests.unit.api.test_qcc_streams import request as qcc_request
from tests.unit.api.test_streams_service import host_ports, make, state, stream

pytestmark = pytest.mark.timeout(120)


def class_a(ports: dict[str, str], **fields: Any) -> dict[str, Any]:
    return stream(ports, **{"priority": 3, "period_ns": 125_000, "size_bytes": 200, "udp_destination_port": 6001,
                            **fields})


def failure_code(error: ApiError) -> int:
    return int(error.extra["status"]["status-info"]["failure-code"])


def test_a_class_a_stream_is_admitted_on_a_path_with_its_bound_and_the_ports_reservations(tmp_path: Path) -> None:
    service, gates = make(tmp_path)

    async def scenario() -> dict[str, Any]:
        await service.start()
        ports = await host_ports(service)
        return await service.create("streams", class_a(ports, max_latency_ns=5_000_000))

    record = asyncio.run(scenario())
    assert record["path"] == ["s1", "s2", "s5"] and record["slot"] is None
    steered = service.controller.streams[record["id"]]
    assert steered.path == ("s1", "s2", "s5") and not steered.time_triggered  # pinned, no slot, no gates
    assert gates.ports == {}
    classes = service.streams.view()["classes"]
    [shown] = classes["streams"]
    assert (shown["id"], shown["class"], shown["path"]) == (record["id"], "A", ["h1", "s1", "s2", "s5", "h3"])
    assert 0 < shown["latency_bound_ns"] <= 5_000_000
    reserved = {(p["switch"], p["peer"]): p["class_a"]["reserved_bps"] for p in classes["ports"]}
    assert set(reserved) == {("h1", "s1"), ("s1", "s2"), ("s2", "s5"), ("s5", "h3")}
    assert set(reserved.values()) == {15_488_000}  # 242 bytes on the wire every 125 us


def test_a_class_stream_that_cannot_meet_its_latency_gets_409_code_21_and_changes_nothing(tmp_path: Path) -> None:
    service, gates = make(tmp_path)

    async def scenario() -> tuple[ApiError, tuple[dict[str, Any], ...], tuple[dict[str, Any], ...]]:
        await service.start()
        ports = await host_ports(service)
        await service.create("streams", class_a(ports, udp_destination_port=6002))
        before = state(service, gates)
        with pytest.raises(ApiError) as refused:
            await service.create("streams", class_a(ports, max_latency_ns=1_000))
        return refused.value, before, state(service, gates)

    refused, before, after = asyncio.run(scenario())
    assert refused.status == 409 and "max_latency_ns" in refused.message and failure_code(refused) == 21
    assert before == after


def test_class_streams_past_the_ports_share_get_409_with_a_bandwidth_code(tmp_path: Path) -> None:
    service, _gates = make(tmp_path)

    async def scenario() -> tuple[int, ApiError]:
        await service.start()
        ports = await host_ports(service)
        admitted = 0
        with pytest.raises(ApiError) as refused:
            for port in range(6001, 6200):  # 1,500-byte frames every 20 us: about 60 % of a gigabit each
                await service.create("streams", stream(ports, priority=2, period_ns=20_000, size_bytes=1_500,
                                                       udp_destination_port=port))
                admitted += 1
        return admitted, refused.value

    admitted, refused = asyncio.run(scenario())
    assert admitted >= 1 and refused.status == 409 and failure_code(refused) in (1, 3)
    assert len(service.snapshot["streams"]) == admitted


def test_a_new_duty_cycle_that_would_break_a_promised_bound_gets_409_code_7(tmp_path: Path) -> None:
    service, gates = make(tmp_path)

    async def scenario() -> tuple[ApiError, int]:
        await service.start()
        ports = await host_ports(service)
        await service.create("streams", stream(ports, period_ns=1_000_000))  # a time-triggered stream: gates
        probe = await service.create("streams", class_a(ports))
        bound = service.streams.view()["classes"]["streams"][0]["latency_bound_ns"]
        await service.delete("streams", probe["id"])
        await service.create("streams", class_a(ports, max_latency_ns=bound + 1_000))  # just above it
        before = dict(gates.ports)
        with pytest.raises(ApiError) as refused:
            await service.reschedule(90)  # 900 us of every millisecond for priority 7: the class waits longer
        assert gates.ports == before
        return refused.value, service.streams.view()["duty_percent"]

    refused, duty = asyncio.run(scenario())
    assert refused.status == 409 and failure_code(refused) == 7 and "new duty cycle" in refused.message
    assert duty is None


def test_class_streams_are_kept_across_a_restart(tmp_path: Path) -> None:
    service, _gates = make(tmp_path)

    async def first() -> str:
        await service.start()
        ports = await host_ports(service)
        return str((await service.create("streams", class_a(ports)))["id"])

    ident = asyncio.run(first())
    again, _ = make(tmp_path)

    async def second() -> dict[str, Any]:
        await again.start()
        return again.streams.view()["classes"]

    classes = asyncio.run(second())
    assert [s["id"] for s in classes["streams"]] == [ident]


def test_a_qcc_request_at_priority_3_is_a_class_a_stream_answered_with_its_bound_or_its_code(tmp_path: Path) -> None:
    service, _gates = make(tmp_path)
    asyncio.run(host_ports(service))

    def asking(number: int, latency_ns: int) -> dict[str, Any]:
        document = qcc_request(number, 6001 + number, latency_ns=latency_ns, size=200, interval=(1, 8000))
        document["talker"]["data-frame-specification"].append(
            {"index": 1, "ieee802-vlan-tag": {"priority-code-point": 3, "vlan-id": 0}})
        return document

    answer = asyncio.run(qcc_streams.create(service, asking(1, 5_000_000)))
    bound = service.streams.view()["classes"]["streams"][0]["latency_bound_ns"]
    assert answer["status"]["talker"]["accumulated-latency"] == bound
    assert answer["status"]["status-info"]["failure-code"] == 0 and answer["stream"]["slot"] is None
    with pytest.raises(ApiError) as caught:
        asyncio.run(qcc_streams.create(service, asking(2, 1_000)))
    assert caught.value.status == 409 and failure_code(caught.value) == 21


def test_a_time_triggered_stream_that_would_break_a_promised_bound_gets_409_code_7(tmp_path: Path) -> None:
    service, gates = make(tmp_path)

    async def scenario() -> tuple[int, ApiError]:
        await service.start()
        ports = await host_ports(service)
        await service.create("streams", stream(ports, period_ns=1_000_000))
        probe = await service.create("streams", class_a(ports))
        bound = service.streams.view()["classes"]["streams"][0]["latency_bound_ns"]
        await service.delete("streams", probe["id"])
        await service.create("streams", class_a(ports, max_latency_ns=bound + 1_000))
        admitted = 0
        with pytest.raises(ApiError) as refused:
            for port in range(5002, 5100):  # more windows on the class's ports: it waits longer
                before = state(service, gates)
                await service.create("streams", stream(ports, period_ns=1_000_000, udp_destination_port=port))
                admitted += 1
        assert state(service, gates) == before
        return admitted, refused.value

    admitted, refused = asyncio.run(scenario())
    assert refused.status == 409 and failure_code(refused) == 7 and "new gate lists" in refused.message
    assert admitted == 0  # a second window on the same ports is already too much for a promise this tight


def test_the_gates_of_the_ports_a_class_stream_crosses_carry_its_classs_shaper(tmp_path: Path) -> None:
    service, gates = make(tmp_path)

    async def scenario() -> tuple[dict[str, Any], dict[str, Any]]:
        await service.start()
        ports = await host_ports(service)
        timed = await service.create("streams", stream(ports, path=["s1", "s2", "s5"], period_ns=1_000_000))
        shaped = await service.create("streams", class_a(ports, path=["s1", "s2", "s5"], max_latency_ns=5_000_000))
        return timed, shaped

    _timed, shaped = asyncio.run(scenario())
    assert service.controller.streams[shaped["id"]].sr_class == 3  # its frames marked and queued as class A
    on_path = {(gcl.node, gcl.peer): gcl for gcl in gates.ports.values()}
    reserved = {(p["switch"], p["peer"]): p["class_a"] for p in service.streams.view()["classes"]["ports"]}
    for hop in (("s1", "s2"), ("s2", "s5"), ("s5", "h3")):
        [shaper] = on_path[hop].shapers
        assert shaper.priority == 3 and shaper.idle_kbit * 1000 >= reserved[hop]["idle_slope_bps"]
