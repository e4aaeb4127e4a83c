"""A change of the API translates what it touched: the chains it did not touch stay the very objects the
controller holds, and a change to what a chain reads (its classifier, a host) makes it again."""

from __future__ import annotations

import asyncio
import contextlib
import random
from pathlib import Path

import pytest

from srfabric.api.errors import ApiError
from srfabric.api.resources.translate import translate
from srfabric.api.service import SfcService
from srfabric.api.storage.database import open_database
from srfabric.api.storage.repository import Repository
from srfabric.controller.controller import Controller
from srfabric.model.fabric import Host
from srfabric_tools.bench.scale_api import function_group, host_ports, one_chain
from srfabric_tools.bench.scale_controller import scale_fabric
from srfabric_tools.testbed.net import controller_config

pytestmark = pytest.mark.timeout(60)


def test_untouched_chains_are_kept_and_touched_ones_made_again(tmp_path: Path) -> None:
    spec = scale_fabric(4)
    controller = Controller(controller_config(spec, "mac-vlan-mpls"))
    controller.fabric = spec.to_fabric()
    service = SfcService(Repository(open_database(f"sqlite:///{tmp_path}/api.db")), controller)

    async def scenario() -> None:
        await service.start()
        hosts = await host_ports(service.create, spec)
        for number in range(3):
            await one_chain(service.create, spec, hosts, number)
        before = dict(controller.chains)
        await one_chain(service.create, spec, hosts, 3)
        assert len(controller.chains) == 4
        assert all(controller.chains[name] is chain for name, chain in before.items())
        fc = next(iter(service.snapshot["flow_classifiers"].values()))
        await service.update("flow_classifiers", fc["id"], {"description": "changed"})
        changed = [name for name, chain in before.items() if controller.chains[name] is not chain]
        assert len(changed) == 1 and controller.chains[changed[0]] == before[changed[0]]  # made again, the same
        kept = dict(controller.chains)
        controller.fabric.add_host(Host("late", 0x0200000000FF, "10.9.9.9", spec.dpid("e1"), 9))
        await one_chain(service.create, spec, hosts, 4)  # a new host may change what any chain's ends resolve to
        assert all(controller.chains[name] == chain and controller.chains[name] is not chain
                   for name, chain in kept.items())

    asyncio.run(scenario())


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_what_a_change_translates_is_what_translating_everything_makes(tmp_path: Path, seed: int) -> None:
    """Chains created, moved to another group, their classifiers renamed, deleted, dry runs and refused writes
    in a seeded order: after each, the controller runs what a translation of every resource from scratch
    makes, in the same order."""
    spec = scale_fabric(4)
    controller = Controller(controller_config(spec, "mac-vlan-mpls"))
    controller.fabric = spec.to_fabric()
    service = SfcService(Repository(open_database(f"sqlite:///{tmp_path}/api.db")), controller)
    rng = random.Random(seed)

    async def step(hosts: dict[str, str], made: list[int]) -> None:
        chains = list(service.snapshot["port_chains"].values())
        action = rng.choice(["create", "move", "rename", "delete", "dry_run", "refused"] if chains else ["create"])
        if action == "create":
            made.append(len(made))
            await one_chain(service.create, spec, hosts, made[-1] + 100)
        elif action == "move":  # to a group of its own, made for it
            group = await function_group(service.create, spec, len(made) + 200 + rng.randrange(1000))
            await service.update("port_chains", rng.choice(chains)["id"], {"port_pair_groups": [group]})
        elif action == "rename":
            fc = rng.choice(list(service.snapshot["flow_classifiers"].values()))
            await service.update("flow_classifiers", fc["id"], {"description": f"now {rng.random()}"})
        elif action == "delete":
            await service.delete("port_chains", rng.choice(chains)["id"])
        elif action == "dry_run":  # a move, answered and not made
            group = await function_group(service.create, spec, len(made) + 200 + rng.randrange(1000))
            await service.check("port_chains", "PUT", rng.choice(chains)["id"], {"port_pair_groups": [group]})
        else:  # a group another chain uses: refused by the checks, nothing changes
            mine, other = rng.choice(chains), rng.choice(chains)
            with contextlib.suppress(ApiError):
                await service.update("port_chains", mine["id"], {"port_pair_groups": other["port_pair_groups"]})

    async def scenario() -> None:
        await service.start()
        hosts = await host_ports(service.create, spec)
        made: list[int] = []
        for _ in range(40):
            await step(hosts, made)
            fresh = translate(service.snapshot.resources, controller.fabric, service.snapshot.switches)
            assert list(controller.chains.items()) == list(fresh.chains.items())

    asyncio.run(scenario())
