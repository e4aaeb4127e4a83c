"""networking-sfc's usual classifier, a logical source port only, makes a chain that ends at its last function
(no root: a service and a controller without switches)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from srfabric.api.errors import ApiError
from srfabric.api.resources.views import chains_view
from srfabric.api.service import SfcService
from srfabric.api.storage.database import open_database
from srfabric.api.storage.repository import Repository
from srfabric.controller.controller import Controller
from srfabric.model.fabric import Host, Switch


def service_with_function(tmp_path: Path, function_switch: int) -> tuple[SfcService, Controller, dict[str, Any]]:
    """s1 - s2 - s3 with h1 on s1 and h2 on s3 (s2 a transit switch: it writes no headers), an SR-aware function
    v1 on ``function_switch`` (ports 3 and 4) and an SR-unaware one v2 (ports 5 and 6), a group of each, and h1's
    port; returns the service, its controller and the ids made."""
    controller = Controller()
    service = SfcService(Repository(open_database(f"sqlite:///{tmp_path}/api.db")), controller)
    fabric = controller.fabric
    for dpid in (1, 2, 3):
        fabric.add_switch(Switch(dpid, f"s{dpid}", sre=False if dpid == 2 else None))
    fabric.add_link((1, 1), (2, 1))
    fabric.add_link((2, 2), (3, 1))
    fabric.add_host(Host("h1", 0x0A, "10.0.0.1", 1, 2))
    fabric.add_host(Host("h2", 0x0B, "10.0.0.2", 3, 2))

    async def build() -> dict[str, Any]:
        await service.start()
        made = {}
        for name, port in (("v1-in", 3), ("v1-out", 4), ("v2-in", 5), ("v2-out", 6)):
            made[name] = await service.create("ports", {"name": name, "device_id": name[:2], "binding_profile": {
                "switch": function_switch, "port": port}})
        hosts = {p["name"]: p["id"] for p in service.find_all("ports", {}, [])}
        made["group"] = {}
        for function, correlation in (("v1", "mpls"), ("v2", None)):  # SR-aware (the header comes back), SR-unaware
            pair = await service.create("port_pairs", {"ingress": made[f"{function}-in"]["id"],
                                                       "egress": made[f"{function}-out"]["id"],
                                                       "name": str(correlation),
                                                       "service_function_parameters": {"correlation": correlation}})
            made["group"][correlation] = (await service.create("port_pair_groups", {"port_pairs": [pair["id"]]}))["id"]
        return {"group": made["group"]["mpls"], "proxied": made["group"][None], "h1": hosts["h1"]}

    return service, controller, asyncio.run(build())


def test_a_classifier_with_only_a_source_port_makes_a_chain_that_ends_at_its_function(tmp_path: Path) -> None:
    service, controller, ids = service_with_function(tmp_path, 3)

    async def create() -> None:
        classifier = await service.create("flow_classifiers", {"protocol": "udp", "logical_source_port": ids["h1"]})
        await service.create("port_chains", {"name": "open", "port_pair_groups": [ids["group"]],
                                             "flow_classifiers": [classifier["id"]]})

    asyncio.run(create())
    [chain] = chains_view(controller, service.labels())
    assert (chain["source"], chain["destination"], chain["unrouted"]) == ("h1", None, None)
    assert chain["paths"][0]["delivery"] == {"dpid": 3, "port": 4}  # where v1 hands frames back


def test_an_sr_aware_functions_switch_must_write_headers_and_a_symmetric_chain_needs_a_destination(
        tmp_path: Path) -> None:
    service, _, ids = service_with_function(tmp_path, 2)  # s2 cannot write the next header

    async def create(protocol: str, **parameters: Any) -> None:
        classifier = await service.create("flow_classifiers", {"protocol": protocol, "logical_source_port": ids["h1"]})
        await service.create("port_chains", {"port_pair_groups": [ids["group"]], "flow_classifiers": [
            classifier["id"]], **parameters})

    with pytest.raises(ApiError, match=r"switch 0x2, which cannot write headers"):
        asyncio.run(create("tcp"))
    with pytest.raises(ApiError, match=r"chain_parameters.symmetric.*nowhere to start"):
        asyncio.run(create("udp", chain_parameters={"symmetric": True}))
    assert service.find_all("port_chains", {}, []) == []
    # An SR-unaware function hands frames back as a host would: its switch holds default routes (a service leaf).
    asyncio.run(create("icmp", port_pair_groups=[ids["proxied"]]))
    [chain] = chains_view(service.controller, service.labels())
    assert chain["unrouted"] is None
