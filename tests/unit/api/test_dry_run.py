"""A write with ``?dry_run=true`` answers as the write would, and changes nothing: what the Neutron drivers ask in
their precommit, so that Neutron refuses inside its own transaction what srfabric would refuse."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from srfabric.api.errors import ApiError
from srfabric.api.service import SfcService
from srfabric.api.storage.database import open_database
from srfabric.api.storage.repository import Repository
from srfabric.controller.controller import Controller
from srfabric.model.fabric import Switch


def fabric_with_a_rewriting_function(tmp_path: Path) -> tuple[SfcService, Controller, dict[str, Any]]:
    """One switch: h1 on port 1, h2 on port 2, and an SR-unaware function rewriting the source address on 3/4."""
    controller = Controller()
    service = SfcService(Repository(open_database(f"sqlite:///{tmp_path}/api.db")), controller)
    controller.fabric.add_switch(Switch(1, "s1"))
    made: dict[str, Any] = {}

    async def build() -> None:
        await service.start()
        for name, port, mac, ip in (("h1", 1, "02:00:00:00:00:01", "10.0.0.1"),
                                    ("h2", 2, "02:00:00:00:00:02", "10.0.0.2")):
            made[name] = (await service.create("ports", {
                "name": name, "mac_address": mac, "fixed_ips": [{"ip_address": ip}],
                "binding_profile": {"switch": 1, "port": port}}))["id"]
        ends = [(await service.create("ports", {"name": f"nat-{side}", "device_id": "nat", "mac_address": mac,
                                                "binding_profile": {"switch": 1, "port": port}}))["id"]
                for side, port, mac in (("in", 3, "02:00:00:00:00:0a"), ("out", 4, "02:00:00:00:00:0b"))]
        pair = await service.create("port_pairs", {"ingress": ends[0], "egress": ends[1],
                                                   "service_function_parameters": {"rewrites": ["ip_src"]}})
        made["pair"] = pair["id"]
        made["group"] = (await service.create("port_pair_groups", {"port_pairs": [pair["id"]]}))["id"]
        made["fc"] = (await service.create("flow_classifiers", {
            "protocol": "udp", "logical_source_port": made["h1"], "logical_destination_port": made["h2"]}))["id"]

    asyncio.run(build())
    return service, controller, made


def test_a_dry_run_refuses_what_the_write_would_and_changes_nothing(tmp_path: Path) -> None:
    service, controller, made = fabric_with_a_rewriting_function(tmp_path)
    chain = {"port_pair_groups": [made["group"]], "flow_classifiers": [made["fc"]]}
    before = service.repo.load()

    with pytest.raises(ApiError, match=f"port pair {made['pair']} rewrites") as refused:
        asyncio.run(service.check("port_chains", "POST", None, {**chain, "chain_parameters": {"symmetric": True}}))
    assert refused.value.status == 400
    with pytest.raises(ApiError) as in_use:  # the group holds it
        asyncio.run(service.check("port_pairs", "DELETE", made["pair"], {}))
    assert in_use.value.status == 409

    would = asyncio.run(service.check("port_chains", "POST", None, chain))
    assert would is not None and would["port_pair_groups"] == [made["group"]]
    assert service.find_all("port_chains", {}, []) == [] and controller.chains == {}
    assert service.repo.load()["port_chains"] == before["port_chains"] == {}
    asyncio.run(service.check("flow_classifiers", "DELETE", made["fc"], {}))
    assert made["fc"] in {fc["id"] for fc in service.find_all("flow_classifiers", {}, [])}


def test_streams_are_not_dry_run(tmp_path: Path) -> None:
    service, _, _ = fabric_with_a_rewriting_function(tmp_path)
    with pytest.raises(ApiError, match="dry_run: streams"):
        asyncio.run(service.check("streams", "POST", None, {}))
