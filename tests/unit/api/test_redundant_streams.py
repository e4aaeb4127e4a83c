"""Redundant streams (``num_seamless_trees: 2``) through the API's service: two paths that share no link are
chosen (or taken as named), the controller steers both, a time-triggered one gets one slot with gates on every
port of both trees (kept over a restart, freed on delete), paths sharing a link are refused by name, and a refused
request changes nothing."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from srfabric.api.errors import ApiError
from tests.unit.api.test_streams_service import host_ports, make, state, stream


def test_a_redundant_stream_runs_on_two_paths_that_share_no_link(tmp_path: Path) -> None:
    service, _ = make(tmp_path)

    async def scenario() -> dict[str, Any]:
        await service.start()
        ports = await host_ports(service)
        return await service.create("streams", stream(ports, priority=5, num_seamless_trees=2))

    record = asyncio.run(scenario())
    assert (record["path"], record["second_path"]) == (["s1", "s2", "s5"], ["s1", "s3", "s4", "s5"])
    steered = service.controller.streams[record["id"]]
    assert (steered.path, steered.second_path) == (("s1", "s2", "s5"), ("s1", "s3", "s4", "s5"))


@pytest.mark.parametrize(("fields", "refusal"), [
    ({"priority": 7, "num_seamless_trees": 2, "max_latency_ns": 8_000, "period_ns": 1_000_000},
     "max_latency_ns: 8000 ns is below the 9122 ns the later copy may need"),
    ({"priority": 5, "num_seamless_trees": 2, "path": ["s1", "s2", "s5"], "second_path": ["s1", "s2", "s5"]},
     "second_path: shares the link s1 - s2 with path"),
    ({"priority": 5, "num_seamless_trees": 2, "path": ["s1", "s2", "s5"]}, "second_path: name both paths"),
    ({"priority": 5, "second_path": ["s1", "s3", "s4", "s5"]}, "second_path: only a stream with"),
])
def test_what_cannot_be_made_redundant_is_refused_by_name_and_changes_nothing(tmp_path: Path, fields: dict[str, Any],
                                                                             refusal: str) -> None:
    service, gates = make(tmp_path)

    async def scenario() -> str:
        await service.start()
        ports = await host_ports(service)
        before = state(service, gates)
        with pytest.raises(ApiError) as refused:
            await service.create("streams", stream(ports, **fields))
        assert state(service, gates) == before
        return refused.value.message

    assert refusal in asyncio.run(scenario())


def test_a_redundant_stream_stays_installed_while_a_link_of_one_path_is_down(tmp_path: Path) -> None:
    service, _ = make(tmp_path)

    async def scenario() -> tuple[str, dict[str, Any]]:
        await service.start()
        ports = await host_ports(service)
        made = await service.create("streams", stream(ports, priority=5, num_seamless_trees=2))
        fabric = service.controller.fabric
        by_name = {switch.name: dpid for dpid, switch in fabric.switches.items()}
        fabric.remove_link((by_name["s1"], fabric.graph().edges[by_name["s1"], by_name["s2"]]["port"]))
        await service.create("streams", stream(ports, "h2", "h4", priority=5, udp_destination_port=5009))
        await service.update("streams", made["id"], {"name": "renamed"})
        return made["id"], dict(service.controller.streams)

    ident, steered = asyncio.run(scenario())
    assert ident in steered and steered[ident].second_path == ("s1", "s3", "s4", "s5")


BOTH_TREES = ["s1-eth3", "s1-eth4", "s2-eth2", "s3-eth2", "s4-eth2", "s5-eth4"]  # s1-s2-s5 and s1-s3-s4-s5


def open_ns(gcl: Any) -> list[tuple[int, int]]:
    """When a port's gate lets the time-triggered class through: (start, end) in ns of its cycle."""
    spans, at = [], 0
    for entry in gcl.entries:
        if entry.mask & (1 << gcl.tt_class):
            spans.append((at, at + entry.duration_ns))
        at += entry.duration_ns
    return spans


def test_a_time_triggered_redundant_stream_is_gated_in_one_slot_on_every_port_of_both_trees(tmp_path: Path) -> None:
    service, gates = make(tmp_path)

    async def first() -> dict[str, Any]:
        await service.start()
        ports = await host_ports(service)
        return await service.create("streams", stream(ports, period_ns=1_000_000, priority=7, num_seamless_trees=2))

    record = asyncio.run(first())
    assert (record["path"], record["second_path"], record["slot"]) == (["s1", "s2", "s5"], ["s1", "s3", "s4", "s5"], 0)
    assert service.controller.streams[record["id"]].time_triggered
    assert sorted(gates.ports) == BOTH_TREES
    windows = {name: open_ns(gcl)[0] for name, gcl in gates.ports.items()}
    assert len(set(windows.values())) == 1  # both copies leave the talker's edge together, in one slot
    shown = service.streams.view()["streams"][0]  # what the web view draws
    assert (shown["path"], shown["second_path"]) == (["h1", "s1", "s2", "s5", "h3"], ["h1", "s1", "s3", "s4", "s5",
                                                                                      "h3"])
    again, gates_again = make(tmp_path)

    async def second() -> None:
        await again.start()
        assert sorted(gates_again.ports) == BOTH_TREES
        ports = await host_ports_of(again)
        other = await again.create("streams", stream(ports, "h2", "h3", period_ns=1_000_000, priority=7,
                                                     udp_destination_port=5002))
        assert other["slot"] != record["slot"]  # s5's port to h3 is the redundant stream's in its slot
        await again.delete("streams", record["id"])
        assert sorted(gates_again.ports) == ["s1-eth3", "s2-eth2", "s5-eth4"]

    asyncio.run(second())


async def host_ports_of(service: Any) -> dict[str, str]:
    """The ports made before a restart, by host name."""
    return {record["name"]: ident for ident, record in service.snapshot["ports"].items()}


def test_a_large_redundant_frame_holds_the_next_slot_on_the_listeners_link(tmp_path: Path) -> None:
    service, gates = make(tmp_path)

    async def scenario() -> dict[str, Any]:
        await service.start()
        ports = await host_ports(service)
        return await service.create("streams", stream(ports, period_ns=1_000_000, size_bytes=1500, priority=7,
                                                      num_seamless_trees=2))

    asyncio.run(scenario())
    slot_ns = service.streams.planner().slot_ns
    assert open_ns(gates.ports["s1-eth3"])[0] == (0, slot_ns)
    assert open_ns(gates.ports["s5-eth4"])[0] == (0, 2 * slot_ns)  # the copy one frame behind may run past it


def test_a_time_triggered_redundant_stream_keeps_its_slot_on_the_tree_left_while_a_link_is_down(
        tmp_path: Path) -> None:
    service, gates = make(tmp_path)

    async def scenario() -> tuple[dict[str, Any], dict[str, Any]]:
        await service.start()
        ports = await host_ports(service)
        made = await service.create("streams", stream(ports, period_ns=1_000_000, priority=7, num_seamless_trees=2))
        fabric = service.controller.fabric
        by_name = {switch.name: dpid for dpid, switch in fabric.switches.items()}
        fabric.suspend_link((by_name["s1"], fabric.graph().edges[by_name["s1"], by_name["s2"]]["port"]))
        other = await service.create("streams", stream(ports, "h2", "h3", period_ns=1_000_000, priority=7,
                                                       udp_destination_port=5002))
        return made, other

    made, other = asyncio.run(scenario())
    assert other["path"] == ["s1", "s3", "s4", "s5"] and other["slot"] != made["slot"]  # not in the kept slot
    assert made["id"] in service.controller.streams


def test_a_batch_that_is_refused_leaves_no_redundant_slot_behind(tmp_path: Path) -> None:
    service, gates = make(tmp_path)

    async def scenario() -> None:
        await service.start()
        ports = await host_ports(service)
        good = stream(ports, period_ns=1_000_000, priority=7, num_seamless_trees=2)
        late = stream(ports, "h2", "h3", period_ns=1_000_000, priority=7, num_seamless_trees=2, max_latency_ns=8_000,
                      udp_destination_port=5002)
        created, refused = await service.create_streams([good, late])
        assert len(created) == 1 and "max_latency_ns" in refused[0]["reason"]
        await service.delete("streams", created[0]["id"])
        assert not service.streams.planner().streams  # nothing held for either

    asyncio.run(scenario())
