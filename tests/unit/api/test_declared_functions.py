"""The fabric view shows a service function as soon as its ports exist (as ``srfabric up`` makes them), before
any port pair uses it; once a pair does, it is the controller's and is shown once."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.unit.api.test_streams_service import make


def test_a_function_s_ports_show_it_before_any_port_pair(tmp_path: Path) -> None:
    service, _ = make(tmp_path)

    async def scenario() -> tuple[list[dict[str, object]], list[dict[str, object]]]:
        await service.start()
        made = {}
        for side, port in (("in", 5), ("out", 6)):
            made[side] = await service.create("ports", {"name": f"v1-{side}", "device_id": "v1",
                                                        "device_owner": "network:sf",
                                                        "binding_profile": {"switch": "s2", "port": port}})
        before = service.fabric_view()["functions"]
        await service.create("port_pairs", {"ingress": made["in"]["id"], "egress": made["out"]["id"]})
        return before, service.fabric_view()["functions"]

    before, after = asyncio.run(scenario())
    assert [(f["name"], f["ingress"], f["egress"], f.get("declared")) for f in before] == [
        ("v1", {"dpid": 2, "port": 5}, {"dpid": 2, "port": 6}, True)]
    assert len(after) == 1 and not after[0].get("declared")
