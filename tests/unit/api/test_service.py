"""The API service on a controller without switches and a SQLite file: no root, no network."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest

from srfabric.api.service import SfcService
from srfabric.api.storage.database import open_database
from srfabric.api.storage.repository import Repository
from srfabric.controller.controller import Controller
from srfabric.model.fabric import Host, Switch


def test_a_host_learned_during_a_change_is_kept(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """The sync of a change may be what learns a host: the committed snapshot must still list it."""
    repo = Repository(open_database(f"sqlite:///{tmp_path}/api.db"))
    controller = Controller()
    service = SfcService(repo, controller)

    async def scenario() -> None:
        await service.start()
        ports = [await service.create("ports", {"name": f"v-{side}", "device_id": "v",
                                                "binding_profile": {"switch": 1, "port": number}})
                 for side, number in (("in", 3), ("out", 4))]
        controller.fabric.add_switch(Switch(1, "s1"))
        controller.fabric.add_host(Host("h1", 0x0A, "10.0.0.1", 1, 2))
        # Creating a port pair syncs the controller, and that sync reports the new host.
        await service.create("port_pairs", {"ingress": ports[0]["id"], "egress": ports[1]["id"]})
        await controller.sync()

    with caplog.at_level(logging.ERROR):
        asyncio.run(scenario())
    assert not [r for r in caplog.records if "could not keep" in r.getMessage()]
    learned = [p for p in service.find_all("ports", {}, []) if p["srfabric:discovered"]]
    assert [p["name"] for p in learned] == ["h1"]
    assert [p["name"] for p in repo.load()["ports"].values() if p["srfabric:discovered"]] == ["h1"]


def test_an_sr_unaware_pair_becomes_a_proxied_function_with_its_ports_macs(tmp_path: Path) -> None:
    """correlation None (networking-sfc's default) is SR-unaware: the function is proxied, addressed to its
    ingress port's MAC, its declared rewrites kept (and mirrored for the reverse direction); rewrites on an
    SR-aware pair are refused by name."""
    from srfabric.api.errors import ApiError

    controller = Controller()
    service = SfcService(Repository(open_database(f"sqlite:///{tmp_path}/api.db")), controller)
    controller.fabric.add_switch(Switch(1, "s1"))

    async def scenario() -> dict[str, str]:
        await service.start()
        ports = [await service.create("ports", {"name": f"v-{side}", "device_id": "v", "mac_address": mac,
                                                "binding_profile": {"switch": 1, "port": number}})
                 for side, number, mac in (("in", 3, "02:00:00:00:00:0a"), ("out", 4, "02:00:00:00:00:0b"))]
        with pytest.raises(ApiError, match="service_function_parameters: rewrites are for an SR-unaware"):
            await service.create("port_pairs", {"ingress": ports[0]["id"], "egress": ports[1]["id"],
                                                "service_function_parameters": {"correlation": "mpls",
                                                                                "rewrites": ["ip_src"]}})
        aware = await service.create("port_pairs", {"ingress": ports[0]["id"], "egress": ports[1]["id"],
                                                    "service_function_parameters": {"correlation": "mpls"}})
        await service.delete("port_pairs", aware["id"])
        pair = await service.create("port_pairs", {"ingress": ports[0]["id"], "egress": ports[1]["id"],
                                                   "service_function_parameters": {"rewrites": ["ip_src"]}})
        return {"aware": aware["id"], "pair": pair["id"]}

    made = asyncio.run(scenario())
    functions = controller.fabric.functions
    assert made["aware"] not in functions  # deleted
    forward, back = functions[made["pair"]], functions[made["pair"] + "~rev"]
    assert (forward.proxy, forward.mac, forward.rewrites) == (True, 0x02000000000A, frozenset({"ip_src"}))
    assert (back.proxy, back.mac, back.rewrites) == (True, 0x02000000000B, frozenset({"ip_dst"}))


def test_ipv6_addresses_learned_after_a_host_are_kept_and_not_lost_to_api_changes(tmp_path: Path) -> None:
    from dataclasses import replace

    repo = Repository(open_database(f"sqlite:///{tmp_path}/api.db"))
    controller = Controller()
    service = SfcService(repo, controller)
    fabric = controller.fabric

    async def scenario() -> None:
        await service.start()
        fabric.add_switch(Switch(1, "s1"))
        await service.create("ports", {"name": "h2", "mac_address": "00:00:00:00:00:0b",
                                       "fixed_ips": [{"ip_address": "10.0.0.2"}],
                                       "binding_profile": {"switch": 1, "port": 3}})  # declared by the API
        ends = [await service.create("ports", {"name": f"v-{n}", "device_id": "v", "binding_profile": {
            "switch": 1, "port": n}}) for n in (4, 5)]
        await service.create("port_pairs", {"ingress": ends[0]["id"], "egress": ends[1]["id"]})  # places h2
        fabric.add_host(Host("h1", 0x0A, "10.0.0.1", 1, 2))  # learned: kept as a port at the next sync
        await controller.sync()
        for name, address in (("h1", "fd00::1"), ("h2", "fd00::2")):  # their Neighbour Discovery, later
            fabric.add_host(replace(fabric.hosts[name], ip6=(address,)))
        await controller.sync()
        pairs = service.find_all("port_pairs", {}, [])
        await service.create("port_pair_groups", {"port_pairs": [pairs[0]["id"]]})  # a change that places again

    asyncio.run(scenario())
    assert fabric.hosts["h2"].ip6 == ("fd00::2",)  # the declared host kept what it learned
    kept = {p["name"]: [ip["ip_address"] for ip in p["fixed_ips"]] for p in repo.load()["ports"].values()}
    assert kept["h1"] == ["10.0.0.1", "fd00::1"]  # the learned host's port lists its new address


def test_a_creator_may_choose_the_id_once_per_kind(tmp_path: Path) -> None:
    """The Neutron driver keeps Neutron's ids: a create may name a free id; a taken one is a 409 naming it, and a
    change sent twice (a journal row sent again) cannot make two records."""
    from srfabric.api.errors import ApiError

    service = SfcService(Repository(open_database(f"sqlite:///{tmp_path}/api.db")), Controller())
    chosen = "0c7a8a0e-4bc1-4b1f-9b0e-0d0f3c2a1b11"

    async def scenario() -> tuple[str, int, str, str]:
        await service.start()
        port = await service.create("ports", {"id": chosen, "name": "v-in"})
        with pytest.raises(ApiError) as again:
            await service.create("ports", {"id": chosen, "name": "v-in"})
        other = await service.create("flow_classifiers", {"id": chosen, "protocol": "udp"})  # ids are per kind
        return port["id"], again.value.status, again.value.message, other["id"]

    ident, status, message, other = asyncio.run(scenario())
    assert ident == other == chosen and status == 409 and message == f"Port {chosen} exists already."
    assert [p["id"] for p in service.find_all("ports", {}, [])] == [chosen]
    assert [p["id"] for p in Repository(open_database(f"sqlite:///{tmp_path}/api.db")).load()["ports"].values()] \
        == [chosen]
