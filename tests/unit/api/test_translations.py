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
from srfabric.model.topo import TopoSpec
from srfabric_tools.bench.scale_api import classifier, function_group, host_ports, one_chain
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


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_what_a_change_translates_is_what_translating_everything_makes(tmp_path: Path, seed: int) -> None:
    """Chains created, moved to another group, given another classifier, their groups given another pair, their
    functions' ports bound elsewhere, their classifiers renamed, deleted; hosts added; dry runs and refused writes;
    in a seeded order.
    After each, the controller runs what a translation of every resource from scratch makes, in the same order."""
    spec = scale_fabric(4)
    controller = Controller(controller_config(spec, "mac-vlan-mpls"))
    controller.fabric = spec.to_fabric()
    for name in list(controller.fabric.hosts):  # the hosts are the API's ports alone
        controller.fabric.remove_host(name)
    service = SfcService(Repository(open_database(f"sqlite:///{tmp_path}/api.db")), controller)
    rng = random.Random(seed)

    async def scenario() -> None:
        await service.start()
        hosts = await host_ports(service.create, spec)
        for number in range(60):
            await change(service, spec, rng, hosts, number)
            fresh = translate(service.snapshot.resources, controller.fabric, service.snapshot.switches)
            assert list(controller.chains.items()) == list(fresh.chains.items())
            assert {name: controller.fabric.functions.get(name) for name in fresh.functions} == fresh.functions
            assert {name: controller.fabric.hosts.get(name) for name in fresh.hosts} == fresh.hosts

    asyncio.run(scenario())


async def change(service: SfcService, spec: TopoSpec, rng: random.Random, hosts: dict[str, str], number: int) -> None:
    """One change of the seeded series, drawn by ``rng``."""
    snap = service.snapshot
    chains = list(snap["port_chains"].values())
    actions = ["create", "move", "regroup", "rebind", "reclassify", "rename", "delete", "dry_run", "refused", "host"]
    action = rng.choice(actions if chains else ["create"])
    if action == "create":
        await one_chain(service.create, spec, hosts, number + 100)
    elif action in ("move", "dry_run"):  # to a group of its own, made for it (a dry run: answered, not made)
        group = await function_group(service.create, spec, number + 200)
        ident, body = rng.choice(chains)["id"], {"port_pair_groups": [group]}
        await (service.check("port_chains", "PUT", ident, body) if action == "dry_run"
               else service.update("port_chains", ident, body))
    elif action == "regroup":  # a group in use gets another pair: the pair of a group made for the purpose
        made = await function_group(service.create, spec, number + 300)
        pairs = service.snapshot["port_pair_groups"][made]["port_pairs"]
        await service.delete("port_pair_groups", made)  # a pair belongs to one group
        await service.update("port_pair_groups", rng.choice(chains)["port_pair_groups"][0], {"port_pairs": pairs})
    elif action == "rebind":  # a function's ingress port bound to another function's port (the same switch)
        group = snap["port_pair_groups"][rng.choice(chains)["port_pair_groups"][0]]
        pair = snap["port_pairs"][group["port_pairs"][0]]
        other = rng.choice(list(spec.functions.values()))
        await service.update("ports", pair["ingress"], {"binding_profile": {"switch": spec.dpid(other.switch),
                                                                            "port": other.ingress_port}})
    elif action == "reclassify":  # another classifier, so other chain names
        chain = rng.choice(chains[:-1] or chains)  # not the last: its new names would come last either way
        fc = await classifier(service.create, spec, hosts, number + 400)
        await service.update("port_chains", chain["id"], {"flow_classifiers": [fc]})
    elif action == "rename":
        fc = rng.choice(list(snap["flow_classifiers"].values()))
        await service.update("flow_classifiers", fc["id"], {"description": f"now {number}"})
    elif action == "delete":
        await service.delete("port_chains", rng.choice(chains)["id"])
    elif action == "host":  # a host the API is told about, on a free port of an edge switch
        await service.create("ports", {"name": f"late{number}", "mac_address": f"02:00:00:00:01:{number:02x}",
                                       "fixed_ips": [{"ip_address": f"10.99.0.{number + 1}"}],
                                       "binding_profile": {"switch": spec.dpid("e1"), "port": 50 + number}})
    else:  # a group another chain uses: refused by the checks, nothing changes
        mine, other = rng.choice(chains), rng.choice(chains)
        with contextlib.suppress(ApiError):
            await service.update("port_chains", mine["id"], {"port_pair_groups": other["port_pair_groups"]})
