"""Streams requested together (``POST /v2.0/srfabric/streams`` with a list): admitted as one batch."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from srfabric.api.errors import ApiError
from tests.unit.api.test_dispatch import StubService, error_of, request
from tests.unit.api.test_streams_service import TWO_SLOTS, host_ports, make, stream


def test_a_batch_admits_what_fits_and_lists_the_refused_with_their_reasons(tmp_path: Path) -> None:
    # Two slots: h1's link carries two of the three h1 -> h3 streams; h2 -> h4 fits beside them.
    service, gates = make(tmp_path, TWO_SLOTS)

    async def scenario() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        await service.start()
        ports = await host_ports(service)
        bodies = [stream(ports, udp_destination_port=5001 + i, name=f"s{i}") for i in range(3)]
        bodies.append(stream(ports, "h2", "h4", udp_destination_port=5004, name="other"))
        return await service.create_streams(bodies)

    created, refused = asyncio.run(scenario())
    assert [r["name"] for r in created] == ["s0", "s1", "other"]
    assert [(r["index"], r["name"]) for r in refused] == [(2, "s2")]
    assert refused[0]["reason"].startswith("slot: no slot on any of the 2 candidate path(s) from h1 to h3")
    assert all(r["slot"] is not None and r["path"] for r in created)
    kept = service.repo.load()["streams"]
    assert sorted(r["name"] for r in kept.values()) == ["other", "s0", "s1"]
    assert set(service.controller.streams) == {r["id"] for r in created}
    assert gates.ports and service.streams.view()["last_change"]["gated_ports"] == sorted(gates.ports)


def test_a_bad_item_gets_400_and_changes_nothing(tmp_path: Path) -> None:
    service, _ = make(tmp_path, TWO_SLOTS)

    async def scenario() -> ApiError:
        await service.start()
        ports = await host_ports(service)
        with pytest.raises(ApiError) as refused:
            await service.create_streams([stream(ports), stream(ports, "h2", "h4", period_ns=70_000)])
        assert not service.snapshot["streams"] and not service.controller.streams
        assert not service.repo.load()["streams"]
        return refused.value

    refused = asyncio.run(scenario())
    assert refused.status == 400 and refused.message.startswith("period_ns: 70000 is not one of the periods")


class BulkStub(StubService):
    async def create_streams(self, bodies: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        self._record("create_streams", bodies)
        return [{"id": "a", **bodies[0]}], [{"index": 1, "name": "b", "reason": "slot: full"}]


PORT_A, PORT_B = "0c7a8a0e-4bc1-4b1f-9b0e-0d0f3c2a1b11", "1c7a8a0e-4bc1-4b1f-9b0e-0d0f3c2a1b11"


def test_a_list_body_is_one_bulk_call_answered_with_the_refused() -> None:
    service = BulkStub()
    items = [{"talker": PORT_A, "listener": PORT_B}, {"talker": PORT_B, "listener": PORT_A, "name": "b"}]
    response = request(service, "POST", "/v2.0/srfabric/streams", json={"streams": items})
    assert response.status_code == 201
    assert response.json()["refused"] == [{"index": 1, "name": "b", "reason": "slot: full"}]
    assert [call[0] for call in service.calls] == ["create_streams"]
    assert [body["talker"] for body in service.calls[0][1]] == [PORT_A, PORT_B]


@pytest.mark.parametrize(("body", "message"), [
    ({"streams": []}, "streams: a bulk create takes a list of 1 to 1000 items."),
    ({"streams": {"talker": PORT_A}}, "streams: a bulk create takes a list of 1 to 1000 items."),
    ({"streams": [{"talker": PORT_A, "listener": PORT_B}, {"talker": PORT_A}]},
     "streams[1]: Failed to parse request. Required attribute 'listener' not specified"),
    ({"streams": [{"talker": PORT_A, "listener": PORT_B, "period_ns": -1}]},
     "streams[0]: Invalid input for period_ns."),
    ({"streams": [{"talker": PORT_A, "listener": PORT_B}], "other": 1}, "Unrecognized attribute(s) 'other'"),
])
def test_bad_bulk_bodies_name_the_item_and_field(body: dict[str, Any], message: str) -> None:
    service = BulkStub()
    status, kind, text = error_of(request(service, "POST", "/v2.0/srfabric/streams", json=body))
    assert (status, kind, text[: len(message)]) == (400, "HTTPBadRequest", message)
    assert service.calls == []


def test_other_collections_take_no_list() -> None:
    service = BulkStub()
    status, _, text = error_of(request(service, "POST", "/v2.0/sfc/port_pairs", json={"port_pairs": []}))
    assert status == 400 and "port_pair" in text and service.calls == []
