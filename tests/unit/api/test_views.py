"""What the fabric, chain and switch views say, from a service and a controller without switches (no root)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from srfabric.api.resources.views import chains_view, change_mark, compared, switch_view
from srfabric.api.service import SfcService
from srfabric.api.storage.database import open_database
from srfabric.api.storage.repository import Repository
from srfabric.controller.controller import Controller
from srfabric.errors import SrfabricError
from srfabric.model.fabric import Host, Switch
from srfabric.rules.openflow.ofbind import wire_cookie


def line_service(tmp_path: Path) -> tuple[SfcService, Controller, str]:
    """s1 - s2 - s3, h1 on s1 and h2 on s3, function v1 on s2 (ports 3 and 4); a chain h1 -> v1 -> h2. Returns
    the service, its controller and the port chain's id."""
    controller = Controller()
    service = SfcService(Repository(open_database(f"sqlite:///{tmp_path}/api.db")), controller)
    fabric = controller.fabric
    for dpid in (1, 2, 3):
        fabric.add_switch(Switch(dpid, f"s{dpid}"))
    fabric.add_link((1, 1), (2, 1))
    fabric.add_link((2, 2), (3, 1))
    fabric.add_host(Host("h1", 0x0A, "10.0.0.1", 1, 2))
    fabric.add_host(Host("h2", 0x0B, "10.0.0.2", 3, 2))

    async def build() -> str:
        await service.start()
        made = {}
        for name, dpid, port in (("v1-in", 2, 3), ("v1-out", 2, 4)):
            made[name] = await service.create("ports", {"name": name, "device_id": "v1",
                                                        "binding_profile": {"switch": dpid, "port": port}})
        hosts = {p["name"]: p["id"] for p in service.find_all("ports", {}, [])}
        pair = await service.create("port_pairs", {"ingress": made["v1-in"]["id"], "egress": made["v1-out"]["id"]})
        group = await service.create("port_pair_groups", {"port_pairs": [pair["id"]]})
        classifier = await service.create("flow_classifiers", {
            "protocol": "udp", "destination_port_range_min": 5001, "destination_port_range_max": 5001,
            "logical_source_port": hosts["h1"], "logical_destination_port": hosts["h2"]})
        chain = await service.create("port_chains", {"name": "web", "port_pair_groups": [group["id"]],
                                                     "flow_classifiers": [classifier["id"]]})
        return str(chain["id"])

    return service, controller, asyncio.run(build())


def test_a_chain_is_shown_with_its_functions_pathlets_and_costs(tmp_path: Path) -> None:
    service, controller, _ = line_service(tmp_path)
    [chain] = chains_view(controller, service.labels())
    assert chain["label"].startswith("web/") and chain["source"] == "h1" and chain["unrouted"] is None
    [path] = chain["paths"]
    assert path["functions"] == ["v1"] and path["delivery"] == {"dpid": 3, "port": 2}
    assert [(h["switch"], h["port"], h["function"]) for h in path["hops"]] == [
        ("s1", 1, None), ("s2", 3, path["function_ids"][0]), ("s2", 2, None)]
    assert path["pathlets"][0]["switch"] == "s1" and path["pathlets"][0]["header"]
    assert chain["entries_per_switch"]["s1"] >= 1


def test_the_fabric_view_names_functions_and_says_which_links_are_down(tmp_path: Path) -> None:
    service, controller, _ = line_service(tmp_path)
    view = service.fabric_view()
    assert [(f["label"], f["ingress"], f["up"]) for f in view["functions"]] == [("v1", {"dpid": 2, "port": 3}, True)]
    assert {link["state"] for link in view["links"]} == {"up"}
    before = change_mark(controller)
    controller.fabric.suspend_link((1, 1))
    view = service.fabric_view()
    assert sorted(link["state"] for link in view["links"]) == ["down", "down", "up", "up"]
    assert change_mark(controller) != before


def test_a_switch_not_connected_is_shown_without_counters_and_an_unknown_one_is_refused(tmp_path: Path) -> None:
    _, controller, _ = line_service(tmp_path)
    view = asyncio.run(switch_view(controller, 2))
    assert (view["name"], view["connected"], view["tables"], view["forged_dropped"]) == ("s2", False, {}, 0)
    with pytest.raises(SrfabricError, match="0x9 is not a switch"):
        asyncio.run(switch_view(controller, 9))


def test_the_event_stream_says_change_when_the_views_change_and_ticks(tmp_path: Path) -> None:
    from srfabric.api.web.ui import event_stream

    service, controller, _ = line_service(tmp_path)

    async def until_a_tick() -> list[bytes]:
        stream, got = event_stream(service, interval=0.01), []
        async for event in stream:
            got.append(event)
            if len(got) == 1:  # a link goes down after the first event
                controller.fabric.suspend_link((1, 1))
            if event.startswith(b"event: tick"):  # a second on
                break
        await stream.aclose()  # type: ignore[attr-defined]
        return got

    events = asyncio.run(until_a_tick())
    changes = [e for e in events if e.startswith(b"event: change")]
    assert changes == [b"event: change\ndata: 1\n\n", b"event: change\ndata: 2\n\n"]
    assert b"event: tick\ndata: {}\n\n" in events


def test_a_switch_read_back_is_compared_with_what_it_should_hold(tmp_path: Path) -> None:
    """Equal cookies are equal entries: a switch holding every compiled entry is in sync; one it lacks is
    missing, one it holds beyond them is extra."""
    _, controller, _ = line_service(tmp_path)
    cookies = [wire_cookie(entry) for entry in controller.core.wanted()[0][2]]
    assert compared(controller, 2, cookies) == {"entries": len(cookies), "missing": 0, "extra": 0, "in_sync": True}
    lacking = compared(controller, 2, [*cookies[1:], 0x5EED])
    assert (lacking["missing"], lacking["extra"], lacking["in_sync"]) == (1, 1, False)
