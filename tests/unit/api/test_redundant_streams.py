"""Redundant streams (``num_seamless_trees: 2``) through the API's service: two paths that share no link are
chosen (or taken as named), the controller steers both, a time-triggered one and paths sharing a link are
refused by name, and a refused request changes nothing."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from srfabric.api.errors import ApiError
from tests.unit.api.test_streams_service import host_ports, make, state, stream


def test_a_redundant_stream_runs_on_two_paths_that_share_no_link(tmp_path: Path) -> None:
    service, _ = make(tmp_path)

    async def scenario() -> dict[str, Any]:
        await service.start()
        ports = await host_ports(service)
        return await service.create("streams", stream(ports, priority=5, num_seamless_trees=2))

    record = asyncio.run(scenario())
    assert (record["path"], record["second_path"]) == (["s1", "s2", "s5"], ["s1", "s3", "s4", "s5"])
    steered = service.controller.streams[record["id"]]
    assert (steered.path, steered.second_path) == (("s1", "s2", "s5"), ("s1", "s3", "s4", "s5"))


@pytest.mark.parametrize(("fields", "refusal"), [
    ({"priority": 7, "num_seamless_trees": 2}, "num_seamless_trees: 2 is taken for best-effort classes"),
    ({"priority": 5, "num_seamless_trees": 2, "path": ["s1", "s2", "s5"], "second_path": ["s1", "s2", "s5"]},
     "second_path: shares the link s1 - s2 with path"),
    ({"priority": 5, "num_seamless_trees": 2, "path": ["s1", "s2", "s5"]}, "second_path: name both paths"),
    ({"priority": 5, "second_path": ["s1", "s3", "s4", "s5"]}, "second_path: only a stream with"),
])
def test_what_cannot_be_made_redundant_is_refused_by_name_and_changes_nothing(tmp_path: Path, fields: dict[str, Any],
                                                                             refusal: str) -> None:
    service, gates = make(tmp_path)

    async def scenario() -> str:
        await service.start()
        ports = await host_ports(service)
        before = state(service, gates)
        with pytest.raises(ApiError) as refused:
            await service.create("streams", stream(ports, **fields))
        assert state(service, gates) == before
        return refused.value.message

    assert refusal in asyncio.run(scenario())


def test_a_redundant_stream_stays_installed_while_a_link_of_one_path_is_down(tmp_path: Path) -> None:
    service, _ = make(tmp_path)

    async def scenario() -> tuple[str, dict[str, Any]]:
        await service.start()
        ports = await host_ports(service)
        made = await service.create("streams", stream(ports, priority=5, num_seamless_trees=2))
        fabric = service.controller.fabric
        by_name = {switch.name: dpid for dpid, switch in fabric.switches.items()}
        fabric.remove_link((by_name["s1"], fabric.graph().edges[by_name["s1"], by_name["s2"]]["port"]))
        await service.create("streams", stream(ports, "h2", "h4", priority=5, udp_destination_port=5009))
        await service.update("streams", made["id"], {"name": "renamed"})
        return made["id"], dict(service.controller.streams)

    ident, steered = asyncio.run(scenario())
    assert ident in steered and steered[ident].second_path == ("s1", "s3", "s4", "s5")
