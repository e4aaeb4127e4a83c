"""The chains of ``bench scale`` through the API: a database filled by the API's checks is loaded as ``serve``
loads it (every chain given to the controller), and the bench's one change is made through the service: the
controller runs the spare chain through one function, then another, then not at all. No switch is connected."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from srfabric.controller.controller import Controller
from srfabric_tools.bench.scale_controller import SPARE, held_by_api, scale_fabric
from srfabric_tools.testbed.net import controller_config

pytestmark = pytest.mark.timeout(120)


def test_held_chains_load_and_the_spare_chain_changes_through_the_service(tmp_path: Path) -> None:
    spec = scale_fabric(4)

    async def scenario() -> list[set[tuple[str, ...]]]:
        controller = Controller(controller_config(spec, "mac-vlan-mpls"))
        api = await held_by_api(controller, spec, 5, tmp_path)
        assert len(controller.chains) == 5 and len(api.service.snapshot["port_chains"]) == 5
        for a, b in spec.to_fabric().links.items():  # what the switches' LLDP would tell it
            controller.fabric.add_link(a, b)
        await api.prepare()
        seen = []
        for change in (api.add, api.update, api.remove):
            await change()
            seen.append({alt.functions for c in controller.chains.values() if c.chain_id & 0xFFFF == 6
                         for alt in c.alternatives})
        api.service.repo.close()
        return seen

    added, updated, removed = asyncio.run(scenario())
    assert len(added) == 1 and len(updated) == 1 and added != updated  # moved to another function
    assert removed == set()
    assert SPARE == "scale-spare"
