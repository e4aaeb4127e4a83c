"""Projects and roles through the API (the ASGI app on a real service): a member of project A cannot list, read,
change, delete or name anything of project B's (a 404, as in Neutron), cannot make resources in B, and cannot
see the operator's views; an admin sees both projects; an unknown token is a 401."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx

from srfabric.api.projects import Principal, TokenBook, digest
from srfabric.api.web.app import create_app
from tests.unit.api.test_streams_service import make

BOOK = TokenBook({digest("admin"): Principal("srfabric", True), digest("alice"): Principal("project-a", False),
                  digest("bob"): Principal("project-b", False)})


def test_a_member_of_one_project_cannot_touch_another_s(tmp_path: Path) -> None:
    service, _ = make(tmp_path)
    app = create_app(service, None, book=BOOK)

    async def scenario() -> dict[str, Any]:
        seen: dict[str, Any] = {}
        transport = httpx.ASGITransport(app=app)  # type: ignore[arg-type]
        async with httpx.AsyncClient(transport=transport, base_url="http://api") as client:
            def as_(token: str) -> dict[str, str]:
                return {"X-Auth-Token": token}

            ports = {}
            for side, number in (("in", 3), ("out", 4)):  # the admin (as Nova would) places alice's ports
                made = await client.post("/v2.0/ports", headers=as_("admin"), json={"port": {
                    "name": f"fw-{side}", "project_id": "project-a", "mac_address": f"02:00:00:00:00:0{number}",
                    "binding:profile": {"switch": "s2", "port": number}}})
                ports[side] = made.json()["port"]
            placed = await client.post("/v2.0/ports", headers=as_("alice"), json={"port": {
                "name": "x", "binding:profile": {"switch": "s2", "port": 5}}})
            seen["alice_places"] = placed.status_code
            seen["bob_takes_mac"] = (await client.post("/v2.0/ports", headers=as_("bob"), json={"port": {
                "name": "y", "mac_address": "02:00:00:00:00:03"}})).json()["NeutronError"]["type"]
            seen["bob_prefix_only"] = (await client.post("/v2.0/sfc/flow_classifiers", headers=as_("bob"), json={
                "flow_classifier": {"protocol": "udp", "source_ip_prefix": "10.0.0.1/32"}})).status_code
            seen["owner"] = ports["in"]["project_id"]
            seen["bob_lists"] = (await client.get("/v2.0/ports", headers=as_("bob"))).json()["ports"]
            seen["bob_shows"] = (await client.get(f"/v2.0/ports/{ports['in']['id']}", headers=as_("bob"))).status_code
            seen["bob_renames"] = (await client.put(f"/v2.0/ports/{ports['in']['id']}", headers=as_("bob"),
                                                    json={"port": {"name": "mine"}})).status_code
            seen["bob_deletes"] = (await client.delete(f"/v2.0/ports/{ports['in']['id']}",
                                                       headers=as_("bob"))).status_code
            pair = await client.post("/v2.0/sfc/port_pairs", headers=as_("bob"), json={"port_pair": {
                "ingress": ports["in"]["id"], "egress": ports["out"]["id"]}})
            seen["bob_pairs"] = (pair.status_code, pair.json()["NeutronError"]["type"])
            elsewhere = await client.post("/v2.0/ports", headers=as_("bob"),
                                          json={"port": {"name": "x", "project_id": "project-a"}})
            seen["bob_elsewhere"] = elsewhere.status_code
            seen["bob_fabric"] = (await client.get("/v2.0/srfabric/fabric", headers=as_("bob"))).status_code
            seen["bob_discovers"] = (await client.get("/v2.0/extensions", headers=as_("bob"))).status_code
            seen["admin_lists"] = sorted(p["project_id"] for p in
                                         (await client.get("/v2.0/ports", headers=as_("admin"))).json()["ports"])
            seen["stranger"] = (await client.get("/v2.0/ports", headers=as_("eve"))).status_code
            seen["alice_pairs"] = (await client.post("/v2.0/sfc/port_pairs", headers=as_("alice"), json={
                "port_pair": {"ingress": ports["in"]["id"], "egress": ports["out"]["id"]}})).status_code
        return seen

    seen = asyncio.run(scenario())
    assert seen["owner"] == "project-a"
    assert seen["bob_lists"] == []
    assert (seen["bob_shows"], seen["bob_renames"], seen["bob_deletes"]) == (404, 404, 404)
    assert seen["bob_pairs"] == (404, "PortNotFound")
    assert (seen["bob_elsewhere"], seen["bob_fabric"], seen["stranger"], seen["bob_discovers"]) == (403, 403, 401, 200)
    assert seen["admin_lists"] == ["project-a", "project-a"]
    assert seen["alice_pairs"] == 201
    assert (seen["alice_places"], seen["bob_takes_mac"], seen["bob_prefix_only"]) == (403, "MacAddressInUse", 403)


def test_a_tokens_file_is_read_and_a_bad_entry_named(tmp_path: Path) -> None:
    import hashlib
    import json

    import pytest

    from srfabric.errors import SrfabricError

    path = tmp_path / "tokens.json"
    path.write_text(json.dumps([{"sha256": hashlib.sha256(b"alice").hexdigest(), "project": "a", "role": "member"}]))
    book = TokenBook.from_file(path, "root")
    assert book.who(b"alice") == Principal("a", False) and book.who(b"root").admin
    for entry, field in (({"sha256": "00", "project": "a", "role": "member"}, "[0].sha256"),
                         ({"sha256": "0" * 64, "project": "", "role": "member"}, "[0].project"),
                         ({"sha256": "0" * 64, "project": "a", "role": "owner"}, "[0].role")):
        path.write_text(json.dumps([entry]))
        with pytest.raises(SrfabricError, match=f"tokens.json{field}".replace("[", r"\[").replace("]", r"\]")):
            TokenBook.from_file(path, None)
