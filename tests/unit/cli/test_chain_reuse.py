"""``srfabric chain create --file`` as a new user runs it: chains that share a function reuse its port pair and
the group holding it, as the demo's three chains share v4 (a pair sits in one group only, so a second group for
it would be refused with PortPairInUse). Run against the API's own service."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from srfabric.api.service import SfcService
from srfabric.api.storage.database import open_database
from srfabric.api.storage.repository import Repository
from srfabric.cli.chain import create_chain, delete_chain
from srfabric.controller.controller import Controller
from srfabric.model.fabric import Switch


class InProcessClient:
    """The command line's client (``SfcClient``) on the service itself, without HTTP."""

    def __init__(self, service: SfcService) -> None:
        self.service = service

    def create(self, kind: str, body: dict[str, Any], step: str | None = None) -> dict[str, Any]:
        return asyncio.run(self.service.create(kind, body))

    def list(self, kind: str, **filters: str) -> list[dict[str, Any]]:
        return self.service.find_all(kind, {}, [])

    def show(self, kind: str, ident: str) -> dict[str, Any]:
        return self.service.show(kind, ident, [])

    def delete(self, kind: str, ident: str) -> None:
        asyncio.run(self.service.delete(kind, ident))


def one_switch_fabric(tmp_path: Path) -> SfcService:
    """h1..h3 and functions v1..v4 on one switch (ports 1-3, then two per function)."""
    controller = Controller()
    service = SfcService(Repository(open_database(f"sqlite:///{tmp_path}/api.db")), controller)
    controller.fabric.add_switch(Switch(1, "s1"))

    async def build() -> None:
        await service.start()
        for n in (1, 2, 3):
            await service.create("ports", {"name": f"h{n}", "mac_address": f"02:00:00:00:00:0{n}",
                                           "fixed_ips": [{"ip_address": f"10.0.0.{n}"}],
                                           "binding_profile": {"switch": 1, "port": n}})
        for f in (1, 2, 3, 4):
            for side, offset in (("in", 0), ("out", 1)):
                port = 2 + 2 * f + offset
                await service.create("ports", {"name": f"v{f}-{side}", "device_id": f"v{f}",
                                               "mac_address": f"02:00:00:00:01:{port:02x}",
                                               "binding_profile": {"switch": 1, "port": port}})

    asyncio.run(build())
    return service


def chain(source: str, destination: str, port: int, *functions: str) -> dict[str, Any]:
    return {"source": source, "destination": destination,
            "match_fields": {"protocol": "udp", "destination_port_range_min": port,
                             "destination_port_range_max": port},
            "chain": [{"name": name, "direction": "in"} for name in functions]}


def test_a_third_chain_through_a_function_already_chained_is_made_and_deleted_cleanly(tmp_path: Path) -> None:
    service = one_switch_fabric(tmp_path)
    client = InProcessClient(service)
    create_chain(client, chain("h1", "h3", 5001, "v1", "v3"), "first")
    second = create_chain(client, chain("h1", "h2", 5002, "v2", "v4"), "second")
    third = create_chain(client, chain("h3", "h2", 5003, "v4"), "third")  # v4 is in the second chain
    assert third["port_pair_groups"] == [second["port_pair_groups"][1]]  # v4's group, shared
    assert {c["name"] for c in client.list("port_chains")} == {"first", "second", "third"}
    steered = {c.classifier.destination_port_range: c.alternatives[0].functions  # by port pair, as steered
               for c in service.controller.chains.values()}
    assert len(steered[(5001, 5001)]) == 2 and steered[(5003, 5003)] == steered[(5002, 5002)][1:]  # v4's pair

    delete_chain(client, third)  # v4's group stays: the second chain still uses it
    assert second["port_pair_groups"][1] in {g["id"] for g in client.list("port_pair_groups")}
    delete_chain(client, client.show("port_chains", second["id"]))
    assert len(client.list("port_pair_groups")) == 2 and len(client.list("port_pairs")) == 2  # the first's
