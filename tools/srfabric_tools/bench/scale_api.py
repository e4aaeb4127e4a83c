"""The chains of ``bench scale`` as an operator makes them: networking-sfc's resources through the API service,
each checked, written to the database and compiled; and the bench's change of one chain (a port chain created,
updated to another function, deleted) made there too, so that its time runs to the last barrier and the commit.

A chain (``scale_controller.chain``) is modelled as networking-sfc models it: a port pair group belongs to one
chain and a port to one pair, so each chain has its function's two ports, a pair and a group of its own, beside
its flow classifier. The hosts' ports are made first (bound to their switch and port).

The chains a size starts with (``prefill``) are made by the API's own checks on one snapshot and written in one
transaction, with the fabric's switches: what a controller restarted on its database finds. One write at a time
through the service, each write translating every chain held, 10,000 chains would take over an hour to make.

Examples
--------
>>> import asyncio
>>> from srfabric_tools.bench.scale_controller import scale_fabric
>>> snap = Snapshot()
>>> made = asyncio.run(prefill_snapshot(snap, scale_fabric(4), 3))
>>> len(snap["port_chains"]), len(snap["ports"])  # 16 hosts' ports, two per chain's function
(3, 22)
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from srfabric.api.resources.kinds import KINDS
from srfabric.api.service import SfcService
from srfabric.api.storage.database import open_database
from srfabric.api.storage.repository import Record, Repository, Snapshot
from srfabric.codecs.macaddr import mac_to_str
from srfabric.model.topo import TopoSpec
from srfabric_tools.bench.scale_controller import chain

Create = Callable[[str, dict[str, Any]], Awaitable[Record]]
PROJECT = "srfabric"
ORDER = ("ports", "port_pairs", "port_pair_groups", "flow_classifiers", "port_chains")  # each refers to the ones before


async def host_ports(create: Create, spec: TopoSpec) -> dict[str, str]:
    """Each host's port: its id by host name."""
    hosts = {}
    for host in sorted(spec.hosts.values(), key=lambda h: h.name):
        made = await create("ports", {"name": host.name, "mac_address": mac_to_str(host.mac),
                                      "fixed_ips": [{"ip_address": host.ip}],
                                      "binding_profile": {"switch": spec.dpid(host.switch), "port": host.port}})
        hosts[host.name] = made["id"]
    return hosts


async def function_group(create: Create, spec: TopoSpec, number: int) -> str:
    """The ``number``-th chain's function as a group of its own (two ports, a pair): the group's id."""
    name = chain(spec, number).functions[0]
    fn = spec.functions[name]
    ends = [await create("ports", {"name": f"{name}-{side}-{number}", "device_id": name,
                                   "binding_profile": {"switch": spec.dpid(fn.switch), "port": port}})
            for side, port in (("in", fn.ingress_port), ("out", fn.egress_port))]
    pair = await create("port_pairs", {"ingress": ends[0]["id"], "egress": ends[1]["id"],
                                       "service_function_parameters": {"correlation": "mpls"}})
    return str((await create("port_pair_groups", {"port_pairs": [pair["id"]]}))["id"])


async def classifier(create: Create, spec: TopoSpec, hosts: dict[str, str], number: int) -> str:
    """The ``number``-th chain's flow classifier: its id."""
    wanted = chain(spec, number)
    low, high = wanted.classifier.destination_port_range or (0, 0)
    made = await create("flow_classifiers", {
        "protocol": "udp", "source_ip_prefix": wanted.classifier.source_ip_prefix,
        "destination_ip_prefix": wanted.classifier.destination_ip_prefix,
        "destination_port_range_min": low, "destination_port_range_max": high,
        "logical_source_port": hosts[wanted.source]})
    return str(made["id"])


async def one_chain(create: Create, spec: TopoSpec, hosts: dict[str, str], number: int) -> float:
    """The ``number``-th chain, all its resources; returns the port chain's create alone, in ms."""
    group = await function_group(create, spec, number)
    fc = await classifier(create, spec, hosts, number)
    began = time.perf_counter()
    await create("port_chains", {"name": chain(spec, number).name, "flow_classifiers": [fc],
                                 "port_pair_groups": [group]})
    return (time.perf_counter() - began) * 1e3


async def prefill_snapshot(snap: Snapshot, spec: TopoSpec, chains: int) -> Snapshot:
    """The hosts' ports and ``chains`` chains made in ``snap`` by the API's checks (nothing translated)."""
    async def create(kind: str, body: dict[str, Any]) -> Record:
        return KINDS[kind].create(snap, body, PROJECT)

    hosts = await host_ports(create, spec)
    for number in range(chains):
        await one_chain(create, spec, hosts, number)
    return snap


async def prefill(url: str, spec: TopoSpec, chains: int) -> float:
    """The database at ``url`` holding the hosts' ports, ``chains`` chains and the fabric's switches (by their
    datapath ids, as the controller keeps them); the seconds it took."""
    began = time.perf_counter()
    repo = Repository(open_database(url))
    try:
        snap = await prefill_snapshot(repo.load(), spec, chains)
        switches = {dpid: (switch.name, str(switch.role)) for dpid, switch in spec.to_fabric().switches.items()}
        with repo.transaction() as db:
            for kind in ORDER:
                for record in snap[kind].values():
                    repo.save(db, kind, record, created=True)
            repo.save_fabric(db, {}, switches)
    finally:
        repo.close()
    return time.perf_counter() - began


@dataclass
class ApiChanges:
    """The bench's one chain (number ``spare``, beyond the ones held), created, moved to the function of chain
    ``spare + 1`` and deleted through ``service``; ``prepare`` makes its groups and classifier first."""

    service: SfcService
    spec: TopoSpec
    spare: int
    name: str
    groups: list[str] = field(default_factory=list)
    fc: str = ""
    port_chain: str = ""  # its id while it exists

    async def prepare(self) -> None:
        ports = self.service.snapshot["ports"].values()
        hosts = {port["name"]: port["id"] for port in ports if port["name"] in self.spec.hosts}
        self.groups = [await function_group(self.service.create, self.spec, n) for n in (self.spare, self.spare + 1)]
        self.fc = await classifier(self.service.create, self.spec, hosts, self.spare)

    async def add(self) -> None:
        made = await self.service.create("port_chains", {"name": self.name, "flow_classifiers": [self.fc],
                                                         "port_pair_groups": [self.groups[0]]})
        self.port_chain = made["id"]

    async def update(self) -> None:
        await self.service.update("port_chains", self.port_chain, {"port_pair_groups": [self.groups[1]]})

    async def remove(self) -> None:
        await self.service.delete("port_chains", self.port_chain)
        self.port_chain = ""
